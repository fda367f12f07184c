#include "model/control_record.h"

#include <gtest/gtest.h>

#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_header.h"

namespace samsa {
namespace {

TEST(ControlRecord, MarkerBatchRoundTripsWithKafkasLayout) {
  auto batch = build_txn_marker_batch(ProducerId(42), ProducerEpoch(3), {ControlType::kCommit, 7}, 1234);
  ASSERT_TRUE(batch.ok());
  RecordBatchHeader h(batch->data());
  EXPECT_TRUE(h.is_control());
  EXPECT_TRUE(h.is_transactional());
  EXPECT_EQ(h.producer_id(), ProducerId(42));
  EXPECT_EQ(h.producer_epoch(), ProducerEpoch(3));
  EXPECT_EQ(h.base_sequence(), -1);
  EXPECT_EQ(h.records_count(), 1);
  // Kafka's EndTransactionMarker: key version 0 + type 1, value version 0 + epoch.
  Record record;
  ASSERT_TRUE(parse_record(ByteView(*batch).subspan(batch_layout::kHeaderSize), record));
  ASSERT_TRUE(record.key && record.value);
  EXPECT_EQ(Bytes(record.key->begin(), record.key->end()), (Bytes{0, 0, 0, 1}));
  EXPECT_EQ(Bytes(record.value->begin(), record.value->end()), (Bytes{0, 0, 0, 0, 0, 7}));
  auto marker = parse_txn_marker(*batch);
  ASSERT_TRUE(marker);
  EXPECT_EQ(*marker, (TxnMarker{ControlType::kCommit, 7}));
  // A valid batch for a broker's validation (not for a client's).
  ValidateOptions options;
  options.deep = true;
  options.from_client = false;
  EXPECT_TRUE(validate_records(*batch, options).ok());
}

TEST(ControlRecord, OtherBatchesAndShortBytesAreNoMarker) {
  auto abort = build_txn_marker_batch(ProducerId(1), ProducerEpoch(0), {ControlType::kAbort, 0}, 1);
  ASSERT_TRUE(abort.ok());
  EXPECT_EQ(parse_txn_marker(*abort)->type, ControlType::kAbort);
  for (size_t cut = 0; cut < abort->size(); ++cut) {
    EXPECT_FALSE(parse_txn_marker(ByteView(*abort).first(cut))) << cut;
  }
  Bytes plain = *abort;
  store_be16(plain.data() + batch_layout::kAttributes, batch_attr::kTransactional);  // not control
  EXPECT_FALSE(parse_txn_marker(plain));
}

}  // namespace
}  // namespace samsa
