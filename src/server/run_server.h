#pragma once
// run_server: the `samsa server` process.
//
//   samsa server [--config FILE | FILE] [--override key=value]... [--help]
//
// argv[0] is the subcommand's name (the CLI calls run_server(argc - 1,
// argv + 1) for "samsa server ..."). Reads FILE as Java .properties (none:
// every key at its default, a working single node on 127.0.0.1:9092), applies
// overrides (later wins), validates (unknown keys: a warning each, like
// Kafka; invalid values: an error naming key and value, exit code 1), refuses
// what Samsa cannot run yet (cluster_support.h: exit code 1), binds
// every listener, starts the Service from set_service_factory(), and runs the
// event loop on the calling thread until SIGINT or SIGTERM; then closes the
// listeners and connections, calls Service::shutdown(), and returns 0.
// Must be called before the process starts other threads (signals are
// blocked here and inherited).

#include "broker/service.h"

namespace samsa {

int run_server(int argc, char** argv);

// Set by the binary (src/cli/samsa_main.cc: a Broker) before run_server();
// tests set a stand-in. Without one, run_server fails with a clear message.
void set_service_factory(ServiceFactory factory);

}  // namespace samsa
