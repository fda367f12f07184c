#pragma once
// Command line of `samsa server` and turning it into a BrokerConfig.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "config/broker_config.h"

namespace samsa {

struct ServerArgs {
  std::optional<std::string> config_path;
  std::vector<std::pair<std::string, std::string>> overrides;  // in command-line order
  bool help = false;
};

// argv[0] is the subcommand name and is skipped. Accepts --config FILE,
// --config=FILE, a lone positional FILE (Kafka's kafka-server-start.sh
// style), --override key=value / --override=key=value, -h/--help.
Result<ServerArgs> parse_server_args(int argc, const char* const* argv);

const char* server_usage();

// File (if any) plus overrides -> validated config. Logs a WARN per unknown
// key, like Kafka ("The configuration 'x' was supplied but isn't a known
// config.").
Result<BrokerConfig> load_broker_config(const ServerArgs& args);

}  // namespace samsa
