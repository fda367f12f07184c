#pragma once
// CRC-32C (Castagnoli), the checksum of RecordBatch v2. Uses the SSE4.2
// crc32 instruction when the CPU has it (checked once), a table otherwise.

#include <cstdint>

#include "base/bytes.h"

namespace samsa {

// Extends a running crc (start with 0) over data.
uint32_t crc32c_extend(uint32_t crc, ByteView data);
inline uint32_t crc32c(ByteView data) { return crc32c_extend(0, data); }

}  // namespace samsa
