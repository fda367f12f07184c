#pragma once
// TxnIndex: the `.txnindex` of a segment, the transactions aborted by a
// marker in that segment (Kafka's TransactionIndex). Entry (34 bytes, BE):
//
//   version int16 (0) | producer_id int64 | first_offset int64 |
//   last_offset int64 (the abort marker's offset) | last_stable_offset int64
//
// last_stable_offset is the partition's LSO once this abort was appended
// (the first offset of the earliest transaction still open, which may be
// below this one's, else the marker's offset + 1): a read_committed fetch that collects aborted
// transactions stops at the first segment whose entry has an LSO at or past
// its range (Kafka's collectAbortedTxns). Entries are in marker order. The
// file exists only for a segment that has had an abort (created at the
// first one, as Kafka's is). docs/formats/txn-index.md.
//
// Recovery: the entries are derived from the log and the producer state,
// so the Log re-derives every entry at or above the offset its producer
// state is replayed from (truncate_to drops them first); below it, the file
// is trusted like the other indexes, read strictly (decode_txn_index).

#include <cstdint>
#include <filesystem>
#include <vector>

#include "base/bytes.h"
#include "base/file.h"
#include "base/result.h"
#include "io/file_system.h"
#include "model/ids.h"

namespace samsa {

struct AbortedTxn {
  ProducerId producer_id{-1};
  Offset first_offset{0};
  Offset last_offset{0};
  Offset last_stable_offset{0};
  bool operator==(const AbortedTxn&) const = default;
};

inline constexpr int16_t kTxnIndexVersion = 0;
inline constexpr size_t kTxnIndexEntryBytes = 2 + 8 + 8 + 8 + 8;
// A written limit on what a load reads: about two million aborts in one
// segment, beyond what a 1 GiB segment's markers (79 bytes each) can hold.
inline constexpr size_t kMaxTxnIndexBytes = 64 << 20;

void encode_aborted_txn(const AbortedTxn& txn, uint8_t out[kTxnIndexEntryBytes]);
// The whole entries of a file's bytes. kCorrupt when the size is over the
// limit or not a multiple of the entry, an entry has another version, a
// negative producer id or offset, first > last, or the
// entries are not in marker order; `valid_prefix` (when given) is then the
// number of entries before the first bad one.
Result<std::vector<AbortedTxn>> decode_txn_index(ByteView bytes, size_t* valid_prefix = nullptr);

std::filesystem::path txn_index_path(const std::filesystem::path& dir, Offset base);

class TxnIndex {
 public:
  TxnIndex(FileSystem& files, std::filesystem::path path) : files_(files), path_(std::move(path)) {}
  // Reads the file if there is one; a bad tail is cut (logged) keeping the
  // valid entries before it.
  Status load();

  const std::vector<AbortedTxn>& entries() const { return entries_; }
  const std::filesystem::path& path() const { return path_; }
  bool has_file() const { return file_ != nullptr; }
  // The open file when it has writes not yet fsynced (null otherwise).
  FilePtr file_to_flush() const { return dirty_ ? file_ : nullptr; }
  void mark_flushed() { dirty_ = false; }

  // Appends one entry, creating the file at the first.
  Status append(const AbortedTxn& txn);
  // Drops the entries whose marker is at or above `offset`.
  Status truncate_to(Offset offset);
  // Forgets the file (it was renamed or removed by the segment).
  void close() { file_.reset(); }

 private:
  FileSystem& files_;
  std::filesystem::path path_;
  FilePtr file_;
  std::vector<AbortedTxn> entries_;
  bool dirty_ = false;
};

}  // namespace samsa
