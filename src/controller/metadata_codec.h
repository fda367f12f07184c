#pragma once
// Encoding of metadata records as the values of records in the
// `__cluster_metadata` log, framed like KRaft's ApiMessageAndVersion:
//   uvarint frame version (1) | uvarint record type | uvarint record version | body
// Record types are KRaft's ids (RegisterBroker 0, UnregisterBroker 1, Topic 2,
// Partition 3, Config 4, FenceBroker 7, UnfenceBroker 8, RemoveTopic 9,
// ClientQuota 14, BrokerRegistrationChange 17); bodies are our own
// definitions in src/protocol/messages/*_record.msg, written at their newest
// version, every version we define read. docs/formats/metadata-log.md.

#include <functional>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "controller/metadata_records.h"

namespace samsa {

Bytes encode_metadata_record(const MetadataRecord& record);
Result<MetadataRecord> decode_metadata_record(ByteView value);

// A batch of records as one RecordBatch v2 whose record values are the
// framed records above: what the local metadata log appends, what a Raft
// entry of the metadata quorum carries, and what a snapshot holds (the
// records that rebuild the image, MetadataImage::to_records).
Result<Bytes> encode_metadata_batch(const std::vector<MetadataRecord>& records, int64_t timestamp_ms);
// The records of the record batches in `bytes` (whole batches only: a
// partial or malformed one is corruption), skipping those below `from`.
// Each record is handed with its offset. Bounded by the bytes: no record
// without its bytes is allocated.
Status decode_metadata_batches(ByteView bytes, Offset from,
                               const std::function<void(Offset, MetadataRecord)>& on_record);
Result<std::vector<MetadataRecord>> decode_metadata_batch(ByteView bytes);

}  // namespace samsa
