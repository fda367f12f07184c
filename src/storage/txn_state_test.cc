// The transaction side of the producer state and the `.txnindex` codec:
// transactions opened by transactional batches and closed by markers, the
// marker epoch rules, the first open transaction, the snapshot's
// CurrentTxnFirstOffset, and the strict txnindex reader.
#include <gtest/gtest.h>

#include "base/bytes.h"
#include "storage/producer_snapshot.h"
#include "storage/producer_state.h"
#include "storage/txn_index.h"

namespace samsa {
namespace {

ProducerBatch txn_batch(int64_t pid, int16_t epoch, int32_t seq, int64_t first, int64_t last) {
  return ProducerBatch{ProducerId(pid), ProducerEpoch(epoch), seq, seq + int32_t(last - first),
                       Offset(first),   Offset(last),         100, true};
}

ProducerMarker marker(int64_t pid, int16_t epoch, bool commit, int64_t offset, int32_t coordinator_epoch = 0) {
  return ProducerMarker{ProducerId(pid), ProducerEpoch(epoch), commit, coordinator_epoch, Offset(offset), 200};
}

TEST(TxnState, TransactionalBatchOpensAndMarkerCloses) {
  ProducerStateTable t;
  EXPECT_FALSE(t.first_open_txn_offset());
  t.apply(txn_batch(1, 0, 0, 10, 12));
  t.apply(txn_batch(1, 0, 3, 13, 14));  // the same transaction: its first offset stays
  t.apply(txn_batch(2, 0, 0, 15, 15));
  EXPECT_EQ(t.first_open_txn_offset(), Offset(10));
  EXPECT_EQ(t.find(ProducerId(1))->current_txn_first_offset, Offset(10));
  auto done = t.apply_marker(marker(1, 0, /*commit=*/false, 16));
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, (CompletedTxn{ProducerId(1), Offset(10), Offset(16), true}));
  EXPECT_EQ(t.first_open_txn_offset(), Offset(15));  // producer 2's still open
  EXPECT_FALSE(t.find(ProducerId(1))->current_txn_first_offset);
  EXPECT_FALSE(t.apply_marker(marker(1, 0, true, 17)));  // no open transaction: nothing completed
  auto commit = t.apply_marker(marker(2, 0, true, 18));
  ASSERT_TRUE(commit);
  EXPECT_FALSE(commit->aborted);
  EXPECT_FALSE(t.first_open_txn_offset());
}

TEST(TxnState, NonTransactionalBatchOpensNothing) {
  ProducerStateTable t;
  ProducerBatch b = txn_batch(1, 0, 0, 0, 4);
  b.transactional = false;
  t.apply(b);
  EXPECT_FALSE(t.first_open_txn_offset());
}

TEST(TxnState, MarkerEpochRules) {
  ProducerStateTable t;
  EXPECT_FALSE(t.check_marker(ProducerId(1), ProducerEpoch(0), 0, false));  // unknown producer: accepted
  t.apply(txn_batch(1, 5, 0, 0, 0));
  EXPECT_EQ(t.check_marker(ProducerId(1), ProducerEpoch(4), 0, false), ProducerFault::kInvalidProducerEpoch);
  EXPECT_FALSE(t.check_marker(ProducerId(1), ProducerEpoch(5), 0, false));  // equal: the classic protocol
  EXPECT_FALSE(t.check_marker(ProducerId(1), ProducerEpoch(6), 0, false));
  // KIP-890 V2 / KIP-1228: strictly higher.
  EXPECT_EQ(t.check_marker(ProducerId(1), ProducerEpoch(5), 0, true), ProducerFault::kInvalidProducerEpoch);
  EXPECT_FALSE(t.check_marker(ProducerId(1), ProducerEpoch(6), 0, true));
  // A bumped marker epoch is the producer's from then on, with a fresh sequence.
  t.apply_marker(marker(1, 6, false, 1, /*coordinator_epoch=*/3));
  EXPECT_EQ(t.find(ProducerId(1))->epoch, ProducerEpoch(6));
  EXPECT_TRUE(t.find(ProducerId(1))->batches.empty());
  EXPECT_EQ(t.check_marker(ProducerId(1), ProducerEpoch(6), 2, false), ProducerFault::kCoordinatorFenced);
  EXPECT_FALSE(t.check_marker(ProducerId(1), ProducerEpoch(6), 3, false));
}

TEST(TxnState, OpenTransactionSurvivesExpiryAndLogStart) {
  ProducerStateTable t;
  t.apply(txn_batch(1, 0, 0, 0, 3));
  EXPECT_EQ(t.remove_expired(1'000'000, 1), 0u);
  t.remove_before(Offset(10));
  ASSERT_TRUE(t.find(ProducerId(1)));
  EXPECT_EQ(t.first_open_txn_offset(), Offset(0));
}

TEST(TxnState, SnapshotCarriesOpenTransactionAndCoordinatorEpoch) {
  ProducerStateTable t;
  t.apply(txn_batch(1, 0, 0, 10, 12));
  t.apply(txn_batch(2, 1, 0, 13, 13));
  t.apply_marker(marker(2, 1, true, 14, 9));
  Bytes bytes = encode_producer_snapshot(t.producers());
  auto back = decode_producer_snapshot(bytes, Offset(15));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->at(ProducerId(1)).current_txn_first_offset, Offset(10));
  EXPECT_FALSE(back->at(ProducerId(2)).current_txn_first_offset);
  EXPECT_EQ(back->at(ProducerId(2)).coordinator_epoch, 9);
  // An open transaction at or above the snapshot's own offset is no log's state.
  EXPECT_FALSE(decode_producer_snapshot(bytes, Offset(10)).ok());
}

