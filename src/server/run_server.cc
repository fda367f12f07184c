#include "server/run_server.h"

#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "base/log.h"
#include "broker/listeners.h"
#include "broker/service.h"
#include "io/posix_runtime.h"
#include "io/signal_watcher.h"
#include "server/cluster_support.h"
#include "server/listener_exposure.h"
#include "server/server_args.h"

namespace samsa {
namespace {

ServiceFactory& factory_slot() {
  static ServiceFactory factory;
  return factory;
}

void log_config(const BrokerConfig& config) {
  for (const auto& [name, entry] : config.values().entries()) {
    if (entry.source == ConfigSource::kDefault) continue;
    auto shown = config.values().describe_value(name);
    LOG_INFO("config", "{} = {}", name, shown ? *shown : (entry.sensitive ? "[hidden]" : "null"));
  }
}

// Everything after the config is valid. Returns the exit code.
int serve(BrokerConfig& config) {
  ignore_sigpipe();
  // The node's seed from the OS: every Rng of the broker starts from it.
  auto runtime_or = PosixRuntime::create(os_random_seed());
  if (!runtime_or.ok()) {
    LOG_ERROR("server", "cannot create the runtime: {}", runtime_or.error().to_string());
    return 1;
  }
  std::unique_ptr<PosixRuntime> runtime = std::move(runtime_or).value();
  // First, before the service can start threads (the runtime's blocking
  // executor starts its thread when first used): they inherit the mask.
  // The first signal lets the service prepare (a cluster's controlled
  // shutdown); a second one stops at once. Either way the shutdown after
  // the loop is the clean one.
  Service* running = nullptr;  // set once started
  bool stopping = false;
  auto signals = SignalWatcher::create(runtime->loop(), {SIGINT, SIGTERM}, [&](int signo) {
    const char* name = signo == SIGINT ? "SIGINT" : "SIGTERM";
    if (stopping || !running) {
      LOG_INFO("server", "received {}, shutting down now", name);
      return runtime->stop();
    }
    stopping = true;
    LOG_INFO("server", "received {}, shutting down", name);
    running->begin_shutdown([&runtime] { runtime->stop(); });
  });
  if (!signals.ok()) {
    LOG_ERROR("server", "cannot watch signals: {}", signals.error().to_string());
    return 1;
  }
  if (!factory_slot()) {
    LOG_ERROR("server", "no broker service is linked into this binary (set_service_factory was not called)");
    return 1;
  }
  std::unique_ptr<Service> service = factory_slot()();
  auto listeners = BrokerListeners::start(*runtime, config, service->sink(), service->controller_sink());
  if (!listeners.ok()) {
    LOG_ERROR("server", "{}", listeners.error().message());
    return 1;
  }
  // Until authentication exists (issue 10, item 11).
  for (const auto& listener : config.listeners) {
    if (auto warning = exposure_warning(listener)) LOG_WARN("server", "{}", *warning);
  }
  Status started = service->start(*runtime, config);
  if (!started.ok()) {
    LOG_ERROR("server", "startup failed: {}", started.error().to_string());
    listeners->reset();
    service->shutdown();
    return 1;
  }
  running = service.get();
  LOG_INFO("server", "samsa node {} started (roles {})", config.node_id.value(),
           fmt::format("{}", fmt::join(config.process_roles, ",")));
  runtime->run();
  listeners->reset();  // closes every connection; the sink sees on_close for each
  signals->reset();   // a second Ctrl-C now interrupts a slow shutdown
  service->shutdown();
  service.reset();
  LOG_INFO("server", "samsa node {} shut down", config.node_id.value());
  return 0;
}

// log.dirs and metadata.log.dir as absolute paths, resolved once here (the
// process entry knows its working directory; the layers below ask the OS
// nothing), as Kafka's LogManager makes them absolute at startup: what
// DescribeLogDirs reports and what every log message names.
void make_log_dirs_absolute(BrokerConfig& config) {
  auto absolute = [](const std::string& dir) {
    std::error_code ec;
    std::filesystem::path path = std::filesystem::absolute(dir, ec);
    return ec ? dir : path.lexically_normal().string();
  };
  for (std::string& dir : config.log_dirs) dir = absolute(dir);
  config.metadata_log_dir = absolute(config.metadata_log_dir);
}

}  // namespace

void set_service_factory(ServiceFactory factory) { factory_slot() = std::move(factory); }

int run_server(int argc, char** argv) {
  auto args = parse_server_args(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "%s\n", args.error().message().c_str());
    return 1;
  }
  if (args->help) {
    std::printf("%s\n", server_usage());
    return 0;
  }
  auto config = load_broker_config(*args);
  if (!config.ok()) {
    LOG_ERROR("config", "{}", config.error().message());
    return 1;
  }
  if (Status supported = check_supported_cluster(*config); !supported.ok()) {
    LOG_ERROR("config", "{}", supported.error().message());
    return 1;
  }
  make_log_dirs_absolute(*config);
  log_config(*config);
  return serve(*config);
}

}  // namespace samsa
