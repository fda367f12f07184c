#pragma once
// The simulated disk of a host: SimVolume (the disk itself, which outlives
// crashes), SimFileSystem (io/file_system.h, one per runtime incarnation)
// and SimFile (base/file.h).
//
// Durability model (docs/testing.md, "The simulated runtime"):
// - Every file keeps two contents: as written (what reads and mappings see
//   at once) and as of its last sync(); plus the list of writes, truncates
//   and allocates made since that sync.
// - Every directory keeps two entry tables: as they are and as of its last
//   sync_dir(). Creating, renaming and removing a name changes the first
//   only; a directory moved by rename takes its own entries with it.
// - A power loss (crash()) rebuilds the tree from the root through the
//   durable tables only (a name never dir-synced disappears, a rename not
//   dir-synced is undone, a removal not dir-synced comes back) and gives
//   every file left its synced content plus a prefix, chosen by the Rng, of
//   the operations since; the last kept write may be torn: only a prefix of
//   its bytes lands, and the file is either that much longer or as long as
//   the whole write with a never-written (zero, has_hole) tail.
// - A process crash (CrashKind::kProcess) loses nothing: the page cache
//   survives the process.
// Faults, on command: ENOSPC or EIO for operations and paths that match a
// rule (a number of times or for ever, with a probability), a capacity in
// bytes (a write or allocate beyond it is ENOSPC, except inside a range
// allocate() reserved), and a latency range for blocking work (slow disk).
//
// Every File and FileSystem belongs to one incarnation of the host: once the
// host crashed, every call on them fails with EIO ("host crashed") and
// changes nothing, so a dying process cannot write after its death.
// Mappings are copies the volume keeps up to date on every write within
// their range (MAP_SHARED): the file's own buffer may move as it grows.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/file.h"
#include "io/file_system.h"
#include "testing/sim_world.h"

namespace samsa::sim {

struct SimInode;  // sim_file_system.cc
class SimMapping;

// Operations a fault rule matches (a bit mask).
enum FsOp : uint32_t {
  kFsOpen = 1u << 0,      // open (every mode; a create too)
  kFsWrite = 1u << 1,     // File::write_at
  kFsRead = 1u << 2,      // File::read_at, map
  kFsSync = 1u << 3,      // File::sync
  kFsSyncDir = 1u << 4,   // FileSystem::sync_dir
  kFsRename = 1u << 5,
  kFsRemove = 1u << 6,    // remove, remove_all
  kFsTruncate = 1u << 7,  // File::truncate (and opening with kTruncate)
  kFsAllocate = 1u << 8,
  kFsMkdir = 1u << 9,     // create_directories
  kFsList = 1u << 10,
  kFsAll = (1u << 11) - 1,
};

struct DiskFault {
  uint32_t ops = kFsAll;
  std::string path_contains;  // empty: every path
  int err = 5;                // EIO (5) or ENOSPC (28)
  int64_t times = -1;         // how many operations fail; -1: until removed
  double chance = 1.0;        // of a matching operation failing (drawn from the world's Rng)
};

struct DiskStats {
  uint64_t writes = 0;
  uint64_t syncs = 0;
  uint64_t dir_syncs = 0;
  uint64_t crashes = 0;
  uint64_t ops_lost = 0;       // unsynced operations a power loss dropped
  uint64_t torn_writes = 0;
  uint64_t names_reverted = 0; // directory entries a power loss changed back
  uint64_t faults_injected = 0;
};

class SimVolume {
 public:
  SimVolume(SimWorld& world, HostId host);
  ~SimVolume();
  SimVolume(const SimVolume&) = delete;
  SimVolume& operator=(const SimVolume&) = delete;

  // --- faults and knobs ---
  uint64_t add_fault(DiskFault fault);
  void remove_fault(uint64_t id);
  void clear_faults();
  void set_capacity_bytes(int64_t bytes) { capacity_bytes_ = bytes; }
  int64_t capacity_bytes() const { return capacity_bytes_; }
  int64_t used_bytes() const { return used_bytes_; }
  // Latency of each blocking-executor item (fsyncs off the loop): the slow disk.
  void set_latency_us(int64_t min_us, int64_t max_us);
  int64_t draw_latency_ns();
  void set_descriptor_limit(int64_t limit) { descriptor_limit_ = limit; }

  // --- crashes (SimWorld::crash calls these) ---
  // Fences every File and FileSystem of the incarnation that ends.
  void fence() { ++generation_; }
  uint64_t generation() const { return generation_; }
  // Power loss: what is not durable is lost as the model above says.
  void lose_unsynced();

