// AlterPartition on the controller: Kafka's validation cases
// (ReplicationControlManagerTest's alterPartition tests) and the record.
#include "controller/alter_partition.h"

#include <gtest/gtest.h>

#include "controller/metadata_codec.h"
#include "protocol/error_code.h"

namespace samsa {
namespace {

const ElectionPolicy kPolicy{};  // Kafka's defaults: min.insync.replicas 1, ELR on

using protocol::AlterPartitionRequest;
using protocol::ErrorCode;

const Uuid kTopic{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};

// Brokers 1-3 registered and active (epochs 100 + id); topic "t" with one
// partition on [1, 2, 3], ISR [1, 2, 3], leader 1, leader epoch 4,
// partition epoch 7.
MetadataImage image() {
  MetadataImage m;
  for (int id = 1; id <= 3; ++id) {
    m.apply(RegisterBrokerRecord{NodeId(id), BrokerEpoch(100 + id), {}, {{"PLAINTEXT", "h", 9092, 0}}, std::nullopt,
                                 false});
  }
  m.apply(TopicRecord{"t", kTopic});
  m.apply(PartitionRecord{kTopic, PartitionId(0), {NodeId(1), NodeId(2), NodeId(3)},
                          {NodeId(1), NodeId(2), NodeId(3)}, NodeId(1), LeaderEpoch(4), 7});
  return m;
}

AlterPartitionRequest request(std::vector<int32_t> isr, int32_t leader_epoch = 4, int32_t partition_epoch = 7,
                              int32_t sender = 1) {
  AlterPartitionRequest r;
  r.broker_id = sender;
  r.broker_epoch = 100 + sender;
  AlterPartitionRequest::TopicData t;
  t.topic_id = kTopic;
  AlterPartitionRequest::PartitionData p;
  p.partition_index = 0;
  p.leader_epoch = leader_epoch;
  p.partition_epoch = partition_epoch;
  for (int32_t id : isr) p.new_isr_with_epochs.push_back({id, 100 + id});
  t.partitions.push_back(p);
  r.topics.push_back(t);
  return r;
}

int16_t partition_error(const AlterPartitionPlan& plan) {
  EXPECT_EQ(plan.response.error_code, 0);
  EXPECT_EQ(plan.response.topics.size(), 1u);
  EXPECT_EQ(plan.response.topics[0].partitions.size(), 1u);
  return plan.response.topics[0].partitions[0].error_code;
}

TEST(AlterPartition, AShrinkWritesAPartitionChangeRecordAndAnswersTheNewPartitionEpoch) {
  MetadataImage m = image();
  AlterPartitionPlan plan = plan_alter_partition(m, request({1, 2}), 3, kPolicy);
  ASSERT_EQ(partition_error(plan), 0);
  ASSERT_EQ(plan.records.size(), 1u);
  const auto& change = std::get<PartitionChangeRecord>(plan.records[0]);
  EXPECT_EQ(change.isr, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
  EXPECT_EQ(change.leader, PartitionChangeRecord::kNoLeaderChange);  // KAFKA-15021: no leader epoch bump
  const auto& answer = plan.response.topics[0].partitions[0];
  EXPECT_EQ(answer.leader_id, 1);
  EXPECT_EQ(answer.leader_epoch, 4);
  EXPECT_EQ(answer.partition_epoch, 8);
  EXPECT_EQ(answer.isr, (std::vector<int32_t>{1, 2}));
  // The committed record gives what the answer said.
  m.apply(plan.records[0]);
  const PartitionState& p = m.topic("t")->partitions[0];
  EXPECT_EQ(p.isr, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
  EXPECT_EQ(p.partition_epoch, 8);
  EXPECT_EQ(p.leader_epoch, LeaderEpoch(4));
  // And it survives the metadata log's codec.
  auto decoded = decode_metadata_record(encode_metadata_record(plan.records[0]));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(std::get<PartitionChangeRecord>(*decoded), change);
}

TEST(AlterPartition, StaleOrFutureEpochsAreRefusedAsKafka) {
  MetadataImage m = image();
  EXPECT_EQ(partition_error(plan_alter_partition(m, request({1, 2}, 3), 3, kPolicy)), int16_t(ErrorCode::kFencedLeaderEpoch));
  EXPECT_EQ(partition_error(plan_alter_partition(m, request({1, 2}, 4, 6), 3, kPolicy)),
            int16_t(ErrorCode::kInvalidUpdateVersion));
  // Newer than ours: this controller is behind.
  EXPECT_EQ(partition_error(plan_alter_partition(m, request({1, 2}, 5), 3, kPolicy)), int16_t(ErrorCode::kNotController));
  EXPECT_EQ(partition_error(plan_alter_partition(m, request({1, 2}, 4, 8), 3, kPolicy)), int16_t(ErrorCode::kNotController));
  EXPECT_TRUE(plan_alter_partition(m, request({1, 2}, 3), 3, kPolicy).records.empty());
}

TEST(AlterPartition, TheIsrMustBeWithinTheReplicasHoldTheLeaderAndComeFromTheLeader) {
  MetadataImage m = image();
  EXPECT_EQ(partition_error(plan_alter_partition(m, request({1, 4}), 3, kPolicy)), int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(partition_error(plan_alter_partition(m, request({2, 3}), 3, kPolicy)), int16_t(ErrorCode::kInvalidRequest));
  EXPECT_EQ(partition_error(plan_alter_partition(m, request({1, 2}, 4, 7, 2), 3, kPolicy)),
            int16_t(ErrorCode::kInvalidRequest));  // broker 2 is not the leader
}

TEST(AlterPartition, AFencedShuttingDownOrReincarnatedMemberIsIneligible) {
  MetadataImage m = image();
  m.apply(BrokerRegistrationChangeRecord{NodeId(3), BrokerEpoch(103), BrokerRegistrationChangeRecord::Fencing::kFence,
                                         false});
  EXPECT_EQ(partition_error(plan_alter_partition(m, request({1, 2, 3}), 3, kPolicy)),
            int16_t(ErrorCode::kIneligibleReplica));
  // Before v2 the same is OPERATION_NOT_ATTEMPTED.
  AlterPartitionRequest v1 = request({});
  v1.topics[0].topic_name = "t";
  v1.topics[0].partitions[0].new_isr = {1, 2, 3};
  EXPECT_EQ(partition_error(plan_alter_partition(m, v1, 1, kPolicy)), int16_t(ErrorCode::kOperationNotAttempted));

  MetadataImage shutting = image();
  shutting.apply(BrokerRegistrationChangeRecord{NodeId(2), BrokerEpoch(102),
                                                BrokerRegistrationChangeRecord::Fencing::kNone, true});
  EXPECT_EQ(partition_error(plan_alter_partition(shutting, request({1, 2}), 3, kPolicy)),
            int16_t(ErrorCode::kIneligibleReplica));

  // KIP-903: the epoch the leader saw in broker 2's fetches is an older
  // incarnation's.
  AlterPartitionRequest stale = request({1, 2});
  stale.topics[0].partitions[0].new_isr_with_epochs[1].broker_epoch = 99;
  EXPECT_EQ(partition_error(plan_alter_partition(image(), stale, 3, kPolicy)), int16_t(ErrorCode::kIneligibleReplica));
  // -1: the leader did not know it (no check).
  stale.topics[0].partitions[0].new_isr_with_epochs[1].broker_epoch = -1;
  EXPECT_EQ(partition_error(plan_alter_partition(image(), stale, 3, kPolicy)), 0);
}

TEST(AlterPartition, UnknownTopicsPartitionsAndStaleSendersAreAnswered) {
  MetadataImage m = image();
  AlterPartitionRequest r = request({1, 2});
  r.topics[0].topic_id.bytes[0] = 99;
  EXPECT_EQ(partition_error(plan_alter_partition(m, r, 3, kPolicy)), int16_t(ErrorCode::kUnknownTopicId));
  r = request({1, 2});
  r.topics[0].partitions[0].partition_index = 5;
  EXPECT_EQ(partition_error(plan_alter_partition(m, r, 3, kPolicy)), int16_t(ErrorCode::kUnknownTopicOrPartition));
  r = request({1, 2});
  r.broker_epoch = 7;
  AlterPartitionPlan stale = plan_alter_partition(m, r, 3, kPolicy);
  EXPECT_EQ(stale.response.error_code, int16_t(ErrorCode::kStaleBrokerEpoch));
  EXPECT_TRUE(stale.records.empty());
}

TEST(AlterPartition, TheSameIsrWritesNothingAndAnswersTheCurrentState) {
  AlterPartitionPlan plan = plan_alter_partition(image(), request({1, 2, 3}), 3, kPolicy);
  EXPECT_EQ(partition_error(plan), 0);
  EXPECT_TRUE(plan.records.empty());
  EXPECT_EQ(plan.response.topics[0].partitions[0].partition_epoch, 7);
}

TEST(AlterPartition, TheRequestSurvivesItsCodecAtEveryVersion) {
  for (int16_t v = 0; v <= 3; ++v) {
    AlterPartitionRequest r = request({1, 2});
    r.topics[0].partitions[0].new_isr = {1, 2};
    if (v < 2) r.topics[0].topic_name = "t";
    OutBuffer out;
    protocol::Encoder w(out);
    r.encode(w, v);
    ByteReader reader(out.bytes());
    AlterPartitionRequest back;
    ASSERT_TRUE(back.decode(reader, v)) << v;
    EXPECT_TRUE(reader.at_end());
    AlterPartitionPlan plan = plan_alter_partition(image(), back, v, kPolicy);
    EXPECT_EQ(partition_error(plan), 0) << v;
    EXPECT_EQ(plan.records.size(), 1u) << v;
  }
}

TEST(AlterPartition, AShrinkBelowMinIsrKeepsTheLeaversAsEligibleLeadersThroughTheCodec) {
  MetadataImage m = image();
  AlterPartitionPlan plan = plan_alter_partition(m, request({1}), 3, ElectionPolicy{.min_isr_default = 2});
  ASSERT_EQ(plan.records.size(), 1u);
  const auto& change = std::get<PartitionChangeRecord>(plan.records[0]);
  EXPECT_EQ(change.isr, (std::vector<NodeId>{NodeId(1)}));
  EXPECT_EQ(change.elr, (std::vector<NodeId>{NodeId(2), NodeId(3)})) << "they hold every committed record";
  auto decoded = decode_metadata_record(encode_metadata_record(plan.records[0]));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(std::get<PartitionChangeRecord>(*decoded), change);
  m.apply(change);
  // The image's snapshot form (PartitionRecord) keeps them too.
  for (const MetadataRecord& r : m.to_records()) {
    if (!std::holds_alternative<PartitionRecord>(r)) continue;
    auto back = decode_metadata_record(encode_metadata_record(r));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(std::get<PartitionRecord>(*back).elr, (std::vector<NodeId>{NodeId(2), NodeId(3)}));
  }
  // Back at min ISR: the ELR is cleared.
  AlterPartitionPlan grow = plan_alter_partition(m, request({1, 2}, 4, 8), 3, ElectionPolicy{.min_isr_default = 2});
  ASSERT_EQ(grow.records.size(), 1u);
  EXPECT_EQ(std::get<PartitionChangeRecord>(grow.records[0]).elr, std::vector<NodeId>{});
}

}  // namespace
}  // namespace samsa
