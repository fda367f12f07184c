#pragma once
// for_each_batch: a whole log read back batch by batch, for the loaders that
// rebuild state from a log at start (the metadata image, the Raft entries,
// the groups and offsets of __consumer_offsets).

#include <cstdint>
#include <functional>

#include "base/result.h"
#include "model/record_batch.h"
#include "storage/log.h"

namespace samsa {

// Reads `log` from its start to its end, `chunk_bytes` at a time, and hands
// each whole batch to `fn` once, in offset order; the first error `fn`
// returns ends the scan and is returned. Returns the offset after the last
// batch handed over: below the log end when what follows is not one whole
// batch (nothing more can be read).
Result<Offset> for_each_batch(Log& log, int32_t chunk_bytes, const std::function<Status(const BatchRef&)>& fn);

}  // namespace samsa
