#pragma once
// BrokerListeners: one FrameServer per configured listener, feeding the
// broker's sink, or the controller's for the listeners named in
// controller.listener.names (Kafka serves different APIs there), and sharing one request budget, one response budget and one
// connection numbering (queued.max.request.bytes, queued.max.response.bytes
// are per process, as in Kafka). The same wiring serves `samsa server`
// (run_server, on the real runtime) and the broker simulation (on a
// simulated one). A port-0 listener's real port is written back into the
// config (set_bound_port) so that the broker advertises it.
//
// Loop-thread only. Destruction closes every connection (the sink sees
// on_close for each).

#include <memory>
#include <vector>

#include "base/result.h"
#include "config/broker_config.h"
#include "io/frame_server.h"
#include "io/frame_sink.h"
#include "io/runtime.h"

namespace samsa {

class BrokerListeners {
 public:
  static Result<std::unique_ptr<BrokerListeners>> start(Runtime& runtime, BrokerConfig& config, FrameSink& sink,
                                                         FrameSink& controller_sink);
  const std::vector<std::unique_ptr<FrameServer>>& servers() const { return servers_; }

 private:
  BrokerListeners() = default;
  std::vector<std::unique_ptr<FrameServer>> servers_;
};

}  // namespace samsa
