// `samsa cluster describe`: the brokers, the active controller, the
// partition health counts and the metadata quorum (cli/cluster_description.h)
// over the wire protocol (Metadata, DescribeQuorum: cli/wire_client.h).

#include <cstdio>
#include <string>

#include "cli/action_table.h"
#include "cli/arg_parser.h"
#include "cli/cluster_description.h"
#include "cli/commands.h"
#include "cli/kafka_client.h"

namespace samsa::cli {
namespace {

struct DescribeArgs {
  std::string bootstrap_server = kDefaultBootstrap;
  std::string bootstrap_controller;
  bool json = false;
  int64_t timeout_ms = 10000;
};

Result<ClusterDescription> describe(const DescribeArgs& args) {
  int timeout_ms = int(args.timeout_ms);
  ASSIGN_OR_RETURN(std::vector<HostPort> brokers, parse_host_port_list(args.bootstrap_server));
  ASSIGN_OR_RETURN(WireClient client, WireClient::connect_any(brokers, timeout_ms));
  ASSIGN_OR_RETURN(ClusterMetadata metadata, fetch_cluster_metadata(client));
  std::vector<HostPort> quorum_first = {client.address()};
  if (!args.bootstrap_controller.empty()) {
    ASSIGN_OR_RETURN(quorum_first, parse_host_port_list(args.bootstrap_controller));
  }
  auto quorum = fetch_quorum_status(quorum_first, &metadata, timeout_ms);
  if (!quorum.ok()) return describe_cluster(metadata, std::nullopt, quorum.error().message());
  return describe_cluster(metadata, std::move(quorum).value(), "");
}

int cluster_describe(int argc, char** argv) {
  DescribeArgs args;
  ArgParser parser("samsa cluster describe",
                   "Describe the cluster: its id, the active controller, the brokers (rack, fenced or\n"
                   "not), the partition counts (under-replicated, offline) and the metadata quorum, as\n"
                   "kafka-metadata-quorum.sh describe --status and --replication show it.");
  parser.add_string("bootstrap-server", 'b', "HOST:PORT[,...]",
                    std::string("Broker listener(s) to ask (default ") + kDefaultBootstrap + ")",
                    &args.bootstrap_server);
  parser.add_string("bootstrap-controller", 0, "HOST:PORT[,...]",
                    "Controller listener(s) to ask for the quorum (default: the broker asked)",
                    &args.bootstrap_controller);
  parser.add_flag("json", 0, "Print one JSON object instead of the text report", &args.json);
  parser.add_int("timeout-ms", "MS", "How long each request may take (default 10000)", &args.timeout_ms, 1,
                 3600 * 1000);
  if (auto outcome = parser.parse(argc, argv); outcome != ParseOutcome::kOk) {
    return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  }
  auto cluster = describe(args);
  if (!cluster.ok()) return report_failure("cluster describe", cluster.error().message());
  if (!cluster->quorum && !args.json) {
    std::fprintf(stderr, "samsa cluster describe: warning: quorum unavailable: %s\n", cluster->quorum_error.c_str());
  }
  std::fputs((args.json ? format_cluster_json(*cluster) : format_cluster_text(*cluster)).c_str(), stdout);
  return 0;
}

constexpr Action kActions[] = {
    {"describe", "Show the brokers, the controller and the metadata quorum", cluster_describe},
};

}  // namespace

int run_cluster(int argc, char** argv) {
  return run_action_command(ActionCommand{"cluster", "", "Inspect the cluster.", kActions}, argc, argv);
}

}  // namespace samsa::cli
