// `samsa cluster describe`: the brokers, the active controller, the
// partition health counts and the metadata quorum (cli/cluster_description.h)
// over the wire protocol (Metadata, DescribeQuorum: cli/wire_client.h).
// `samsa cluster unregister --id N`: UnregisterBroker (64), as
// kafka-cluster.sh unregister does.

#include <cstdio>
#include <string>

#include "cli/action_table.h"
#include "cli/arg_parser.h"
#include "cli/cluster_description.h"
#include "cli/commands.h"
#include "cli/kafka_client.h"
#include "protocol/error_code.h"
#include "protocol/generated/unregister_broker.h"

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

struct UnregisterArgs {
  std::string bootstrap_server = kDefaultBootstrap;
  int64_t id = -1;
  int64_t timeout_ms = 10000;
};

// The error of the answer, in Kafka's name and the controller's words.
Status unregister(const UnregisterArgs& args) {
  ASSIGN_OR_RETURN(std::vector<HostPort> brokers, parse_host_port_list(args.bootstrap_server));
  ASSIGN_OR_RETURN(WireClient client, WireClient::connect_any(brokers, int(args.timeout_ms)));
  if (!client.serves(protocol::ApiKey::kUnregisterBroker)) {
    return Error(ErrorKind::kUnsupported, client.address().to_string() +
                                              " does not serve UnregisterBroker (a single node registers itself; "
                                              "only a cluster's nodes unregister brokers)");
  }
  protocol::UnregisterBrokerRequest request;
  request.broker_id = int32_t(args.id);
  ASSIGN_OR_RETURN(auto answer, client.call<protocol::UnregisterBrokerResponse>(request));
  auto code = protocol::ErrorCode(answer.body.error_code);
  if (code == protocol::ErrorCode::kNone) return ok_status();
  std::string message = protocol::error_name(code);
  if (answer.body.error_message) message += ": " + *answer.body.error_message;
  return Error(ErrorKind::kInvalidArgument, message);
}

int cluster_unregister(int argc, char** argv) {
  UnregisterArgs args;
  ArgParser parser("samsa cluster unregister",
                   "Remove a broker from the cluster for good (UnregisterBroker), as kafka-cluster.sh\n"
                   "unregister does. The broker must be shut down (or fenced) first; its replicas stay\n"
                   "assigned to it (offline) until they are reassigned.");
  parser.add_string("bootstrap-server", 'b', "HOST:PORT[,...]",
                    std::string("Broker listener(s) to ask (default ") + kDefaultBootstrap + ")",
                    &args.bootstrap_server);
  parser.add_int("id", "N", "The node.id of the broker to unregister (required)", &args.id, 0, INT32_MAX);
  parser.add_int("timeout-ms", "MS", "How long the request may take (default 10000)", &args.timeout_ms, 1,
                 3600 * 1000);
  if (auto outcome = parser.parse(argc, argv); outcome != ParseOutcome::kOk) {
    return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  }
  if (args.id < 0) {
    std::fprintf(stderr, "samsa cluster unregister: --id is required\n");
    return kUsageExitCode;
  }
  Status done = unregister(args);
  if (!done.ok()) return report_failure("cluster unregister", done.error().message());
  std::printf("Broker %lld unregistered.\n", static_cast<long long>(args.id));
  return 0;
}

constexpr Action kActions[] = {
    {"describe", "Show the brokers, the controller and the metadata quorum", cluster_describe},
    {"unregister", "Remove a shut-down broker from the cluster (UnregisterBroker)", cluster_unregister},
};

}  // namespace

int run_cluster(int argc, char** argv) {
  return run_action_command(ActionCommand{"cluster", "", "Inspect the cluster, remove a broker.", kActions}, argc,
                            argv);
}

}  // namespace samsa::cli
