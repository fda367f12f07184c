#include "model/control_record.h"

#include "base/byte_reader.h"
#include "model/record.h"
#include "model/record_batch_builder.h"
#include "model/record_batch_header.h"

namespace samsa {

Result<Bytes> build_txn_marker_batch(ProducerId producer, ProducerEpoch epoch, TxnMarker marker,
                                     int64_t timestamp_ms) {
  RecordBatchOptions options;
  options.producer_id = producer;
  options.producer_epoch = epoch;
  options.base_sequence = -1;
  options.transactional = true;
  options.control = true;
  uint8_t key[4];
  store_be16(key, uint16_t(kControlRecordKeyVersion));
  store_be16(key + 2, uint16_t(marker.type));
  uint8_t value[6];
  store_be16(value, uint16_t(kTxnMarkerValueVersion));
  store_be32(value + 2, uint32_t(marker.coordinator_epoch));
  RecordBatchBuilder builder(options);
  builder.add(timestamp_ms, ByteView(key, sizeof key), ByteView(value, sizeof value));
  return builder.build();
}

std::optional<TxnMarker> parse_txn_marker(ByteView batch) {
  if (batch.size() < batch_layout::kHeaderSize) return std::nullopt;
  RecordBatchHeader h(batch.data());
  if (!h.is_control() || h.compression() != Compression::kNone || h.records_count() < 1) return std::nullopt;
  Record record;
  if (!parse_record(batch.subspan(batch_layout::kHeaderSize), record) || !record.key) return std::nullopt;
  ByteReader key(*record.key);
  key.read_i16();  // version: Kafka reads the type of any version
  int16_t type = key.read_i16();
  if (!key.ok() || (type != int16_t(ControlType::kAbort) && type != int16_t(ControlType::kCommit))) {
    return std::nullopt;
  }
  TxnMarker marker{ControlType(type), -1};
  if (record.value) {
    ByteReader value(*record.value);
    value.read_i16();
    int32_t epoch = value.read_i32();
    if (value.ok()) marker.coordinator_epoch = epoch;
  }
  return marker;
}

}  // namespace samsa
