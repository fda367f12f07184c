#include "server/storage_command.h"

#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "base/rng.h"
#include "broker/meta_properties.h"
#include "io/posix_file_system.h"
#include "io/posix_runtime.h"
#include "model/uuid.h"
#include "server/server_args.h"

namespace samsa {
namespace {

const char* usage() {
  return "usage: samsa storage format --cluster-id ID --config FILE [--ignore-formatted] [--standalone]\n"
         "       samsa storage random-uuid\n"
         "  format        write meta.properties (cluster.id, node.id, directory.id) into every log dir and\n"
         "                the metadata log dir of the node FILE configures, as kafka-storage.sh format\n"
         "    -t, --cluster-id ID      the cluster's id (samsa storage random-uuid makes one)\n"
         "    -c, --config FILE        the node's server.properties\n"
         "    -g, --ignore-formatted   skip dirs already formatted instead of failing\n"
         "    -s, --standalone         a controller that is the only voter of a new dynamic quorum\n"
         "  random-uuid   print a new cluster id";
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "%s\n%s\n", message.c_str(), usage());
  return 2;
}

// The OS's randomness, drawn the one way the server draws a node's seed.
Rng fresh_rng() { return Rng(os_random_seed()); }

struct FormatArgs {
  std::optional<std::string> cluster_id;
  std::optional<std::string> config_path;
  FormatOptions options;
  bool help = false;
};

// The arguments after `storage format`, or the usage error's message.
Result<FormatArgs> parse_format_args(int argc, char** argv) {
  FormatArgs out;
  for (int i = 2; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> Result<std::string> {
      if (i + 1 >= argc) return Error(ErrorKind::kInvalidArgument, std::string(a) + " needs a value");
      return std::string(argv[++i]);
    };
    if (a == "-h" || a == "--help") {
      out.help = true;
    } else if (a == "-t" || a == "--cluster-id") {
      ASSIGN_OR_RETURN(out.cluster_id, value());
    } else if (a == "-c" || a == "--config") {
      ASSIGN_OR_RETURN(out.config_path, value());
    } else if (a == "-g" || a == "--ignore-formatted") {
      out.options.ignore_formatted = true;
    } else if (a == "-s" || a == "--standalone") {
      out.options.standalone = true;
    } else {
      return Error(ErrorKind::kInvalidArgument, "unknown argument " + std::string(a));
    }
  }
  return out;
}

int run_format(int argc, char** argv) {
  auto args = parse_format_args(argc, argv);
  if (!args.ok()) return usage_error(args.error().message());
  if (args->help) {
    std::printf("%s\n", usage());
    return 0;
  }
  if (!args->cluster_id) return usage_error("argument --cluster-id/-t is required");
  if (!args->config_path) return usage_error("argument --config/-c is required");
  ServerArgs server_args;
  server_args.config_path = args->config_path;
  auto config = load_broker_config(server_args);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.error().message().c_str());
    return 1;
  }
  args->options.cluster_id = *args->cluster_id;
  Rng rng = fresh_rng();
  PosixFileSystem files;
  auto lines = format_storage(files, *config, args->options, rng);
  if (!lines.ok()) {
    std::fprintf(stderr, "%s\n", lines.error().message().c_str());
    return 1;
  }
  for (const auto& line : *lines) std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace

int run_storage(int argc, char** argv) {
  if (argc < 2) return usage_error("a command is required: format or random-uuid");
  std::string_view command = argv[1];
  if (command == "-h" || command == "--help") {
    std::printf("%s\n", usage());
    return 0;
  }
  if (command == "format") return run_format(argc, argv);
  if (command == "random-uuid") {
    if (argc > 2) return usage_error("random-uuid takes no arguments");
    Rng rng = fresh_rng();
    std::printf("%s\n", Uuid::random(rng).to_string().c_str());
    return 0;
  }
  return usage_error("unknown command " + std::string(command));
}

}  // namespace samsa
