#include "storage/log_batches.h"

#include "base/file_region.h"

namespace samsa {

Result<Offset> for_each_batch(Log& log, int32_t chunk_bytes, const std::function<Status(const BatchRef&)>& fn) {
  const Offset end = log.log_end_offset();
  Offset next = log.log_start_offset();
  while (next < end) {
    ASSIGN_OR_RETURN(ReadResult read, log.read(next, chunk_bytes, end, true));
    if (read.records.size == 0) break;
    ASSIGN_OR_RETURN(Bytes bytes, read_region(read.records));
    BatchIterator batches(bytes);
    const Offset before = next;
    while (auto batch = batches.next()) {
      if (batch->header.last_offset() < next) continue;  // handed over with the previous chunk
      RETURN_IF_ERROR(fn(*batch));
      next = batch->header.last_offset() + 1;
    }
    if (next == before) break;  // no whole batch: cannot progress
  }
  return next;
}

}  // namespace samsa
