#include "broker/listeners.h"

#include <algorithm>

#include "base/log.h"
#include "io/byte_budget.h"

namespace samsa {
namespace {

// A LONG byte limit where <= 0 means unbounded (Kafka's convention for
// queued.max.request.bytes).
size_t byte_limit(const BrokerConfig& config, const char* key) {
  int64_t v = config.values().get_long(key);
  return v <= 0 ? ByteBudget::kUnbounded : size_t(v);
}

struct SharedBudgets {
  std::shared_ptr<ByteBudget> requests;
  std::shared_ptr<ByteBudget> responses;
};

SharedBudgets make_budgets(Runtime& runtime, const BrokerConfig& config) {
  SharedBudgets b{ByteBudget::create(runtime, byte_limit(config, "queued.max.request.bytes")),
                  ByteBudget::create(runtime, byte_limit(config, "queued.max.response.bytes"))};
  // After a burst (a flood of large requests, slow readers closing), give
  // the freed heap back: glibc keeps it otherwise (M_TRIM_THRESHOLD).
  b.requests->set_on_freed(return_free_heap_to_os);
  b.responses->set_on_freed(return_free_heap_to_os);
  return b;
}

FrameServerOptions options_for(const BrokerConfig& config, const ListenerConfig& listener,
                               const SharedBudgets& budgets, const std::shared_ptr<ConnectionIds>& ids) {
  FrameServerOptions o;
  o.host = listener.endpoint.host;
  o.port = listener.endpoint.port;
  o.limits.max_request_bytes = config.socket_request_max_bytes;
  o.limits.max_in_flight = size_t(config.queued_max_requests);
  o.limits.max_queued_write_bytes = byte_limit(config, "queued.max.response.bytes.per.connection");
  o.limits.request_bytes = budgets.requests;
  o.limits.response_bytes = budgets.responses;
  o.max_connections = size_t(config.max_connections);
  o.socket_send_buffer_bytes = config.socket_send_buffer_bytes;
  o.socket_receive_buffer_bytes = config.socket_receive_buffer_bytes;
  o.connections_max_idle_ms = config.values().get_long("connections.max.idle.ms");
  o.ids = ids;
  return o;
}

}  // namespace

Result<std::unique_ptr<BrokerListeners>> BrokerListeners::start(Runtime& runtime, BrokerConfig& config,
                                                                 FrameSink& sink, FrameSink& controller_sink) {
  std::unique_ptr<BrokerListeners> out(new BrokerListeners());
  SharedBudgets budgets = make_budgets(runtime, config);
  auto ids = std::make_shared<ConnectionIds>();
  for (const auto& listener : std::vector<ListenerConfig>(config.listeners)) {
    const auto& names = config.controller_listener_names;
    bool controller = std::find(names.begin(), names.end(), listener.endpoint.name) != names.end();
    auto server =
        FrameServer::start(runtime, options_for(config, listener, budgets, ids), controller ? controller_sink : sink);
    if (!server.ok()) {
      return Error(server.error().kind(),
                   "cannot listen on " + listener.endpoint.to_string() + ": " + server.error().message());
    }
    config.set_bound_port(listener.endpoint.name, (*server)->port());
    LOG_INFO("server", "listening on {} ({})", (*server)->address(), listener.endpoint.name);
    out->servers_.push_back(std::move(server).value());
  }
  return out;
}

}  // namespace samsa
