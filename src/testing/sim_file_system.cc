#include "testing/sim_file_system.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "base/assert.h"
#include <fmt/format.h>

namespace samsa::sim {

namespace fs = std::filesystem;

// Byte ranges ever written ([start, end) -> merged), for has_hole().
class Extents {
 public:
  void add(int64_t start, int64_t end) {
    if (start >= end) return;
    auto it = ranges_.upper_bound(start);
    if (it != ranges_.begin() && std::prev(it)->second >= start) --it;
    while (it != ranges_.end() && it->first <= end) {
      start = std::min(start, it->first);
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    ranges_[start] = end;
  }
  void cut(int64_t size) {
    while (!ranges_.empty() && std::prev(ranges_.end())->first >= size) ranges_.erase(std::prev(ranges_.end()));
    if (!ranges_.empty() && std::prev(ranges_.end())->second > size) std::prev(ranges_.end())->second = size;
  }
  bool covers(int64_t start, int64_t end) const {
    if (start >= end) return true;
    auto it = ranges_.upper_bound(start);
    if (it == ranges_.begin()) return false;
    --it;
    return it->first <= start && it->second >= end;
  }

 private:
  std::map<int64_t, int64_t> ranges_;
};

struct FileContent {
  Bytes data;
  Extents written;
  int64_t allocated = 0;

  void write(int64_t position, ByteView bytes) {
    if (bytes.empty()) return;
    size_t end = size_t(position) + bytes.size();
    if (end > data.size()) data.resize(end, 0);
    std::memcpy(data.data() + position, bytes.data(), bytes.size());
    written.add(position, int64_t(end));
  }
  void truncate(int64_t size) {
    data.resize(size_t(size), 0);
    written.cut(size);
  }
  void allocate(int64_t size) {
    allocated = std::max(allocated, size);
    if (size_t(size) > data.size()) data.resize(size_t(size), 0);
  }
  int64_t footprint() const { return std::max(int64_t(data.size()), allocated); }
};

struct FileChange {
  enum class Kind { kWrite, kTruncate, kAllocate };
  Kind kind = Kind::kWrite;
  int64_t position = 0;  // write: where; truncate/allocate: the size
  Bytes data;            // write only

  void apply_to(FileContent& c) const {
    switch (kind) {
      case Kind::kWrite: c.write(position, data); break;
      case Kind::kTruncate: c.truncate(position); break;
      case Kind::kAllocate: c.allocate(position); break;
    }
  }
};

struct SimInode {
  bool is_dir = false;
  // Directories: the entries now and as of the last sync_dir().
  std::map<std::string, std::shared_ptr<SimInode>> entries;
  std::map<std::string, std::shared_ptr<SimInode>> durable;
  // Files: the content now and as of the last sync(), and the changes since.
  FileContent now;
  FileContent synced;
  std::vector<FileChange> unsynced;
  std::vector<SimMapping*> mappings;
  int links = 0;
  int64_t charged = 0;
};

// A "MAP_SHARED" view: a copy the file updates on every write in range.
class SimMapping final : public FileMapping {
 public:
  SimMapping(std::shared_ptr<SimInode> inode, size_t size)
      : inode_(std::move(inode)), bytes_(inode_->now.data.begin(), inode_->now.data.begin() + ptrdiff_t(size)) {
    inode_->mappings.push_back(this);
  }
  ~SimMapping() override {
    auto& m = inode_->mappings;
    m.erase(std::remove(m.begin(), m.end(), this), m.end());
  }
  const uint8_t* data() const override { return bytes_.data(); }
  size_t size() const override { return bytes_.size(); }
  void written(int64_t position, ByteView data) {
    int64_t end = std::min(position + int64_t(data.size()), int64_t(bytes_.size()));
    if (position < end) std::memcpy(bytes_.data() + position, data.data(), size_t(end - position));
  }

