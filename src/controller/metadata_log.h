#pragma once
// MetadataLog: the seam through which metadata records are committed and
// through which every node learns what was committed (KIP-631's metadata
// log). The controller proposes batches of records; the log makes them
// durable (one node: append + fsync; a quorum: Raft) and then publishes each
// committed batch, in log order, to the image it owns and to its listeners.
//
// Two implementations: LocalMetadataLog (a single node commits alone,
// local_metadata_log.h) and RaftMetadataLog (raft_metadata_log.h).
// docs/decisions/0016-metadata-log-seam.md says why there are two.
//
// Contract:
// - propose(tag, records, done): `done` is called exactly once, on the loop
//   thread, now or later: with the offset of the batch once it is committed
//   and published (listeners have seen it, image() has it), or with an
//   Error: not_controller() (this node is not, or stopped being, the active
//   controller; the records may still commit under a new leader, as in
//   Kafka) or any other kind (the log could not persist them).
// - A published batch carries the `tag` it was proposed with when it was
//   proposed through this object, 0 otherwise (a batch of another leader, a
//   replay at start). Tags are the proposer's; 0 is not one.
// - Listeners are called in the order they were added, after the image has
//   applied the batch. They must not propose from inside the callback.
// - Offsets: a position in the metadata log that only grows (the local log:
//   the batch's last record offset; the quorum: the Raft index of the entry).
//
// Loop-thread only.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "controller/metadata_image.h"

namespace samsa {

class MetadataListener {
 public:
  virtual ~MetadataListener() = default;
  // One committed batch: image() already includes it.
  virtual void on_committed(Offset offset, const std::vector<MetadataRecord>& records, uint64_t tag) = 0;
  // The image was rebuilt from a snapshot (KIP-630) at `offset`: everything
  // known before is replaced; act on the whole image.
  virtual void on_snapshot(Offset offset) { (void)offset; }
};

using ProposeDone = std::function<void(Result<Offset>)>;

class MetadataLog {
 public:
  virtual ~MetadataLog() = default;

  // Whether this node may propose now: it is the active controller and its
  // image holds everything committed before its leadership.
  virtual bool active() const = 0;
  virtual void propose(uint64_t tag, std::vector<MetadataRecord> records, ProposeDone done) = 0;
  virtual Status shutdown() = 0;
  // Graceful shutdown: if this node leads a quorum, hand the leadership on
  // (Raft: EndQuorumEpoch) and call `done` once another node leads, or after
  // `bound_ms`; at once, from inside the call, when there is nothing to
  // hand on (the default: a single node's local log, an observer).
  virtual void resign(int64_t bound_ms, std::function<void()> done) {
    (void)bound_ms;
    done();
  }

  const MetadataImage& image() const { return image_; }
  void add_listener(MetadataListener* listener) { listeners_.push_back(listener); }
  void remove_listener(MetadataListener* listener);

  // The error of a proposal refused or abandoned because this node is not
  // the active controller (Kafka's NOT_CONTROLLER).
  static Error not_controller(std::string why);
  static bool is_not_controller(const Error& error);

 protected:
  // Applies a committed batch to the image, then tells the listeners.
  void publish(Offset offset, const std::vector<MetadataRecord>& records, uint64_t tag);
  // Replaces the image by the one these records build (a snapshot).
  void publish_snapshot(Offset offset, const std::vector<MetadataRecord>& records);
  // The image as a snapshot's data: the records that rebuild it, as one
  // batch (empty for an empty image); nullopt, logged, if it cannot be encoded.
  std::optional<Bytes> encode_image_snapshot(int64_t wall_ms) const;

 private:
  MetadataImage image_;
  std::vector<MetadataListener*> listeners_;
};

}  // namespace samsa
