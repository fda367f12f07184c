#pragma once
// Strong ids and offsets shared by every layer. They never convert into each
// other silently; see base/strong_int.h.

#include <cstdint>
#include <functional>
#include <string>

#include "base/strong_int.h"

namespace samsa {

using Offset = StrongInt<struct OffsetTag, int64_t>;            // position in a partition log
using LeaderEpoch = StrongInt<struct LeaderEpochTag, int32_t>;  // partition leader generation
using NodeId = StrongInt<struct NodeIdTag, int32_t>;            // broker / controller node.id
using PartitionId = StrongInt<struct PartitionIdTag, int32_t>;  // partition index in a topic
using ProducerId = StrongInt<struct ProducerIdTag, int64_t>;
using ProducerEpoch = StrongInt<struct ProducerEpochTag, int16_t>;
using PartitionEpoch = StrongInt<struct PartitionEpochTag, int32_t>;  // +1 on every change of a partition (KRaft)
using BrokerEpoch = StrongInt<struct BrokerEpochTag, int64_t>;        // one registration of a broker (KIP-903)

inline constexpr Offset kNoOffset{-1};
inline constexpr LeaderEpoch kNoLeaderEpoch{-1};
inline constexpr NodeId kNoNode{-1};
inline constexpr BrokerEpoch kNoBrokerEpoch{-1};  // "not known": Fetch ReplicaEpoch -1 skips the check

struct TopicPartition {
  std::string topic;
  PartitionId partition;

  bool operator==(const TopicPartition&) const = default;
  auto operator<=>(const TopicPartition&) const = default;
  std::string to_string() const { return topic + "-" + std::to_string(partition.value()); }
};

}  // namespace samsa

template <>
struct std::hash<samsa::TopicPartition> {
  size_t operator()(const samsa::TopicPartition& tp) const noexcept {
    return std::hash<std::string>{}(tp.topic) * 31 + std::hash<int32_t>{}(tp.partition.value());
  }
};
