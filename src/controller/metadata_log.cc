#include "controller/metadata_log.h"

#include <algorithm>

#include "base/log.h"
#include "controller/metadata_codec.h"

namespace samsa {
namespace {
// The Error kind that carries NOT_CONTROLLER: no other failure of a
// metadata log is "closed" (storage failures are kIo, kNoSpace, kCorrupt).
constexpr ErrorKind kNotControllerKind = ErrorKind::kClosed;
}  // namespace

void MetadataLog::remove_listener(MetadataListener* listener) { std::erase(listeners_, listener); }

Error MetadataLog::not_controller(std::string why) { return Error(kNotControllerKind, std::move(why)); }

bool MetadataLog::is_not_controller(const Error& error) { return error.kind() == kNotControllerKind; }

void MetadataLog::publish(Offset offset, const std::vector<MetadataRecord>& records, uint64_t tag) {
  for (const auto& r : records) image_.apply(r);
  image_.set_applied_offset(offset);
  for (MetadataListener* l : listeners_) l->on_committed(offset, records, tag);
}

void MetadataLog::publish_snapshot(Offset offset, const std::vector<MetadataRecord>& records) {
  image_ = MetadataImage();
  for (const auto& r : records) image_.apply(r);
  image_.set_applied_offset(offset);
  for (MetadataListener* l : listeners_) l->on_snapshot(offset);
}

std::optional<Bytes> MetadataLog::encode_image_snapshot(int64_t wall_ms) const {
  std::vector<MetadataRecord> records = image_.to_records();
  if (records.empty()) return Bytes();
  Result<Bytes> batch = encode_metadata_batch(records, wall_ms);
  if (!batch.ok()) {
    LOG_ERROR("metadata", "cannot encode a metadata snapshot: {}", batch.error().to_string());
    return std::nullopt;
  }
  return std::move(*batch);
}

}  // namespace samsa
