#pragma once
// A compacted topic needs a key on every record: compaction keeps the last
// record per key, so a record without one could never be compacted. Kafka
// refuses such records at append (LogValidator.validateKey, 0.10-4.x) with
// INVALID_RECORD, per batch: the first batch holding keyless records fails
// the partition's produce, and each keyless record of it is listed in the
// response's record_errors (Produce v8+) by its index in the batch.

#include <cstdint>
#include <string>
#include <vector>

#include "base/bytes.h"

namespace samsa {

struct KeylessRecords {
  std::vector<int32_t> record_indexes;  // within the first failing batch; empty: every record has a key
  std::string record_message;           // Kafka's per-record message
  std::string message;                  // Kafka's partition error message

  bool found() const { return !record_indexes.empty(); }
};

// `batches`: validated v2 batches (validate_records passed). `partition_name`
// is "topic-partition", as Kafka's TopicPartition prints.
KeylessRecords find_keyless_records(ByteView batches, const std::string& partition_name);

}  // namespace samsa
