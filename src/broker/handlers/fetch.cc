// Fetch: for each partition, the bytes of whole batches from one segment,
// sent with sendfile (a FileRegion in the response). If the response holds
// fewer than min.bytes, it waits in FetchWaiters until new data or
// max.wait.ms. Old fetchers (v0-3) get legacy message sets, down-converted
// in memory. isolation_level=1 (read_committed) reads below the last stable
// offset and gets the aborted transactions of what it read from the
// segments' `.txnindex`; every answer carries the last stable offset.
// Fetch sessions (KIP-227) are declined: session id 0 means
// every fetch is a full fetch, which the protocol allows a broker to do.
#include <memory>

#include "base/log.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "model/legacy_message_set.h"
#include "protocol/error_code.h"
#include "protocol/generated/fetch.h"
#include "replication/read_replica_selector.h"
#include "replication/replication_types.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;

constexpr int16_t kFirstTopicIdVersion = 13;
constexpr int16_t kFirstRecordBatchVersion = 4;
constexpr int16_t kFirstMaxBytesVersion = 3;

constexpr int16_t kFirstPreferredReplicaVersion = 11;
constexpr int16_t kFirstReplicaStateVersion = 15;
constexpr int16_t kFirstLastFetchedEpochVersion = 12;
constexpr int16_t kFirstFollowerHighWatermarkVersion = 18;
constexpr int8_t kReadCommitted = 1;  // IsolationLevel (v4+)

struct FetchCall {
  Request request;
  FetchRequest body;
};

// Who fetches: a consumer (-1, or any negative id) or a follower broker.
struct Fetcher {
  NodeId replica = kNoNode;
  BrokerEpoch broker_epoch = kNoBrokerEpoch;
  bool is_follower() const { return replica.value() >= 0; }
};

Fetcher fetcher_of(const FetchRequest& body, int16_t version) {
  if (version >= kFirstReplicaStateVersion) {
    return {NodeId(body.replica_state.replica_id), BrokerEpoch(body.replica_state.replica_epoch)};
  }
  return {NodeId(body.replica_id), kNoBrokerEpoch};
}

// What a read of the whole request found.
struct ReadOutcome {
  int64_t bytes = 0;
  bool high_watermark_news = false;  // a follower learns a newer HW: answer now
};

// Clients read a null record set as malformed: "no records" is empty bytes.
FetchResponse::PartitionData empty_partition() {
  FetchResponse::PartitionData out;
  out.records = RecordSet::borrowed(ByteView());
  return out;
}

FetchResponse::PartitionData partition_error(int32_t index, ErrorCode code) {
  FetchResponse::PartitionData out = empty_partition();
  out.partition_index = index;
  out.error_code = int16_t(code);
  out.high_watermark = -1;
  return out;
}

ErrorCode check_leader_epoch(const Partition& p, int32_t requested) {
  if (requested < 0) return ErrorCode::kNone;
  if (requested < p.leader_epoch().value()) return ErrorCode::kFencedLeaderEpoch;
  if (requested > p.leader_epoch().value()) return ErrorCode::kUnknownLeaderEpoch;
  return ErrorCode::kNone;
}

// Old fetchers read magic 0 (v0-1) or 1 (v2-3) message sets.
Result<RecordSet> downconvert(const FileRegion& region, int16_t version) {
  ASSIGN_OR_RETURN(Bytes bytes, read_region(region));
  DownconvertOptions options;
  options.magic = version <= 1 ? 0 : 1;
  ASSIGN_OR_RETURN(Bytes legacy, downconvert_to_legacy(bytes, options));
  return RecordSet::owned(std::move(legacy));
}

// KIP-392: a follower serves a consumer only where fetch from the closest
// replica is on (replica.selector.class) and the consumer can be sent
// elsewhere by a leader (v11+, which has PreferredReadReplica).
bool serves_consumer(const Broker& broker, const Partition& p, int16_t version) {
  if (p.is_leader()) return true;
  return p.is_follower() && version >= kFirstPreferredReplicaVersion && broker.config().rack_aware_replica_selector;
}