TEST(TxnIndexCodec, EntriesRoundTripIn34Bytes) {
  std::vector<AbortedTxn> txns{{ProducerId(7), Offset(3), Offset(9), Offset(10)},
                               {ProducerId(8), Offset(5), Offset(12), Offset(11)}};
  Bytes bytes(txns.size() * kTxnIndexEntryBytes);
  for (size_t i = 0; i < txns.size(); ++i) encode_aborted_txn(txns[i], bytes.data() + i * kTxnIndexEntryBytes);
  EXPECT_EQ(kTxnIndexEntryBytes, 34u);
  EXPECT_EQ(load_be16(bytes.data()), 0);                          // version
  EXPECT_EQ(int64_t(load_be64(bytes.data() + 2)), 7);             // producer id
  EXPECT_EQ(int64_t(load_be64(bytes.data() + 26)), 10);           // last stable offset
  auto back = decode_txn_index(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, txns);
}

TEST(TxnIndexCodec, StrictReading) {
  AbortedTxn good{ProducerId(7), Offset(3), Offset(9), Offset(10)};
  Bytes bytes(2 * kTxnIndexEntryBytes);
  encode_aborted_txn(good, bytes.data());
  encode_aborted_txn({ProducerId(7), Offset(11), Offset(12), Offset(13)}, bytes.data() + kTxnIndexEntryBytes);
  ASSERT_TRUE(decode_txn_index(bytes).ok());
  auto bad = [&](auto plant) {
    Bytes b = bytes;
    plant(b);
    size_t prefix = 99;
    auto r = decode_txn_index(b, &prefix);
    EXPECT_FALSE(r.ok());
    return prefix;
  };
  EXPECT_EQ(bad([](Bytes& b) { b.pop_back(); }), 1u);                                     // a partial entry
  EXPECT_EQ(bad([](Bytes& b) { store_be16(b.data() + 34, 1); }), 1u);                     // another version
  EXPECT_EQ(bad([](Bytes& b) { store_be64(b.data() + 34 + 2, uint64_t(-5)); }), 1u);      // negative producer
  EXPECT_EQ(bad([](Bytes& b) { store_be64(b.data() + 34 + 10, 20); }), 1u);               // first > last
  EXPECT_EQ(bad([](Bytes& b) {                                                             // out of order
              store_be64(b.data() + 34 + 10, 4);
              store_be64(b.data() + 34 + 18, 9);
            }),
            1u);
  EXPECT_EQ(bad([](Bytes& b) { store_be64(b.data() + 26, uint64_t(-1)); }), 0u);          // negative lso
  Bytes huge(kMaxTxnIndexBytes + kTxnIndexEntryBytes);
  EXPECT_FALSE(decode_txn_index(huge).ok());
}

}  // namespace
}  // namespace samsa
