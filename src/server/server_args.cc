#include "server/server_args.h"

#include <string_view>

#include "base/log.h"
#include "config/properties.h"

namespace samsa {
namespace {

Error usage_error(const std::string& message) {
  return Error(ErrorKind::kInvalidArgument, message + "\n" + server_usage());
}

Status add_override(ServerArgs& out, std::string_view kv) {
  size_t eq = kv.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return usage_error("--override expects key=value, got '" + std::string(kv) + "'");
  }
  out.overrides.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  return ok_status();
}

}  // namespace

const char* server_usage() {
  return "usage: samsa server [--config FILE | FILE] [--override key=value]...\n"
         "  --config FILE          Java .properties file with Kafka's server.properties keys\n"
         "  --override key=value   set one key (repeatable; wins over the file)\n"
         "With no file every key takes its default, except the internal topics' replication factors, which are 1\n"
         "(offsets.topic.replication.factor, transaction.state.log.replication.factor and min.isr, as in Kafka's\n"
         "quickstart server.properties): a single-node cluster on 127.0.0.1:9092 storing in ./data.";
}

Result<ServerArgs> parse_server_args(int argc, const char* const* argv) {
  ServerArgs out;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string_view flag) -> Result<std::string> {
      if (i + 1 >= argc) return usage_error(std::string(flag) + " needs a value");
      return std::string(argv[++i]);
    };
    if (a == "-h" || a == "--help") {
      out.help = true;
    } else if (a == "--config") {
      ASSIGN_OR_RETURN(std::string path, value(a));
      if (out.config_path) return usage_error("more than one config file given");
      out.config_path = path;
    } else if (a.starts_with("--config=")) {
      if (out.config_path) return usage_error("more than one config file given");
      out.config_path = std::string(a.substr(9));
    } else if (a == "--override") {
      ASSIGN_OR_RETURN(std::string kv, value(a));
      RETURN_IF_ERROR(add_override(out, kv));
    } else if (a.starts_with("--override=")) {
      RETURN_IF_ERROR(add_override(out, a.substr(11)));
    } else if (a.starts_with("-")) {
      return usage_error("unknown option " + std::string(a));
    } else {
      if (out.config_path) return usage_error("more than one config file given");
      out.config_path = std::string(a);
    }
  }
  return out;
}

Result<BrokerConfig> load_broker_config(const ServerArgs& args) {
  // No file: the quickstart's single-node values; a file says for itself.
  Properties props = BrokerConfig::single_node_defaults();
  if (args.config_path) {
    ASSIGN_OR_RETURN(props, load_properties_file(*args.config_path));
  }
  for (const auto& [k, v] : args.overrides) props[k] = v;
  ASSIGN_OR_RETURN(BrokerConfig config, BrokerConfig::from_properties(props));
  for (const auto& key : config.unknown_keys()) {
    LOG_WARN("config", "The configuration '{}' was supplied but isn't a known config.", key);
  }
  return config;
}

}  // namespace samsa