// The leader's answer to a consumer on a rack (KIP-392): the replica on that
// rack it should read from, if not this one.
std::optional<NodeId> preferred_read_replica(const Broker& broker, const Partition& p, const std::string& client_rack,
                                             Offset from, int16_t version) {
  if (!p.is_leader() || client_rack.empty() || version < kFirstPreferredReplicaVersion ||
      !broker.config().rack_aware_replica_selector) {
    return std::nullopt;
  }
  auto rack_of = [&](NodeId id) -> std::optional<std::string> {
    const BrokerState* b = broker.image().broker(id);
    return b ? b->rack : std::nullopt;
  };
  replication::ReadReplicaView leader{broker.node_id(), broker.config().broker_rack, p.log().log_end_offset()};
  std::vector<replication::ReadReplicaView> followers;
  for (const auto& [id, log_end] : p.followers_serving(from)) followers.push_back({id, rack_of(id), log_end});
  NodeId chosen = replication::select_read_replica(client_rack, leader, followers);
  if (chosen == leader.id) return std::nullopt;
  return chosen;
}

// Reads one partition for a consumer; `budget` is what the response may
// still take.
// The aborted transactions a read_committed consumer needs for a read from
// `from` below `upper_bound` (KIP-98): it drops their records itself.
std::vector<FetchResponse::AbortedTransaction> aborted_for(const Partition& p, Offset from, Offset upper_bound) {
  std::vector<FetchResponse::AbortedTransaction> out;
  for (const AbortedTxn& t : p.log().aborted_txns(from, upper_bound)) {
    FetchResponse::AbortedTransaction a;
    a.producer_id = t.producer_id.value();
    a.first_offset = t.first_offset.value();
    out.push_back(a);
  }
  return out;
}

FetchResponse::PartitionData read_partition(Broker& broker, const TopicPartition& tp,
                                            const FetchRequest::FetchPartition& fp, const std::string& client_rack,
                                            int16_t version, bool read_committed, int64_t& budget, bool& first) {
  Partition* p = broker.replicas().get(tp);
  if (!p) return partition_error(fp.partition, ErrorCode::kUnknownTopicOrPartition);
  if (!serves_consumer(broker, *p, version)) return partition_error(fp.partition, ErrorCode::kNotLeaderOrFollower);
  if (ErrorCode e = check_leader_epoch(*p, fp.current_leader_epoch); e != ErrorCode::kNone) {
    return partition_error(fp.partition, e);
  }
  FetchResponse::PartitionData out = empty_partition();
  out.partition_index = fp.partition;
  // A follower's high watermark is the leader's as its last fetch told.
  Offset high_watermark = p->high_watermark();
  out.high_watermark = high_watermark.value();
  const Offset last_stable = p->last_stable_offset();
  out.last_stable_offset = last_stable.value();
  out.log_start_offset = p->log().log_start_offset().value();
  out.aborted_transactions = std::nullopt;
  // read_committed reads only below the last stable offset (Kafka's
  // FetchIsolation.TXN_COMMITTED).
  const Offset visible_end = read_committed ? last_stable : high_watermark;

  Offset from(fp.fetch_offset);
  if (std::optional<NodeId> preferred = preferred_read_replica(broker, *p, client_rack, from, version)) {
    out.preferred_read_replica = preferred->value();  // no records: the client moves there
    return out;
  }
  int32_t max_bytes = int32_t(std::min<int64_t>(fp.partition_max_bytes, budget));
  // Up to the log end, an offset above the high watermark is not out of
  // range: nothing to read yet (a consumer on a follower that lags the
  // leader's high watermark lands here).
  if ((from >= visible_end && from <= p->log().log_end_offset()) || max_bytes <= 0) return out;
  auto read = p->log().read(from, max_bytes, visible_end, first);
  if (!read.ok()) {
    bool out_of_range = read.error().kind() == ErrorKind::kNotFound || from > high_watermark;
    if (!out_of_range) LOG_WARN("fetch", "read of {} failed: {}", tp.to_string(), read.error().to_string());
    return partition_error(fp.partition,
                           out_of_range ? ErrorCode::kOffsetOutOfRange : ErrorCode::kKafkaStorageError);
  }
  if (read->records.size == 0) return out;
  if (read_committed) out.aborted_transactions = aborted_for(*p, from, visible_end);
  if (version < kFirstRecordBatchVersion) {
    auto legacy = downconvert(read->records, version);
    if (!legacy.ok()) return partition_error(fp.partition, ErrorCode::kKafkaStorageError);
    out.records = std::move(legacy).value();
  } else {
    out.records = RecordSet::file(read->records);
  }
  budget -= int64_t(out.records.size());
  first = false;
  return out;
}

