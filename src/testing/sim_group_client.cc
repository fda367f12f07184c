#include "testing/sim_group_client.h"

#include <algorithm>
#include <utility>

#include "base/byte_reader.h"
#include "base/out_buffer.h"
#include "protocol/codec.h"
#include "protocol/error_code.h"
#include "protocol/generated/consumer_protocol_assignment.h"
#include "protocol/generated/consumer_protocol_subscription.h"
#include "protocol/generated/find_coordinator.h"
#include "protocol/generated/heartbeat.h"
#include "protocol/generated/join_group.h"
#include "protocol/generated/leave_group.h"
#include "protocol/generated/offset_commit.h"
#include "protocol/generated/offset_fetch.h"
#include "protocol/generated/sync_group.h"
#include "testing/group_history.h"

namespace samsa::sim {
namespace {

using protocol::ErrorCode;

constexpr int16_t kFindCoordinatorVersion = 3;
constexpr int16_t kJoinGroupVersion = 5;
constexpr int16_t kSyncGroupVersion = 3;
constexpr int16_t kHeartbeatVersion = 3;
constexpr int16_t kOffsetCommitVersion = 7;
constexpr int16_t kOffsetFetchVersion = 7;
constexpr int16_t kLeaveGroupVersion = 3;
constexpr int32_t kSessionTimeoutMs = 10'000;
constexpr int32_t kRebalanceTimeoutMs = 10'000;
constexpr int64_t kHeartbeatIntervalMs = 1'000;  // a third of the session timeout or less, as Kafka's consumers
constexpr const char* kProtocolType = "consumer";
constexpr const char* kAssignor = "roundrobin";

// The consumer protocol's bytes: a version, then the struct (as Kafka's
// ConsumerProtocol writes them).
template <typename T>
Bytes consumer_protocol_bytes(const T& value) {
  OutBuffer out;
  protocol::Encoder w(out);
  w.write_i16(0);
  value.encode(w, 0);
  return out.bytes();
}

Bytes subscription(const std::string& topic) {
  protocol::ConsumerProtocolSubscription s;
  s.topics.push_back(topic);
  return consumer_protocol_bytes(s);
}

// Partition p of `topic` to members[p % n] (members sorted by id).
std::vector<protocol::SyncGroupRequest::SyncGroupRequestAssignment> round_robin(std::vector<std::string> members,
                                                                                const std::string& topic,
                                                                                int32_t partitions) {
  std::sort(members.begin(), members.end());
  std::vector<protocol::SyncGroupRequest::SyncGroupRequestAssignment> out;
  for (size_t m = 0; m < members.size(); ++m) {
    protocol::ConsumerProtocolAssignment a;
    protocol::ConsumerProtocolAssignment::TopicPartition tp;
    tp.topic = topic;
    for (int32_t p = 0; p < partitions; ++p) {
      if (size_t(p) % members.size() == m) tp.partitions.push_back(p);
    }
    a.assigned_partitions.push_back(std::move(tp));
    protocol::SyncGroupRequest::SyncGroupRequestAssignment entry;
    entry.member_id = members[m];
    entry.assignment = consumer_protocol_bytes(a);
    out.push_back(std::move(entry));
  }
  return out;
}

// The partitions of `topic` in an assignment's bytes (none if they do not parse).
std::vector<int32_t> assigned_partitions(const Bytes& bytes, const std::string& topic) {
  ByteReader r{ByteView(bytes)};
  int16_t version = r.read_i16();
  protocol::ConsumerProtocolAssignment a;
  if (!r.ok() || version < 0 || !a.decode(r, std::min<int16_t>(version, 3))) return {};
  std::vector<int32_t> out;
  for (const auto& tp : a.assigned_partitions) {
    if (tp.topic == topic) out.insert(out.end(), tp.partitions.begin(), tp.partitions.end());
  }
  return out;
}

}  // namespace

SimGroupMember::SimGroupMember(ClientEnv env, int id, std::string group, std::string topic, int32_t partitions,
                               uint64_t seed)
    : PeriodicClient(std::move(env), "sim-group-member-" + std::to_string(id)), id_(id), group_(std::move(group)),
      topic_(std::move(topic)), partitions_(partitions), rng_(seed), position_(size_t(partitions), 0) {}

void SimGroupMember::send_one() {
  switch (phase_) {
    case Phase::kFindCoordinator: return find_coordinator();
    case Phase::kJoin: return join();
    case Phase::kSync: return sync();
    case Phase::kResume: return fetch_offsets(true);
    case Phase::kStable:
      if (env_.runtime->now_ms() >= next_heartbeat_ms_) return heartbeat();
      if (rng_.chance(0.01)) {  // a rebalance of its own accord
        phase_ = Phase::kJoin;
        return join();
      }
      if (rng_.chance(0.005)) return leave();
      if (rng_.chance(0.2)) return fetch_offsets(false);
      return commit();
    case Phase::kAway:
      if (env_.runtime->now_ms() >= back_at_ms_) phase_ = Phase::kJoin;
      sent();
      return finished();
  }
}

bool SimGroupMember::handle_error(int16_t code) {
  switch (ErrorCode(code)) {
    case ErrorCode::kNone: return false;
    case ErrorCode::kUnknownMemberId:
      member_id_.clear();
      phase_ = Phase::kJoin;
      break;
    case ErrorCode::kRebalanceInProgress:
    case ErrorCode::kIllegalGeneration:
      phase_ = Phase::kJoin;
      break;
    case ErrorCode::kNotCoordinator:
    case ErrorCode::kCoordinatorNotAvailable:
    case ErrorCode::kCoordinatorLoadInProgress:
      phase_ = Phase::kFindCoordinator;
      break;
    default:
      if (env_.trace) env_.trace("group member " + std::to_string(id_) + ": error " + std::to_string(code));
      break;  // the same step again
  }
  return true;
}

void SimGroupMember::find_coordinator() {
  protocol::FindCoordinatorRequest req;
  req.key = group_;
  req.key_type = 0;
  sent();
  client_->call<protocol::FindCoordinatorRequest, protocol::FindCoordinatorResponse>(
      req, kFindCoordinatorVersion, [this](Result<protocol::FindCoordinatorResponse> resp) {
        finished();
        if (!resp.ok() || handle_error(resp.value().error_code)) return;
        // One broker: the coordinator is the broker already dialed.
        phase_ = Phase::kJoin;
      });
}

void SimGroupMember::join() {
  protocol::JoinGroupRequest req;
  req.group_id = group_;
  req.session_timeout_ms = kSessionTimeoutMs;
  req.rebalance_timeout_ms = kRebalanceTimeoutMs;
  req.member_id = member_id_;
  req.protocol_type = kProtocolType;
  protocol::JoinGroupRequest::JoinGroupRequestProtocol p;
  p.name = kAssignor;
  p.metadata = subscription(topic_);
  req.protocols.push_back(std::move(p));
  sent();
  client_->call<protocol::JoinGroupRequest, protocol::JoinGroupResponse>(
      req, kJoinGroupVersion, [this](Result<protocol::JoinGroupResponse> resp) {
        finished();
        if (!resp.ok()) return;
        const auto& r = resp.value();
        if (r.error_code == int16_t(ErrorCode::kMemberIdRequired)) {  // KIP-394: join again with this id
          member_id_ = r.member_id;
          return;
        }
        if (handle_error(r.error_code)) return;
        member_id_ = r.member_id;
        generation_ = r.generation_id;
        members_.clear();
        if (r.leader == member_id_) {
          for (const auto& m : r.members) members_.push_back(m.member_id);
        }
        phase_ = Phase::kSync;
      });
}

void SimGroupMember::sync() {
  protocol::SyncGroupRequest req;
  req.group_id = group_;
  req.generation_id = generation_;
  req.member_id = member_id_;
  if (!members_.empty()) req.assignments = round_robin(members_, topic_, partitions_);
  sent();
  client_->call<protocol::SyncGroupRequest, protocol::SyncGroupResponse>(
      req, kSyncGroupVersion, [this](Result<protocol::SyncGroupResponse> resp) {
        finished();
        if (!resp.ok() || handle_error(resp.value().error_code)) return;
        assigned_ = assigned_partitions(resp.value().assignment, topic_);
        ++generations_;
        if (env_.trace) {
          env_.trace("group member " + std::to_string(id_) + ": generation " + std::to_string(generation_) + ", " +
                     std::to_string(assigned_.size()) + " partitions");
        }
        phase_ = Phase::kResume;
        next_heartbeat_ms_ = env_.runtime->now_ms() + kHeartbeatIntervalMs;
      });
}

void SimGroupMember::fetch_offsets(bool resuming) {
  if (assigned_.empty()) {
    phase_ = Phase::kStable;
    sent();
    return finished();
  }
  protocol::OffsetFetchRequest req;
  req.group_id = group_;
  protocol::OffsetFetchRequest::OffsetFetchRequestTopic t;
  t.name = topic_;
  t.partition_indexes = assigned_;
  req.topics = std::vector<protocol::OffsetFetchRequest::OffsetFetchRequestTopic>{t};
  std::vector<int64_t> floors;
  for (int32_t p : assigned_) floors.push_back(env_.groups->fetch_floor(key(p)));
  sent();
  client_->call<protocol::OffsetFetchRequest, protocol::OffsetFetchResponse>(
      req, kOffsetFetchVersion, [this, resuming, floors, asked = assigned_](Result<protocol::OffsetFetchResponse> resp) {
        finished();
        if (!resp.ok() || handle_error(resp.value().error_code)) return;
        for (const auto& topic : resp.value().topics) {
          if (topic.name != topic_) continue;
          for (const auto& p : topic.partitions) {
            auto at = std::find(asked.begin(), asked.end(), p.partition_index);
            if (at == asked.end() || p.error_code != 0) continue;
            env_.groups->fetched(key(p.partition_index), floors[size_t(at - asked.begin())], p.committed_offset,
                                 p.metadata.value_or(""));
            if (resuming) position_[size_t(p.partition_index)] = std::max<int64_t>(0, p.committed_offset);
          }
        }
        if (resuming) phase_ = Phase::kStable;
      });
}

// Leaves the group (its partitions go to the others at the rebalance) and
// stays away for a while; it comes back as a new member.
void SimGroupMember::leave() {
  protocol::LeaveGroupRequest req;
  req.group_id = group_;
  protocol::LeaveGroupRequest::MemberIdentity me;
  me.member_id = member_id_;
  req.members.push_back(std::move(me));
  sent();
  client_->call<protocol::LeaveGroupRequest, protocol::LeaveGroupResponse>(
      req, kLeaveGroupVersion, [this](Result<protocol::LeaveGroupResponse> resp) {
        finished();
        if (!resp.ok()) return;
        member_id_.clear();
        assigned_.clear();
        phase_ = Phase::kAway;
        back_at_ms_ = env_.runtime->now_ms() + rng_.range(1000, 3000);
      });
}

void SimGroupMember::heartbeat() {
  protocol::HeartbeatRequest req;
  req.group_id = group_;
  req.generation_id = generation_;
  req.member_id = member_id_;
  sent();
  next_heartbeat_ms_ = env_.runtime->now_ms() + kHeartbeatIntervalMs;
  client_->call<protocol::HeartbeatRequest, protocol::HeartbeatResponse>(
      req, kHeartbeatVersion, [this](Result<protocol::HeartbeatResponse> resp) {
        finished();
        if (resp.ok()) handle_error(resp.value().error_code);
      });
}

void SimGroupMember::commit() {
  if (assigned_.empty()) {
    sent();
    return finished();
  }
  protocol::OffsetCommitRequest req;
  req.group_id = group_;
  req.generation_id_or_member_epoch = generation_;
  req.member_id = member_id_;
  protocol::OffsetCommitRequest::OffsetCommitRequestTopic t;
  t.name = topic_;
  std::vector<std::pair<int32_t, std::string>> sent_metadata;
  for (int32_t p : assigned_) {
    protocol::OffsetCommitRequest::OffsetCommitRequestPartition part;
    part.partition_index = p;
    part.committed_offset = position_[size_t(p)] + rng_.range(0, 20);
    part.committed_metadata = "m" + std::to_string(id_) + "-" + std::to_string(next_commit_seq_++);
    position_[size_t(p)] = part.committed_offset;
    env_.groups->commit_sent(key(p), part.committed_offset, *part.committed_metadata);
    sent_metadata.emplace_back(p, *part.committed_metadata);
    t.partitions.push_back(std::move(part));
  }
  req.topics.push_back(std::move(t));
  sent();
  client_->call<protocol::OffsetCommitRequest, protocol::OffsetCommitResponse>(
      req, kOffsetCommitVersion, [this, sent_metadata](Result<protocol::OffsetCommitResponse> resp) {
        finished();
        if (!resp.ok()) return;
        for (const auto& topic : resp.value().topics) {
          if (topic.name != topic_) continue;
          for (const auto& p : topic.partitions) {
            if (handle_error(p.error_code)) continue;
            for (const auto& [partition, metadata] : sent_metadata) {
              if (partition != p.partition_index) continue;
              env_.groups->commit_acknowledged(key(partition), metadata);
              ++commits_acknowledged_;
            }
          }
        }
      });
}

}  // namespace samsa::sim
