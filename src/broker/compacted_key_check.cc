#include "broker/compacted_key_check.h"

#include "model/record.h"
#include "model/record_batch.h"

namespace samsa {
namespace {

// Kafka's LogValidator.processRecordErrors shows at most three.
constexpr size_t kShownRecordErrors = 3;

std::string partition_message(const std::vector<int32_t>& indexes, const std::string& record_message) {
  std::string shown;
  for (size_t i = 0; i < indexes.size() && i < kShownRecordErrors; ++i) {
    if (i > 0) shown += ", ";
    shown += "RecordError(batchIndex=" + std::to_string(indexes[i]) + ", message='" + record_message + "')";
  }
  return "One or more records have been rejected due to " + std::to_string(indexes.size()) +
         " record errors in total, and only showing the first three errors at most: [" + shown + "]";
}

}  // namespace

KeylessRecords find_keyless_records(ByteView batches, const std::string& partition_name) {
  KeylessRecords out;
  BatchIterator it(batches);
  while (auto batch = it.next()) {
    auto records = RecordIterator::open(batch->bytes);
    if (!records.ok()) continue;  // validate_records already accepted it; nothing to judge here
    Record record;
    for (int32_t index = 0; records->next(record); ++index) {
      if (!record.key) out.record_indexes.push_back(index);
    }
    if (out.found()) {
      out.record_message = "Compacted topic cannot accept message without key in topic partition " + partition_name + ".";
      out.message = partition_message(out.record_indexes, out.record_message);
      return out;
    }
  }
  return out;
}

}  // namespace samsa