ErrorCode fetch_error_code(replication::FetchError error) {
  switch (error) {
    case replication::FetchError::kNone: return ErrorCode::kNone;
    case replication::FetchError::kNotLeaderOrFollower: return ErrorCode::kNotLeaderOrFollower;
    case replication::FetchError::kFencedLeaderEpoch: return ErrorCode::kFencedLeaderEpoch;
    case replication::FetchError::kUnknownLeaderEpoch: return ErrorCode::kUnknownLeaderEpoch;
    case replication::FetchError::kOffsetOutOfRange: return ErrorCode::kOffsetOutOfRange;
  }
  return ErrorCode::kUnknownServerError;
}

// A follower's read of one partition (Partition.fetchRecords for a
// follower): the core decides, then the log is read up to its end.
FetchResponse::PartitionData read_for_follower(Broker& broker, const TopicPartition& tp,
                                               const FetchRequest::FetchPartition& fp, const Fetcher& fetcher,
                                               int16_t version, int64_t& budget, bool& first, ReadOutcome& outcome) {
  Partition* p = broker.replicas().get(tp);
  if (!p) return partition_error(fp.partition, ErrorCode::kUnknownTopicOrPartition);
  replication::FollowerFetch f;
  f.replica = fetcher.replica;
  f.broker_epoch = fetcher.broker_epoch;
  f.fetch_offset = Offset(fp.fetch_offset);
  f.log_start_offset = Offset(fp.log_start_offset);
  if (fp.current_leader_epoch >= 0) f.current_leader_epoch = LeaderEpoch(fp.current_leader_epoch);
  if (version >= kFirstLastFetchedEpochVersion && fp.last_fetched_epoch >= 0) {
    f.last_fetched_epoch = LeaderEpoch(fp.last_fetched_epoch);
  }
  replication::FetchDecision d = p->on_follower_fetch(f);
  if (d.error != replication::FetchError::kNone) {
    FetchResponse::PartitionData out = partition_error(fp.partition, fetch_error_code(d.error));
    if (d.error == replication::FetchError::kOffsetOutOfRange) {
      out.high_watermark = d.high_watermark.value();
      out.log_start_offset = p->log().log_start_offset().value();
    }
    return out;
  }
  FetchResponse::PartitionData out = empty_partition();
  out.partition_index = fp.partition;
  out.high_watermark = d.high_watermark.value();
  out.last_stable_offset = p->last_stable_offset().value();
  out.log_start_offset = p->log().log_start_offset().value();
  out.aborted_transactions = std::nullopt;
  if (d.diverging_epoch) {  // no records: the follower truncates first
    out.diverging_epoch.epoch = d.diverging_epoch->epoch.value();
    out.diverging_epoch.end_offset = d.diverging_epoch->end_offset.value();
    return out;
  }
  if (version >= kFirstFollowerHighWatermarkVersion && fp.high_watermark < d.high_watermark.value()) {
    outcome.high_watermark_news = true;
  }
  Offset from(fp.fetch_offset);
  int32_t max_bytes = int32_t(std::min<int64_t>(fp.partition_max_bytes, budget));
  if (from >= d.log_end_offset || max_bytes <= 0) return out;
  auto read = p->log().read(from, max_bytes, d.log_end_offset, first);
  if (!read.ok()) {
    LOG_WARN("fetch", "follower read of {} failed: {}", tp.to_string(), read.error().to_string());
    return partition_error(fp.partition, read.error().kind() == ErrorKind::kNotFound ? ErrorCode::kOffsetOutOfRange
                                                                                       : ErrorCode::kKafkaStorageError);
  }
  if (read->records.size == 0) return out;
  out.records = RecordSet::file(read->records);
  budget -= int64_t(out.records.size());
  first = false;
  return out;
}

