#include "group/group.h"

#include <algorithm>

#include "base/byte_reader.h"
#include "protocol/generated/consumer_protocol_subscription.h"

namespace samsa::group {

const char* state_name(GroupState state) {
  switch (state) {
    case GroupState::kEmpty: return "Empty";
    case GroupState::kPreparingRebalance: return "PreparingRebalance";
    case GroupState::kCompletingRebalance: return "CompletingRebalance";
    case GroupState::kStable: return "Stable";
    case GroupState::kDead: return "Dead";
  }
  return "Unknown";
}

const Bytes* Member::metadata_for(const std::string& protocol) const {
  for (const auto& [name, metadata] : protocols) {
    if (name == protocol) return &metadata;
  }
  return nullptr;
}

int32_t Group::rebalance_timeout_ms() const {
  int32_t t = 0;
  for (const auto& [id, m] : members) t = std::max(t, m.rebalance_timeout_ms);
  return t;
}

size_t Group::awaiting_join_count() const {
  size_t n = 0;
  for (const auto& [id, m] : members) n += m.awaiting_join ? 1 : 0;
  return n;
}

bool Group::all_joined() const { return awaiting_join_count() == members.size() && pending_members.empty(); }

bool Group::supports(const std::string& type, const Protocols& protocols) const {
  if (members.empty()) return !type.empty() && !protocols.empty();
  if (protocol_type && *protocol_type != type) return false;
  for (const auto& [name, metadata] : protocols) {
    bool all = std::all_of(members.begin(), members.end(),
                           [&](const auto& kv) { return kv.second.metadata_for(name) != nullptr; });
    if (all) return true;
  }
  return false;
}

std::optional<std::string> Group::select_protocol() const {
  if (members.empty()) return std::nullopt;
  std::vector<std::string> candidates;
  for (const auto& [name, metadata] : members.begin()->second.protocols) {
    bool all = std::all_of(members.begin(), members.end(),
                           [&](const auto& kv) { return kv.second.metadata_for(name) != nullptr; });
    if (all) candidates.push_back(name);
  }
  if (candidates.empty()) return std::nullopt;
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members) {
    for (const auto& [name, metadata] : m.protocols) {
      if (std::find(candidates.begin(), candidates.end(), name) != candidates.end()) {
        votes[name]++;
        break;
      }
    }
  }
  // Most votes wins; ties go to the first candidate in the first member's
  // preference order (Kafka leaves ties unspecified).
  std::string best = candidates.front();
  for (const auto& c : candidates) {
    if (votes[c] > votes[best]) best = c;
  }
  return best;
}

namespace {

// Some clients (KafkaJS) label a v0-layout subscription as v1: try the
// declared version, then v0.
std::optional<std::vector<std::string>> parse_topics(const Bytes& metadata) {
  ByteReader r(metadata);
  int16_t version = r.read_i16();
  if (!r.ok() || version < 0) return std::nullopt;
  protocol::ConsumerProtocolSubscription sub;
  int16_t v = std::min<int16_t>(version, protocol::ConsumerProtocolSubscription::kMaxVersion);
  ByteReader body(r.rest());
  if (sub.decode(body, v) && body.ok()) return sub.topics;
  ByteReader again(r.rest());
  protocol::ConsumerProtocolSubscription v0;
  if (v0.decode(again, 0) && again.ok()) return v0.topics;
  return std::nullopt;
}

}  // namespace

std::optional<std::set<std::string>> Group::subscribed_topics() const {
  if (protocol_type != "consumer" || !protocol_name) return std::nullopt;
  std::set<std::string> topics;
  for (const auto& [id, m] : members) {
    const Bytes* metadata = m.metadata_for(*protocol_name);
    if (!metadata) return std::nullopt;
    auto parsed = parse_topics(*metadata);
    if (!parsed) return std::nullopt;
    topics.insert(parsed->begin(), parsed->end());
  }
  return topics;
}

}  // namespace samsa::group
