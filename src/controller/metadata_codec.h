#pragma once
// Encoding of metadata records as the values of records in the
// `__cluster_metadata` log, framed like KRaft's ApiMessageAndVersion:
//   uvarint frame version (1) | uvarint record type | uvarint record version | body
// Record types are KRaft's ids (RegisterBroker 0, UnregisterBroker 1, Topic 2,
// Partition 3, Config 4, FenceBroker 7, UnfenceBroker 8, RemoveTopic 9,
// ClientQuota 14, BrokerRegistrationChange 17); bodies are our own
// definitions in src/protocol/messages/*_record.msg, written at their newest
// version, every version we define read. docs/formats/metadata-log.md.

#include "base/bytes.h"
#include "base/result.h"
#include "controller/metadata_records.h"

namespace samsa {

Bytes encode_metadata_record(const MetadataRecord& record);
Result<MetadataRecord> decode_metadata_record(ByteView value);

}  // namespace samsa