 private:
  std::shared_ptr<SimInode> inode_;
  Bytes bytes_;
};

namespace {

// "/a/./b/../c" -> {"a", "c"}; relative paths are taken from the root.
std::vector<std::string> components(const fs::path& path) {
  std::vector<std::string> out;
  for (const auto& c : path.lexically_normal()) {
    std::string s = c.string();
    if (s.empty() || s == "/" || s == ".") continue;
    if (s == "..") {
      if (!out.empty()) out.pop_back();
      continue;
    }
    out.push_back(std::move(s));
  }
  return out;
}

Error fs_error(const std::string& verb, const fs::path& path, int err) {
  return errno_error(verb + " " + path.string(), err);
}

std::shared_ptr<SimInode> new_inode(bool is_dir) {
  auto inode = std::make_shared<SimInode>();
  inode->is_dir = is_dir;
  return inode;
}

}  // namespace

// ---------------------------------------------------------------- SimVolume

SimVolume::SimVolume(SimWorld& world, HostId host) : world_(world), host_(host), root_(new_inode(true)) {}

SimVolume::~SimVolume() = default;

uint64_t SimVolume::add_fault(DiskFault fault) {
  note(fmt::format("fault on: ops={:#x} path~'{}' {} times={} chance={}", fault.ops, fault.path_contains,
                   std::strerror(fault.err), fault.times, fault.chance));
  faults_.emplace_back(next_fault_, std::move(fault));
  return next_fault_++;
}

void SimVolume::remove_fault(uint64_t id) {
  std::erase_if(faults_, [id](const auto& f) { return f.first == id; });
  note(fmt::format("fault {} off", id));
}

void SimVolume::clear_faults() {
  faults_.clear();
  note("faults off");
}

void SimVolume::set_latency_us(int64_t min_us, int64_t max_us) {
  ASSERT(0 <= min_us && min_us <= max_us);
  latency_min_us_ = min_us;
  latency_max_us_ = max_us;
  note(fmt::format("latency {}..{}us", min_us, max_us));
}

int64_t SimVolume::draw_latency_ns() { return world_.rng().range(latency_min_us_, latency_max_us_) * 1000; }

void SimVolume::note(const std::string& what) { world_.note(host_, "disk " + what); }

Status SimVolume::check_fault(uint32_t op, const std::string& verb, const std::string& path, bool reserved) {
  for (auto& [id, f] : faults_) {
    if ((f.ops & op) == 0 || f.times == 0) continue;
    if (!f.path_contains.empty() && path.find(f.path_contains) == std::string::npos) continue;
    // A write inside a range allocate() reserved never fails with ENOSPC (File::allocate's contract).
    if (f.err == ENOSPC && reserved) continue;
    if (f.chance < 1.0 && !world_.rng().chance(f.chance)) continue;
    if (f.times > 0) --f.times;
    ++stats_.faults_injected;
    note(fmt::format("injected {} {}: {}", verb, path, std::strerror(f.err)));
    return errno_error(verb + " " + path, f.err);
  }
  return ok_status();
}

std::shared_ptr<SimInode> SimVolume::lookup(const fs::path& path) const {
  std::shared_ptr<SimInode> at = root_;
  for (const std::string& name : components(path)) {
    if (!at->is_dir) return nullptr;
    auto it = at->entries.find(name);
    if (it == at->entries.end()) return nullptr;
    at = it->second;
  }
  return at;
}

std::shared_ptr<SimInode> SimVolume::parent_of(const fs::path& path) const {
  std::vector<std::string> c = components(path);
  if (c.empty()) return nullptr;
  fs::path parent = "/";
  for (size_t i = 0; i + 1 < c.size(); ++i) parent /= c[i];
  auto p = lookup(parent);
  return p && p->is_dir ? p : nullptr;
}

Status SimVolume::charge(SimInode& inode, int64_t new_footprint, const std::string& path, bool reserved) {
  if (inode.links == 0) return ok_status();  // removed while open: no longer counted
  int64_t delta = new_footprint - inode.charged;
  if (delta > 0 && !reserved && used_bytes_ + delta > capacity_bytes_) {
    note(fmt::format("full: {} needs {} more bytes", path, delta));
    return errno_error("write " + path, ENOSPC);
  }
  used_bytes_ += delta;
  inode.charged = new_footprint;
  return ok_status();
}

void SimVolume::link(SimInode& inode) {
  if (inode.links++ == 0 && !inode.is_dir) {
    inode.charged = inode.now.footprint();
    used_bytes_ += inode.charged;
  }
}

void SimVolume::unlink(SimInode& inode) {
  ASSERT(inode.links > 0);
  if (--inode.links > 0) return;
  used_bytes_ -= inode.charged;
  inode.charged = 0;
  if (inode.is_dir) {
    for (auto& [name, child] : inode.entries) unlink(*child);
  }
}

void SimVolume::lose_unsynced() {
  ++stats_.crashes;
  std::vector<SimInode*> files;
  std::vector<SimInode*> dirs;
  rebuild_durable(*root_, files, dirs);
  recount();
}

// Walks the tree through the durable entry tables (in name order, so the
// Rng is drawn in the same order on every run) and crashes every file once.
void SimVolume::rebuild_durable(SimInode& dir, std::vector<SimInode*>& seen_files, std::vector<SimInode*>& seen_dirs) {
  if (std::find(seen_dirs.begin(), seen_dirs.end(), &dir) != seen_dirs.end()) return;
  seen_dirs.push_back(&dir);
  for (const auto& [name, inode] : dir.entries) {
    auto d = dir.durable.find(name);
    if (d == dir.durable.end() || d->second != inode) ++stats_.names_reverted;
  }
  for (const auto& [name, inode] : dir.durable) {
    if (dir.entries.count(name) == 0) ++stats_.names_reverted;
  }
  dir.entries = dir.durable;
  for (const auto& [name, inode] : dir.entries) {
    if (inode->is_dir) {
      rebuild_durable(*inode, seen_files, seen_dirs);
    } else if (std::find(seen_files.begin(), seen_files.end(), inode.get()) == seen_files.end()) {
      seen_files.push_back(inode.get());
      crash_file(*inode);
    }
  }
}

void SimVolume::crash_file(SimInode& f) {
  Rng& rng = world_.rng();
  size_t n = f.unsynced.size();
  size_t keep = size_t(rng.uniform(n + 1));
  FileContent& c = f.synced;
  for (size_t i = 0; i < keep; ++i) {
    const FileChange& op = f.unsynced[i];
    bool last = i + 1 == keep;
    if (last && op.kind == FileChange::Kind::kWrite && !op.data.empty() && rng.chance(0.5)) {
      // Torn: a prefix of the bytes landed; the size either stops there or
      // covers the whole write with a never-written (zero) tail.
      size_t landed = size_t(rng.uniform(op.data.size()));
      c.write(op.position, ByteView(op.data.data(), landed));
      int64_t end = op.position + int64_t(op.data.size());
      if (rng.chance(0.5) && end > int64_t(c.data.size())) c.data.resize(size_t(end), 0);
      ++stats_.torn_writes;
    } else {
      op.apply_to(c);
    }
  }
  stats_.ops_lost += n - keep;
  f.now = c;
  f.unsynced.clear();
  f.mappings.clear();  // those of the dead incarnation; never read again
}

// After a crash: recount links and space over the tree as it now is.
void SimVolume::recount() {
  std::vector<SimInode*> names;  // one per entry: an inode with two names twice
  std::vector<SimInode*> dirs{root_.get()};
  for (size_t i = 0; i < dirs.size(); ++i) {
    for (const auto& [name, inode] : dirs[i]->entries) {
      names.push_back(inode.get());
      if (inode->is_dir && std::find(dirs.begin(), dirs.end(), inode.get()) == dirs.end()) dirs.push_back(inode.get());
    }
  }
  for (SimInode* i : names) {
    i->links = 0;
    i->charged = 0;
  }
  used_bytes_ = 0;
  for (SimInode* i : names) link(*i);
}

void SimVolume::create_durable_directories(const fs::path& dir) {
  std::shared_ptr<SimInode> at = root_;
  for (const std::string& name : components(dir)) {
    auto it = at->entries.find(name);
    std::shared_ptr<SimInode> next;
    if (it == at->entries.end()) {
      next = new_inode(true);
      at->entries[name] = next;
      link(*next);
    } else {
      next = it->second;
      ASSERT_MSG(next->is_dir, "create_durable_directories through a file");
    }
    at->durable[name] = next;
    at = next;
  }
}

Result<Bytes> SimVolume::read_whole(const fs::path& path) const {
  auto inode = lookup(path);
  if (!inode) return fs_error("read", path, ENOENT);
  if (inode->is_dir) return fs_error("read", path, EISDIR);
  return inode->now.data;
}

bool SimVolume::exists_now(const fs::path& path) const { return lookup(path) != nullptr; }

// ------------------------------------------------------------ SimFileSystem

Status SimFileSystem::alive(const std::string& verb, const fs::path& path) const {
  if (volume_.generation() != generation_) return Error(ErrorKind::kIo, verb + " " + path.string() + ": host crashed");
  return ok_status();
}

Result<FilePtr> SimFileSystem::open(const fs::path& path, OpenMode mode) {
  RETURN_IF_ERROR(alive("open", path));
  RETURN_IF_ERROR(volume_.check_fault(kFsOpen, "open", path.string()));
  std::vector<std::string> c = components(path);
  if (c.empty()) return fs_error("open", path, EISDIR);
  auto parent = volume_.parent_of(path);
  if (!parent) return fs_error("open", path, ENOENT);
  auto it = parent->entries.find(c.back());
  std::shared_ptr<SimInode> inode;
  if (it != parent->entries.end()) {
    inode = it->second;
    if (inode->is_dir) return fs_error("open", path, EISDIR);
    if (mode == OpenMode::kCreateNew) return fs_error("open", path, EEXIST);
  } else {
    if (mode == OpenMode::kRead || mode == OpenMode::kReadWrite) return fs_error("open", path, ENOENT);
    inode = new_inode(false);
    parent->entries[c.back()] = inode;
    volume_.link(*inode);
  }
  auto file = std::make_shared<SimFile>(volume_, inode, path.string(), mode != OpenMode::kRead, generation_);
  if (mode == OpenMode::kTruncate) RETURN_IF_ERROR(file->truncate(0));
  return FilePtr(std::move(file));
}

Result<bool> SimFileSystem::exists(const fs::path& path) {
  RETURN_IF_ERROR(alive("stat", path));
  return volume_.lookup(path) != nullptr;
}

Result<bool> SimFileSystem::is_directory(const fs::path& path) {
  RETURN_IF_ERROR(alive("stat", path));
  auto inode = volume_.lookup(path);
  return inode != nullptr && inode->is_dir;
}

Result<std::vector<DirEntry>> SimFileSystem::list(const fs::path& dir) {
  RETURN_IF_ERROR(alive("list", dir));
  RETURN_IF_ERROR(volume_.check_fault(kFsList, "list", dir.string()));
  auto inode = volume_.lookup(dir);
  if (!inode) return fs_error("list", dir, ENOENT);
  if (!inode->is_dir) return fs_error("list", dir, ENOTDIR);
  std::vector<DirEntry> out;
  for (const auto& [name, child] : inode->entries) out.push_back(DirEntry{name, child->is_dir});  // std::map: sorted
  return out;
}

Status SimFileSystem::create_directories(const fs::path& dir) {
  RETURN_IF_ERROR(alive("mkdir", dir));
  RETURN_IF_ERROR(volume_.check_fault(kFsMkdir, "mkdir", dir.string()));
  std::shared_ptr<SimInode> at = volume_.root();
  for (const std::string& name : components(dir)) {
    auto it = at->entries.find(name);
    if (it == at->entries.end()) {
      auto d = new_inode(true);
      at->entries[name] = d;
      volume_.link(*d);
      at = d;
    } else if (!it->second->is_dir) {
      return fs_error("mkdir", dir, EEXIST);
    } else {
      at = it->second;
    }
  }
  return ok_status();
}

Status SimFileSystem::rename(const fs::path& from, const fs::path& to) {
  RETURN_IF_ERROR(alive("rename", from));
  RETURN_IF_ERROR(volume_.check_fault(kFsRename, "rename", from.string()));
  RETURN_IF_ERROR(volume_.check_fault(kFsRename, "rename", to.string()));
  std::vector<std::string> fc = components(from);
  std::vector<std::string> tc = components(to);
  auto src_dir = volume_.parent_of(from);
  auto dst_dir = volume_.parent_of(to);
  if (!src_dir || fc.empty() || src_dir->entries.count(fc.back()) == 0) return fs_error("rename", from, ENOENT);
  if (!dst_dir || tc.empty()) return fs_error("rename", to, ENOENT);
  std::shared_ptr<SimInode> src = src_dir->entries[fc.back()];
  if (src->is_dir && tc.size() > fc.size() && std::equal(fc.begin(), fc.end(), tc.begin())) {
    return fs_error("rename", to, EINVAL);  // into its own subtree
  }
  auto existing = dst_dir->entries.find(tc.back());
  if (existing != dst_dir->entries.end()) {
    std::shared_ptr<SimInode> old = existing->second;
    if (old == src) return ok_status();
    if (src->is_dir && !old->is_dir) return fs_error("rename", to, ENOTDIR);
    if (!src->is_dir && old->is_dir) return fs_error("rename", to, EISDIR);
    if (old->is_dir && !old->entries.empty()) return fs_error("rename", to, ENOTEMPTY);
    volume_.unlink(*old);
  }
  dst_dir->entries[tc.back()] = src;
  src_dir->entries.erase(fc.back());
  // Directory renames are rare (a partition deleted or quarantined) and
  // carry drawn names: in the trace, so a replay shows they came from the seed.
  if (src->is_dir) volume_.note("rename " + from.string() + " > " + to.string());
  return ok_status();
}

Status SimFileSystem::remove(const fs::path& path) {
  RETURN_IF_ERROR(alive("remove", path));
  RETURN_IF_ERROR(volume_.check_fault(kFsRemove, "remove", path.string()));
  std::vector<std::string> c = components(path);
  if (c.empty()) return fs_error("remove", path, EBUSY);
  auto parent = volume_.parent_of(path);
  if (!parent) return ok_status();
  auto it = parent->entries.find(c.back());
  if (it == parent->entries.end()) return ok_status();
  if (it->second->is_dir && !it->second->entries.empty()) return fs_error("remove", path, ENOTEMPTY);
  std::shared_ptr<SimInode> gone = it->second;
  parent->entries.erase(it);
  volume_.unlink(*gone);
  return ok_status();
}

Status SimFileSystem::remove_all(const fs::path& path) {
  RETURN_IF_ERROR(alive("remove_all", path));
  RETURN_IF_ERROR(volume_.check_fault(kFsRemove, "remove_all", path.string()));
  std::vector<std::string> c = components(path);
  if (c.empty()) return fs_error("remove_all", path, EBUSY);
  auto parent = volume_.parent_of(path);
  if (!parent) return ok_status();
  auto it = parent->entries.find(c.back());
  if (it == parent->entries.end()) return ok_status();
  std::shared_ptr<SimInode> gone = it->second;
  parent->entries.erase(it);
  volume_.unlink(*gone);  // a directory takes its entries with it
  return ok_status();
}

Status SimFileSystem::sync_dir(const fs::path& dir) {
  RETURN_IF_ERROR(alive("fsync", dir));
  RETURN_IF_ERROR(volume_.check_fault(kFsSyncDir, "fsync", dir.string()));
  auto inode = volume_.lookup(dir);
  if (!inode) return fs_error("fsync", dir, ENOENT);
  if (!inode->is_dir) return fs_error("fsync", dir, ENOTDIR);
  inode->durable = inode->entries;
  ++volume_.mutable_stats().dir_syncs;
  return ok_status();
}

Result<SpaceInfo> SimFileSystem::space(const fs::path& path) {
  RETURN_IF_ERROR(alive("statvfs", path));
  if (!volume_.lookup(path)) return fs_error("statvfs", path, ENOENT);
  return SpaceInfo{volume_.capacity_bytes(), std::max<int64_t>(0, volume_.capacity_bytes() - volume_.used_bytes())};
}

std::optional<FileSystem::DescriptorUsage> SimFileSystem::descriptor_usage() {
  return DescriptorUsage{volume_.open_descriptors(), volume_.descriptor_limit()};
}

// ------------------------------------------------------------------ SimFile

SimFile::SimFile(SimVolume& volume, std::shared_ptr<SimInode> inode, std::string path, bool writable,
                 uint64_t generation)
    : volume_(volume), inode_(std::move(inode)), path_(std::move(path)), writable_(writable), generation_(generation) {
  volume_.count_descriptor(+1);
}

SimFile::~SimFile() { volume_.count_descriptor(-1); }

Status SimFile::alive(const char* verb) const {
  if (volume_.generation() != generation_) return Error(ErrorKind::kIo, std::string(verb) + " " + path_ + ": host crashed");
  return ok_status();
}

Status SimFile::writable(const char* verb) const {
  RETURN_IF_ERROR(alive(verb));
  if (!writable_) return errno_error(std::string(verb) + " " + path_, EBADF);
  return ok_status();
}

Status SimFile::write_at(ByteView data, int64_t position) {
  RETURN_IF_ERROR(writable("write"));
  if (position < 0) return errno_error("write " + path_, EINVAL);
  SimInode& f = *inode_;
  int64_t end = position + int64_t(data.size());
  bool reserved = end <= f.now.allocated;
  RETURN_IF_ERROR(volume_.check_fault(kFsWrite, "write", path_, reserved));
  if (data.empty()) return ok_status();
  RETURN_IF_ERROR(volume_.charge(f, std::max(f.now.footprint(), end), path_, reserved));
  f.now.write(position, data);
  f.unsynced.push_back(FileChange{FileChange::Kind::kWrite, position, Bytes(data.begin(), data.end())});
  for (SimMapping* m : f.mappings) m->written(position, data);
  ++volume_.mutable_stats().writes;
  return ok_status();
}

Result<size_t> SimFile::read_at(uint8_t* out, size_t size, int64_t position) const {
  RETURN_IF_ERROR(alive("read"));
  if (position < 0) return errno_error("read " + path_, EINVAL);
  RETURN_IF_ERROR(volume_.check_fault(kFsRead, "read", path_));
  const Bytes& data = inode_->now.data;
  if (size_t(position) >= data.size()) return size_t(0);
  size_t n = std::min(size, data.size() - size_t(position));
  std::memcpy(out, data.data() + position, n);
  return n;
}

Result<int64_t> SimFile::size() const {
  RETURN_IF_ERROR(alive("stat"));
  return int64_t(inode_->now.data.size());
}

Status SimFile::truncate(int64_t size) {
  RETURN_IF_ERROR(writable("truncate"));
  if (size < 0) return errno_error("truncate " + path_, EINVAL);
  RETURN_IF_ERROR(volume_.check_fault(kFsTruncate, "truncate", path_));
  SimInode& f = *inode_;
  for (const SimMapping* m : f.mappings) ASSERT_MSG(size_t(size) >= m->size(), "truncating a mapped file below its mapping");
  // A sparse extension takes no blocks: never ENOSPC (its size is still counted).
  RETURN_IF_ERROR(volume_.charge(f, std::max(size, f.now.allocated), path_, true));
  f.now.truncate(size);
  f.unsynced.push_back(FileChange{FileChange::Kind::kTruncate, size, {}});
  return ok_status();
}

Status SimFile::allocate(int64_t size) {
  RETURN_IF_ERROR(writable("fallocate"));
  if (size < 0) return errno_error("fallocate " + path_, EINVAL);
  RETURN_IF_ERROR(volume_.check_fault(kFsAllocate, "fallocate", path_));
  SimInode& f = *inode_;
  RETURN_IF_ERROR(volume_.charge(f, std::max(f.now.footprint(), size), path_, false));
  f.now.allocate(size);
  f.unsynced.push_back(FileChange{FileChange::Kind::kAllocate, size, {}});
  return ok_status();
}

Status SimFile::sync() {
  RETURN_IF_ERROR(alive("fsync"));
  RETURN_IF_ERROR(volume_.check_fault(kFsSync, "fsync", path_));
  // Replaying the changes costs what was written since the last sync, where
  // copying the content would cost the whole file (an index is megabytes).
  for (const FileChange& change : inode_->unsynced) change.apply_to(inode_->synced);
  inode_->unsynced.clear();
  ++volume_.mutable_stats().syncs;
  return ok_status();
}

Result<bool> SimFile::has_hole(int64_t size) const {
  RETURN_IF_ERROR(alive("lseek"));
  // Beyond the end was never written either: a hole, as SEEK_HOLE says.
  return size > 0 && !inode_->now.written.covers(0, size);
}

Result<std::unique_ptr<FileMapping>> SimFile::map(size_t size) const {
  RETURN_IF_ERROR(alive("mmap"));
  RETURN_IF_ERROR(volume_.check_fault(kFsRead, "mmap", path_));
  if (size > inode_->now.data.size()) return errno_error("mmap " + path_ + " beyond its end", EINVAL);
  return std::unique_ptr<FileMapping>(std::make_unique<SimMapping>(inode_, size));
}

}  // namespace samsa::sim