  // Test setup: mkdir -p that is durable at once (a disk formatted before the run).
  void create_durable_directories(const std::filesystem::path& dir);
  // Test inspection, bypassing faults and fences: a file's content as it is now.
  Result<Bytes> read_whole(const std::filesystem::path& path) const;
  bool exists_now(const std::filesystem::path& path) const;
  const DiskStats& stats() const { return stats_; }
  HostId host() const { return host_; }
  SimWorld& world() { return world_; }

  // --- used by SimFileSystem / SimFile ---
  // The error of an injected fault for this operation, if one fires.
  // `reserved`: a write inside allocate()'s range, which ENOSPC rules spare.
  Status check_fault(uint32_t op, const std::string& verb, const std::string& path, bool reserved = false);
  std::shared_ptr<SimInode> lookup(const std::filesystem::path& path) const;
  std::shared_ptr<SimInode> parent_of(const std::filesystem::path& path) const;
  std::shared_ptr<SimInode> root() const { return root_; }
  // Space accounting: an inode's footprint is max(size, allocated) while linked;
  // `reserved`: the growth may not fail (inside allocate()'s range, a sparse truncate).
  Status charge(SimInode& inode, int64_t new_footprint, const std::string& path, bool reserved);
  void link(SimInode& inode);
  void unlink(SimInode& inode);
  void count_descriptor(int delta) { open_descriptors_ += delta; }
  int64_t open_descriptors() const { return open_descriptors_; }
  int64_t descriptor_limit() const { return descriptor_limit_; }
  DiskStats& mutable_stats() { return stats_; }
  void note(const std::string& what);

 private:
  void rebuild_durable(SimInode& dir, std::vector<SimInode*>& seen_files, std::vector<SimInode*>& seen_dirs);
  void crash_file(SimInode& file);
  void recount();

  SimWorld& world_;
  HostId host_;
  std::shared_ptr<SimInode> root_;
  uint64_t generation_ = 0;
  uint64_t next_fault_ = 1;
  std::vector<std::pair<uint64_t, DiskFault>> faults_;
  int64_t capacity_bytes_ = int64_t(1) << 40;  // 1 TiB
  int64_t used_bytes_ = 0;
  int64_t latency_min_us_ = 50;
  int64_t latency_max_us_ = 2000;
  int64_t open_descriptors_ = 0;
  int64_t descriptor_limit_ = 65536;
  DiskStats stats_;
};

// The FileSystem of one incarnation of a host.
class SimFileSystem final : public FileSystem {
 public:
  SimFileSystem(SimVolume& volume, uint64_t generation) : volume_(volume), generation_(generation) {}

  Result<FilePtr> open(const std::filesystem::path& path, OpenMode mode) override;
  Result<bool> exists(const std::filesystem::path& path) override;
  Result<bool> is_directory(const std::filesystem::path& path) override;
  Result<std::vector<DirEntry>> list(const std::filesystem::path& dir) override;
  Status create_directories(const std::filesystem::path& dir) override;
  Status rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  Status remove(const std::filesystem::path& path) override;
  Status remove_all(const std::filesystem::path& path) override;
  Status sync_dir(const std::filesystem::path& dir) override;
  Result<SpaceInfo> space(const std::filesystem::path& path) override;
  std::optional<DescriptorUsage> descriptor_usage() override;

  SimVolume& volume() { return volume_; }

 private:
  Status alive(const std::string& verb, const std::filesystem::path& path) const;

  SimVolume& volume_;
  uint64_t generation_;
};

class SimFile final : public File {
 public:
  SimFile(SimVolume& volume, std::shared_ptr<SimInode> inode, std::string path, bool writable, uint64_t generation);
  ~SimFile() override;

  const std::string& path() const override { return path_; }
  Status write_at(ByteView data, int64_t position) override;
  Result<size_t> read_at(uint8_t* out, size_t size, int64_t position) const override;
  Result<int64_t> size() const override;
  Status truncate(int64_t size) override;
  Status allocate(int64_t size) override;
  Status sync() override;
  Result<bool> has_hole(int64_t size) const override;
  Result<std::unique_ptr<FileMapping>> map(size_t size) const override;
  int native_handle() const override { return -1; }

 private:
  Status alive(const char* verb) const;
  Status writable(const char* verb) const;

  SimVolume& volume_;
  std::shared_ptr<SimInode> inode_;
  std::string path_;
  bool writable_;
  uint64_t generation_;
};

}  // namespace samsa::sim
