#pragma once
// Producer-state snapshots: `<20-digit offset>.snapshot` in the partition
// dir, the ProducerStateTable (producer_state.h) as it stood with every
// batch below that offset applied and none at or above it. Kafka's format
// (ProducerStateManager.writeSnapshot, PidSnapshot version 1), big-endian:
//
//   version  int16   1
//   crc      uint32  CRC-32C of every byte after this field
//   count    int32   number of entries
//   entries  count x 46 bytes:
//     producer_id int64, epoch int16, last_sequence int32, last_offset int64,
//     offset_delta int32 (last - first, of both offset and sequence),
//     timestamp int64, coordinator_epoch int32 (-1: no transactions),
//     current_txn_first_offset int64 (-1)
//
// Kafka writes one entry per producer, its last batch. Samsa writes one per
// retained batch (up to ProducerStateTable::kMaxBatches), oldest first, so
// that a retry of any of the last five batches is still answered as a
// duplicate after a restart. Kafka's reader keeps the last entry it reads
// for a producer id, the newest batch: a Samsa file reads in Kafka as
// Kafka's own would, and a Kafka file reads here with one batch a producer.
// Format doc: docs/formats/producer-state.md.
//
// Pure: bytes in, bytes out; Log (log_snapshots.cc) does the files.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "base/result.h"
#include "model/ids.h"
#include "storage/producer_state.h"

namespace samsa {

inline constexpr std::string_view kProducerSnapshotSuffix = ".snapshot";
inline constexpr int16_t kProducerSnapshotVersion = 1;
inline constexpr size_t kProducerSnapshotHeaderBytes = 2 + 4 + 4;
inline constexpr size_t kProducerSnapshotEntryBytes = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;
// A written limit on what a load reads: 1.4 million entries, far beyond
// any partition's producers (each is expired after producer.id.expiration.ms).
inline constexpr size_t kMaxProducerSnapshotBytes = 64 << 20;

using ProducerMap = std::map<ProducerId, ProducerEntry>;

std::filesystem::path producer_snapshot_path(const std::filesystem::path& dir, Offset offset);

Bytes encode_producer_snapshot(const ProducerMap& producers);

// kCorrupt for anything but a whole, valid version-1 file: short, a count
// that does not match the bytes present, a bad CRC, or entries that do not
// describe batches below `offset` (the snapshot's own offset).
Result<ProducerMap> decode_producer_snapshot(ByteView bytes, Offset offset);

}  // namespace samsa
