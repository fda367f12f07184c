#pragma once
// Controller: the active controller's write path (Kafka's QuorumController),
// asynchronous. A change is planned against view() — the committed image
// plus the records still in flight, so a second CreateTopics for a name
// whose creation is not committed yet gets TOPIC_ALREADY_EXISTS and
// placement sees the partitions on their way — then proposed to the
// MetadataLog; its callback completes when the records commit:
//   - nullopt: committed (and published: the image has it);
//   - the plan's ControllerError: refused, nothing proposed;
//   - NOT_CONTROLLER: this node is not the active controller, or stopped
//     being it before the records committed (they may still commit under the
//     new leader: a retry then finds them, as with Kafka);
//   - KAFKA_STORAGE_ERROR: the log could not persist them;
//   - REQUEST_TIMED_OUT: not committed within timeout_ms (> 0); the records
//     stay in flight and may still commit.
// A failure abandons every change in flight from the view (the later ones
// were planned on top of it; a quorum fails them all anyway, as Kafka's
// controller renounces and reverts to the committed state).
//
// Callbacks run on the loop thread, inside submit() when the outcome is
// known at once (a refused plan, the single-node log), later otherwise.
// A Controller destroyed with changes in flight drops their callbacks.
//
// Loop-thread only; the Runtime and the MetadataLog must outlive it.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "controller/metadata_log.h"
#include "controller/topic_planner.h"
#include "io/runtime.h"

namespace samsa {

using ControllerDone = std::function<void(std::optional<ControllerError>)>;
// Plans one change against the image it is given (the controller's view).
using PlanFn = std::function<Plan(const MetadataImage& view)>;

class Controller final : public MetadataListener {
 public:
  Controller(Runtime& runtime, MetadataLog& log);
  ~Controller() override;
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  bool active() const { return log_.active(); }
  // The committed image plus the records in flight.
  const MetadataImage& view() const { return projected_ ? *projected_ : log_.image(); }
  // Changes proposed and neither committed nor failed yet.
  size_t in_flight() const { return in_flight_.size(); }

  // Plans against view(), proposes, and calls `done` with the outcome (see
  // above). `what` names the change in logs. timeout_ms <= 0: no deadline.
  void submit(std::string what, const PlanFn& plan, int64_t timeout_ms, ControllerDone done);
  // validate_only: the plan against view(), nothing proposed. NOT_CONTROLLER
  // when this node is not the active controller.
  Plan dry_run(const PlanFn& plan) const;

  // MetadataListener
  void on_committed(Offset offset, const std::vector<MetadataRecord>& records, uint64_t tag) override;
  void on_snapshot(Offset offset) override;

 private:
  struct InFlight {
    uint64_t tag;
    std::vector<MetadataRecord> records;
  };
  struct Waiting {
    std::string what;
    ControllerDone done;
    TimerId timer = 0;
  };

  void on_proposal_done(uint64_t tag, const Result<Offset>& result);
  void on_timeout(uint64_t tag);
  void complete(uint64_t tag, std::optional<ControllerError> outcome);
  void abandon_in_flight();

  Runtime& runtime_;
  MetadataLog& log_;
  std::deque<InFlight> in_flight_;           // in proposal order
  std::optional<MetadataImage> projected_;   // log image + in_flight_; only while something is in flight
  std::map<uint64_t, Waiting> waiting_;      // callbacks not called yet
  uint64_t next_tag_ = 1;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for the log's late callbacks
};

}  // namespace samsa
