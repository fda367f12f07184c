#pragma once
// The contract between a Kafka connection (io/) and whoever answers requests
// (broker/). Deliberately tiny: the connection knows framing and ordering,
// the sink knows the protocol.
//
// - on_frame() is called on the loop thread for each complete request frame,
//   in arrival order. `frame` holds the request header and body, WITHOUT the
//   4-byte size prefix, in its own heap buffer that the sink may modify in
//   place (produce patches batch offsets) and keep for as long as it likes.
// - `reply` must be called exactly once per frame, on the loop thread, either
//   inside on_frame() or later (delayed fetch, acks=all). The connection
//   sends replies strictly in `sequence` order: a completed later reply waits
//   for earlier ones. Calling `reply` after the connection closed is
//   harmless (the reply is dropped).
//   kSend: send `payload` (the whole response INCLUDING its 4-byte size
//          prefix, already patched by the encoder).
//   kNoReply: send nothing for this request (produce with acks=0).
//   kClose: send nothing more; close once earlier replies have been flushed.
// - on_close() is called once when the connection is gone (peer closed, error,
//   kClose, shutdown); replies still outstanding for it will be dropped.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/bytes.h"
#include "base/out_buffer.h"

namespace samsa {

struct InboundFrame {
  uint64_t connection_id = 0;
  uint64_t sequence = 0;  // 0, 1, 2, ... per connection
  std::shared_ptr<Bytes> frame;
  std::string peer;  // "ip:port" of the client
};

enum class ReplyKind { kSend, kNoReply, kClose };

struct Reply {
  ReplyKind kind = ReplyKind::kSend;
  OutBuffer payload;
};

using ReplyFn = std::function<void(Reply)>;

class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void on_frame(InboundFrame frame, ReplyFn reply) = 0;
  virtual void on_close(uint64_t connection_id) { (void)connection_id; }
};

}  // namespace samsa
