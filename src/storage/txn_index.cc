#include "storage/txn_index.h"

#include "base/byte_reader.h"
#include "base/log.h"
#include "storage/segment.h"

namespace samsa {
namespace {

Error corrupt(const std::string& why) { return Error(ErrorKind::kCorrupt, "txn index: " + why); }

}  // namespace

void encode_aborted_txn(const AbortedTxn& txn, uint8_t out[kTxnIndexEntryBytes]) {
  store_be16(out, uint16_t(kTxnIndexVersion));
  store_be64(out + 2, uint64_t(txn.producer_id.value()));
  store_be64(out + 10, uint64_t(txn.first_offset.value()));
  store_be64(out + 18, uint64_t(txn.last_offset.value()));
  store_be64(out + 26, uint64_t(txn.last_stable_offset.value()));
}

Result<std::vector<AbortedTxn>> decode_txn_index(ByteView bytes, size_t* valid_prefix) {
  std::vector<AbortedTxn> out;
  if (valid_prefix) *valid_prefix = 0;
  if (bytes.size() > kMaxTxnIndexBytes) return corrupt("larger than the limit");
  size_t count = bytes.size() / kTxnIndexEntryBytes;
  out.reserve(count);
  ByteReader r(bytes);
  for (size_t i = 0; i < count; ++i) {
    int16_t version = r.read_i16();
    AbortedTxn t{ProducerId(r.read_i64()), Offset(r.read_i64()), Offset(r.read_i64()), Offset(r.read_i64())};
    ASSERT(r.ok());  // count whole entries were present
    if (version != kTxnIndexVersion) return corrupt("entry " + std::to_string(i) + ": version " + std::to_string(version));
    if (t.producer_id.value() < 0 || t.first_offset.value() < 0 || t.first_offset > t.last_offset ||
        t.last_stable_offset.value() < 0) {
      return corrupt("entry " + std::to_string(i) + ": not an aborted transaction's offsets");
    }
    if (!out.empty() && out.back().last_offset >= t.last_offset) {
      return corrupt("entry " + std::to_string(i) + ": out of marker order");
    }
    out.push_back(t);
    if (valid_prefix) *valid_prefix = out.size();
  }
  if (bytes.size() % kTxnIndexEntryBytes != 0) return corrupt("a partial entry at the end");
  return out;
}

std::filesystem::path txn_index_path(const std::filesystem::path& dir, Offset base) {
  return dir / (Segment::file_stem(base) + ".txnindex");
}

Status TxnIndex::load() {
  entries_.clear();
  file_.reset();
  ASSIGN_OR_RETURN(bool present, files_.exists(path_));
  if (!present) return ok_status();
  ASSIGN_OR_RETURN(file_, files_.open(path_, OpenMode::kReadWrite));
  ASSIGN_OR_RETURN(int64_t size, file_->size());
  size_t wanted = size_t(std::min<int64_t>(size, int64_t(kMaxTxnIndexBytes) + 1));
  Bytes bytes(wanted);
  ASSIGN_OR_RETURN(size_t n, file_->read_at(bytes.data(), wanted, 0));
  bytes.resize(n);
  size_t valid = 0;
  auto decoded = decode_txn_index(bytes, &valid);
  if (decoded.ok()) {
    entries_ = std::move(decoded).value();
    return ok_status();
  }
  LOG_WARN("storage", "{}: {}; keeping its first {} entries", path_.string(), decoded.error().message(), valid);
  auto prefix = decode_txn_index(ByteView(bytes).first(valid * kTxnIndexEntryBytes));
  ASSERT(prefix.ok());
  entries_ = std::move(prefix).value();
  RETURN_IF_ERROR(file_->truncate(int64_t(valid * kTxnIndexEntryBytes)));
  dirty_ = true;
  return ok_status();
}

Status TxnIndex::append(const AbortedTxn& txn) {
  ASSERT(entries_.empty() || entries_.back().last_offset < txn.last_offset);
  if (!file_) {
    ASSIGN_OR_RETURN(file_, files_.open(path_, OpenMode::kCreate));
  }
  uint8_t entry[kTxnIndexEntryBytes];
  encode_aborted_txn(txn, entry);
  RETURN_IF_ERROR(file_->write_at(ByteView(entry, sizeof entry), int64_t(entries_.size() * kTxnIndexEntryBytes)));
  entries_.push_back(txn);
  dirty_ = true;
  return ok_status();
}

Status TxnIndex::truncate_to(Offset offset) {
  size_t keep = entries_.size();
  while (keep > 0 && entries_[keep - 1].last_offset >= offset) --keep;
  if (keep == entries_.size()) return ok_status();
  ASSERT(file_);
  RETURN_IF_ERROR(file_->truncate(int64_t(keep * kTxnIndexEntryBytes)));
  entries_.resize(keep);
  dirty_ = true;
  return ok_status();
}

}  // namespace samsa
