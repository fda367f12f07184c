#include "storage/producer_state.h"

#include <gtest/gtest.h>

namespace samsa {
namespace {

ProducerBatch batch(int64_t pid, int16_t epoch, int32_t first_seq, int32_t last_seq, int64_t first_offset,
                    int64_t ts = 100) {
  return ProducerBatch{ProducerId(pid), ProducerEpoch(epoch), first_seq, last_seq, Offset(first_offset),
                       Offset(first_offset + (last_seq - first_seq)), ts};
}

ProducerVerdict check(const ProducerStateTable& t, int64_t pid, int16_t epoch, int32_t first, int32_t last) {
  return t.check(ProducerId(pid), ProducerEpoch(epoch), first, last);
}

TEST(ProducerState, InSequenceBatchesAppend) {
  ProducerStateTable t;
  EXPECT_FALSE(check(t, 1, 0, 0, 4).fault);
  t.apply(batch(1, 0, 0, 4, 0));
  ProducerVerdict next = check(t, 1, 0, 5, 9);
  EXPECT_FALSE(next.fault);
  EXPECT_FALSE(next.duplicate);
}

TEST(ProducerState, DuplicateOfOneOfTheLastFiveAnswersItsOffsets) {
  ProducerStateTable t;
  for (int i = 0; i < 7; ++i) t.apply(batch(1, 0, i * 10, i * 10 + 9, 100 + i * 10));
  ASSERT_EQ(t.find(ProducerId(1))->batches.size(), ProducerStateTable::kMaxBatches);
  ProducerVerdict dup = check(t, 1, 0, 30, 39);
  ASSERT_TRUE(dup.duplicate);
  EXPECT_EQ(dup.duplicate->first_offset, Offset(130));
  EXPECT_EQ(dup.duplicate->last_offset, Offset(139));
  // Older than the last five: no longer known, and out of sequence.
  ProducerVerdict old = check(t, 1, 0, 10, 19);
  EXPECT_FALSE(old.duplicate);
  EXPECT_EQ(old.fault, ProducerFault::kOutOfOrderSequence);
}

TEST(ProducerState, GapIsOutOfOrder) {
  ProducerStateTable t;
  t.apply(batch(1, 0, 0, 4, 0));
  EXPECT_EQ(check(t, 1, 0, 6, 9).fault, ProducerFault::kOutOfOrderSequence);
  EXPECT_EQ(check(t, 1, 0, 3, 7).fault, ProducerFault::kOutOfOrderSequence);  // overlaps, not a duplicate
}

TEST(ProducerState, OlderEpochIsInvalidNewerRestartsAtZero) {
  ProducerStateTable t;
  t.apply(batch(1, 3, 0, 4, 0));
  EXPECT_EQ(check(t, 1, 2, 5, 5).fault, ProducerFault::kInvalidProducerEpoch);
  EXPECT_EQ(check(t, 1, 4, 5, 5).fault, ProducerFault::kOutOfOrderSequence);
  EXPECT_FALSE(check(t, 1, 4, 0, 0).fault);
  t.apply(batch(1, 4, 0, 0, 5));
  EXPECT_EQ(t.find(ProducerId(1))->epoch, ProducerEpoch(4));
  EXPECT_EQ(t.find(ProducerId(1))->batches.size(), 1u);  // the old epoch's batches went
}

TEST(ProducerState, UnknownProducerTakesAnySequence) {
  // KIP-360 (Kafka 2.5+): no UNKNOWN_PRODUCER_ID from the broker.
  ProducerStateTable t;
  EXPECT_FALSE(check(t, 9, 0, 42, 50).fault);
}

TEST(ProducerState, SequenceWrapsAtInt32Max) {
  ProducerStateTable t;
  t.apply(batch(1, 0, INT32_MAX - 1, INT32_MAX, 0));
  EXPECT_FALSE(check(t, 1, 0, 0, 3).fault);
}

TEST(ProducerState, LogStartForgetsBatchesWhollyBelowIt) {
  ProducerStateTable t;
  t.apply(batch(1, 0, 0, 4, 0));
  t.apply(batch(1, 0, 5, 9, 5));
  t.apply(batch(2, 0, 0, 0, 10));
  t.remove_before(Offset(5));
  ASSERT_NE(t.find(ProducerId(1)), nullptr);
  EXPECT_EQ(t.find(ProducerId(1))->batches.size(), 1u);  // 5-9 stays
  EXPECT_FALSE(check(t, 1, 0, 0, 4).duplicate);          // 0-4 is gone
  EXPECT_TRUE(check(t, 1, 0, 5, 9).duplicate);
  t.remove_before(Offset(10));
  EXPECT_EQ(t.find(ProducerId(1)), nullptr);
  EXPECT_NE(t.find(ProducerId(2)), nullptr);
}

TEST(ProducerState, IdleProducersExpire) {
  ProducerStateTable t;
  t.apply(batch(1, 0, 0, 0, 0, /*ts=*/1000));
  t.apply(batch(2, 0, 0, 0, 1, /*ts=*/5000));
  EXPECT_EQ(t.remove_expired(/*now=*/6000, /*expiration=*/4000), 1u);
  EXPECT_EQ(t.find(ProducerId(1)), nullptr);
  EXPECT_NE(t.find(ProducerId(2)), nullptr);
}

}  // namespace
}  // namespace samsa
