#pragma once
// The operations a principal may perform on a resource, as the 32-bit field
// Kafka answers in Metadata (TopicAuthorizedOperations,
// ClusterAuthorizedOperations), DescribeCluster, DescribeGroups and
// DescribeTopicPartitions: bit N set = AclOperation code N allowed
// (Kafka's Utils.to32BitField).
//
// Samsa has no authorizer yet, so, as Kafka without one
// (AuthHelper.authorizedOperations), every operation the resource type
// supports is allowed: the sets of Kafka 4.x's
// AclEntry.supportedOperations(ResourceType). The ACL work narrows these
// per principal; until then this is the one place that names them.
// When a request does not ask for them, the field stays at Kafka's
// "not requested" value, kAuthorizedOperationsOmitted (INT32_MIN).

#include <cstdint>
#include <initializer_list>

namespace samsa {

// Kafka's AclOperation codes (org.apache.kafka.common.acl.AclOperation).
enum class AclOperation : int8_t {
  kRead = 3,
  kWrite = 4,
  kCreate = 5,
  kDelete = 6,
  kAlter = 7,
  kDescribe = 8,
  kClusterAction = 9,
  kDescribeConfigs = 10,
  kAlterConfigs = 11,
  kIdempotentWrite = 12,
};

constexpr int32_t kAuthorizedOperationsOmitted = INT32_MIN;

constexpr int32_t operation_bits(std::initializer_list<AclOperation> ops) {
  int32_t bits = 0;
  for (AclOperation op : ops) bits |= int32_t(1) << int(op);
  return bits;
}

// TOPIC: READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS.
constexpr int32_t kTopicOperations = operation_bits(
    {AclOperation::kRead, AclOperation::kWrite, AclOperation::kCreate, AclOperation::kDescribe, AclOperation::kDelete,
     AclOperation::kAlter, AclOperation::kDescribeConfigs, AclOperation::kAlterConfigs});
// GROUP: READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS (the config
// pair since group configs, KIP-848).
constexpr int32_t kGroupOperations =
    operation_bits({AclOperation::kRead, AclOperation::kDescribe, AclOperation::kDelete, AclOperation::kDescribeConfigs,
                    AclOperation::kAlterConfigs});
// CLUSTER: CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
// IDEMPOTENT_WRITE, ALTER, DESCRIBE.
constexpr int32_t kClusterOperations = operation_bits(
    {AclOperation::kCreate, AclOperation::kClusterAction, AclOperation::kDescribeConfigs, AclOperation::kAlterConfigs,
     AclOperation::kIdempotentWrite, AclOperation::kAlter, AclOperation::kDescribe});

}  // namespace samsa