// Fetch v13+ names topics by id, earlier versions by name.
const TopicState* resolve_topic(Broker& broker, const FetchRequest::FetchTopic& topic, int16_t version) {
  return version >= kFirstTopicIdVersion ? broker.image().topic_by_id(topic.topic_id)
                                         : broker.image().topic(topic.topic);
}

// Builds the whole response from the logs as they are now.
FetchResponse read_all(Broker& broker, const FetchRequest& body, int16_t version, ReadOutcome& outcome) {
  FetchResponse response;
  int64_t budget = version >= kFirstMaxBytesVersion ? body.max_bytes : INT32_MAX;
  bool first = true;
  outcome = ReadOutcome{};
  const Fetcher fetcher = fetcher_of(body, version);
  for (const auto& topic : body.topics) {
    FetchResponse::FetchableTopicResponse out;
    out.topic = topic.topic;
    out.topic_id = topic.topic_id;
    const TopicState* state = resolve_topic(broker, topic, version);
    for (const auto& fp : topic.partitions) {
      if (!state) {
        out.partitions.push_back(partition_error(fp.partition, version >= kFirstTopicIdVersion
                                                                   ? ErrorCode::kUnknownTopicId
                                                                   : ErrorCode::kUnknownTopicOrPartition));
        continue;
      }
      TopicPartition tp{state->name, PartitionId(fp.partition)};
      out.partitions.push_back(fetcher.is_follower()
                                   ? read_for_follower(broker, tp, fp, fetcher, version, budget, first, outcome)
                                   : read_partition(broker, tp, fp, body.rack_id, version,
                                                    body.isolation_level == kReadCommitted, budget, first));
      outcome.bytes += int64_t(out.partitions.back().records.size());
    }
    response.responses.push_back(std::move(out));
  }
  return response;
}

std::vector<TopicPartition> partitions_of(Broker& broker, const FetchRequest& body, int16_t version) {
  std::vector<TopicPartition> tps;
  for (const auto& topic : body.topics) {
    const TopicState* state = resolve_topic(broker, topic, version);
    if (!state) continue;
    for (const auto& fp : topic.partitions) tps.push_back(TopicPartition{state->name, PartitionId(fp.partition)});
  }
  return tps;
}

}  // namespace

void handle_fetch(Broker& broker, Request& request) {
  auto call = std::make_shared<FetchCall>(FetchCall{std::move(request), {}});
  if (!call->request.decode(call->body)) return;
  int16_t version = call->request.version();
  if (version >= 7 && call->body.session_id != 0) {
    FetchResponse response;
    response.error_code = int16_t(ErrorCode::kFetchSessionIdNotFound);
    call->request.respond(response);
    return;
  }
  ReadOutcome outcome;
  FetchResponse response = read_all(broker, call->body, version, outcome);
  if (outcome.bytes >= call->body.min_bytes || outcome.high_watermark_news || call->body.max_wait_ms <= 0 ||
      call->body.topics.empty()) {
    call->request.respond(response);
    return;
  }
  // Wait for data: any append to one of these partitions, or a move of its
  // high watermark, re-runs the read.
  Broker* b = &broker;
  broker.fetch_waiters().park(
      partitions_of(broker, call->body, version), call->body.max_wait_ms,
      [b, call, version] {
        ReadOutcome again_outcome;
        FetchResponse again = read_all(*b, call->body, version, again_outcome);
        if (again_outcome.bytes < call->body.min_bytes && !again_outcome.high_watermark_news) return false;
        call->request.respond(again);
        return true;
      },
      [b, call, version] {
        ReadOutcome ignored;
        call->request.respond(read_all(*b, call->body, version, ignored));
      });
}

}  // namespace samsa
