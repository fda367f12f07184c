// `samsa election`: preferred or unclean leader elections through the
// ElectLeaders API (43), as kafka-leader-election.sh does them. Any broker
// may be asked: one that is not the controller forwards the request.

#include <cstdio>
#include <string>
#include <vector>

#include "cli/arg_parser.h"
#include "cli/commands.h"
#include "cli/kafka_client.h"
#include "cli/wire_client.h"
#include "protocol/error_code.h"
#include "protocol/generated/elect_leaders.h"

namespace samsa::cli {
namespace {

using protocol::ErrorCode;

struct ElectionArgs {
  std::string bootstrap_server = kDefaultBootstrap;
  bool preferred = false;
  bool unclean = false;
  std::string election_type;  // kafka-leader-election.sh's spelling: PREFERRED or UNCLEAN
  std::string topic;
  int64_t partition = -1;
  bool all_topic_partitions = false;
  int64_t timeout_ms = 60000;
};

// The election type the flags ask for, or an error saying what is wrong.
Result<int8_t> election_type(const ElectionArgs& args) {
  int asked = int(args.preferred) + int(args.unclean) + int(!args.election_type.empty());
  if (asked != 1) return Error(ErrorKind::kInvalidArgument, "give exactly one of --preferred, --unclean, --election-type");
  std::string type = args.election_type;
  for (char& c : type) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (args.preferred || type == "PREFERRED") return int8_t(0);
  if (args.unclean || type == "UNCLEAN") return int8_t(1);
  return Error(ErrorKind::kInvalidArgument, "--election-type must be PREFERRED or UNCLEAN, not " + args.election_type);
}

Result<protocol::ElectLeadersRequest> build_request(const ElectionArgs& args) {
  protocol::ElectLeadersRequest request;
  ASSIGN_OR_RETURN(request.election_type, election_type(args));
  request.timeout_ms = int32_t(args.timeout_ms);
  if (args.all_topic_partitions == !args.topic.empty()) {
    return Error(ErrorKind::kInvalidArgument, "give either --topic (with --partition) or --all-topic-partitions");
  }
  if (args.all_topic_partitions) {
    request.topic_partitions = std::nullopt;  // null: every partition (the codec's default is an empty list)
    return request;
  }
  if (args.partition < 0) return Error(ErrorKind::kInvalidArgument, "--topic needs --partition");
  protocol::ElectLeadersRequest::TopicPartitions tp;
  tp.topic = args.topic;
  tp.partitions.push_back(int32_t(args.partition));
  request.topic_partitions = std::vector<protocol::ElectLeadersRequest::TopicPartitions>{tp};
  return request;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Prints the outcome as kafka-leader-election.sh does; the exit status is 1
// when some partition could not be elected.
int report(const protocol::ElectLeadersResponse& response, const char* type) {
  if (response.error_code != 0) {
    return report_failure("election", protocol::error_name(response.error_code));
  }
  std::vector<std::string> elected, not_needed, failed;
  for (const auto& t : response.replica_election_results) {
    for (const auto& p : t.partition_result) {
      std::string name = t.topic + "-" + std::to_string(p.partition_id);
      if (p.error_code == int16_t(ErrorCode::kNone)) {
        elected.push_back(name);
      } else if (p.error_code == int16_t(ErrorCode::kElectionNotNeeded)) {
        not_needed.push_back(name);
      } else {
        failed.push_back(name + ": " + std::string(protocol::error_name(p.error_code)) +
                         (p.error_message ? " (" + *p.error_message + ")" : ""));
      }
    }
  }
  if (!elected.empty()) std::printf("Successfully completed leader election (%s) for partitions %s\n", type, join(elected).c_str());
  if (!not_needed.empty()) std::printf("Valid replica already elected for partitions %s\n", join(not_needed).c_str());
  if (elected.empty() && not_needed.empty() && failed.empty()) std::printf("No partition needed an election\n");
  for (const auto& f : failed) std::fprintf(stderr, "Error completing leader election (%s) for partition: %s\n", type, f.c_str());
  return failed.empty() ? 0 : 1;
}

}  // namespace

int run_election(int argc, char** argv) {
  ElectionArgs args;
  ArgParser parser("samsa election",
                   "Elect partition leaders, as kafka-leader-election.sh: the preferred replica (the first\n"
                   "of the assignment, if it is in the ISR), or, for a partition without a leader, any live\n"
                   "replica (unclean: records only the old ISR held may be lost).");
  parser.add_string("bootstrap-server", 'b', "HOST:PORT[,...]",
                    std::string("Broker(s) to ask (default ") + kDefaultBootstrap + ")", &args.bootstrap_server);
  parser.add_flag("preferred", 0, "Elect the preferred replica (PREFERRED)", &args.preferred);
  parser.add_flag("unclean", 0, "Elect any live replica of a leaderless partition (UNCLEAN)", &args.unclean);
  parser.add_string("election-type", 0, "PREFERRED|UNCLEAN", "The same as --preferred or --unclean",
                    &args.election_type);
  parser.add_string("topic", 't', "NAME", "The topic of the partition to elect", &args.topic);
  parser.add_int("partition", "N", "The partition to elect (with --topic)", &args.partition, 0, INT32_MAX);
  parser.add_flag("all-topic-partitions", 0, "Every partition of every topic", &args.all_topic_partitions);
  parser.add_int("timeout-ms", "MS", "How long the election may take (default 60000)", &args.timeout_ms, 1,
                 3600 * 1000);
  if (auto outcome = parser.parse(argc, argv); outcome != ParseOutcome::kOk) {
    return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  }
  auto request = build_request(args);
  if (!request.ok()) {
    std::fprintf(stderr, "samsa election: %s\n", request.error().message().c_str());
    return kUsageExitCode;
  }
  auto brokers = parse_host_port_list(args.bootstrap_server);
  if (!brokers.ok()) return report_failure("election", brokers.error().message());
  auto client = WireClient::connect_any(*brokers, int(args.timeout_ms) + 5000);
  if (!client.ok()) return report_failure("election", client.error().message());
  auto response = client->call<protocol::ElectLeadersResponse>(*request);
  if (!response.ok()) return report_failure("election", response.error().message());
  return report(response->body, request->election_type == 0 ? "PREFERRED" : "UNCLEAN");
}

}  // namespace samsa::cli
