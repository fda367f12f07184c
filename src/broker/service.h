#pragma once
// Service: what run_server() (server/, the process entry above this layer)
// runs. The broker layer defines it and implements it (Broker: storage,
// controller, groups, request handlers); run_server owns the process edge
// (config file, listeners, signals) and knows nothing of Kafka APIs. The
// interface lives here, not in server/, so that dependencies point downward:
// server/ includes broker/, never the other way round.
//
// Sequence, all on the loop thread:
//   factory()            construct; no I/O yet
//   sink()               the FrameSink every listener feeds (asked once,
//                        before start; must stay valid until destruction)
//   controller_sink()    the same for the controller listeners
//                        (controller.listener.names); default: sink()
//   start(runtime, config) open storage, start timers, ...; listeners are
//                        bound (config carries the real ports of port-0
//                        listeners) but no frame arrives before start returns.
//                        An error aborts startup: shutdown() is still called
//                        (to undo a partial start), then exit code 1.
//   ... loop runs; frames arrive at sink() ...
//   begin_shutdown(ready) SIGINT/SIGTERM arrived: prepare to stop (a
//                        cluster's broker hands its leaderships over), then
//                        call `ready` (the loop stops). A second signal stops
//                        the loop without waiting. Default: ready at once.
//   shutdown()           after the loop stopped: the loop has stopped and every
//                        connection is closed (on_close was called for each);
//                        flush and close storage here. Synchronous.
//   ~Service()
// `config` and `runtime` outlive the service: everything the service does
// to the world (time, timers, network, files, blocking work, its seed) goes
// through `runtime`.

#include <functional>
#include <memory>

#include "base/result.h"
#include "io/runtime.h"
#include "io/frame_sink.h"
#include "config/broker_config.h"

namespace samsa {

class Service {
 public:
  virtual ~Service() = default;
  virtual FrameSink& sink() = 0;
  virtual FrameSink& controller_sink() { return sink(); }
  virtual Status start(Runtime& runtime, const BrokerConfig& config) = 0;
  virtual void begin_shutdown(std::function<void()> ready) { ready(); }
  virtual void shutdown() = 0;
};

using ServiceFactory = std::function<std::unique_ptr<Service>()>;

}  // namespace samsa
