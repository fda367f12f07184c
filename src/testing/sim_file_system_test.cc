#include "testing/sim_file_system.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "testing/sim_runtime.h"
#include "testing/sim_test_support.h"
#include "testing/sim_world.h"

namespace samsa::sim {
namespace {

class SimDiskTest : public ::testing::Test {
 protected:
  explicit SimDiskTest(uint64_t seed = 11) : world(seed), host(world.add_host()) {
    world.volume(host).create_durable_directories("/data");
  }
  FileSystem& fs() { return world.runtime(host).files(); }
  FilePtr open(const std::string& path, OpenMode mode = OpenMode::kCreate) {
    auto f = fs().open(path, mode);
    EXPECT_TRUE(f.ok()) << f.error().to_string();
    return f.ok() ? *f : nullptr;
  }
  void write(const FilePtr& f, std::string_view s, int64_t at) { ASSERT_TRUE(f->write_at(as_bytes(s), at).ok()); }
  void power_loss() {
    world.crash(host);
    world.restart(host);
  }
  std::string content(const std::string& path) {
    auto b = world.volume(host).read_whole(path);
    return b.ok() ? std::string(as_string_view(*b)) : "<" + b.error().message() + ">";
  }

  SimWorld world;
  HostId host;
};

TEST_F(SimDiskTest, WritesAreVisibleAtOnceAndDurableAfterSync) {
  FilePtr f = open("/data/a");
  ASSERT_TRUE(fs().sync_dir("/data").ok());
  write(f, "synced", 0);
  ASSERT_TRUE(f->sync().ok());
  write(f, "+more", 6);
  uint8_t buf[32];
  auto n = f->read_at(buf, sizeof buf, 0);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), *n), "synced+more");
  world.crash(host, CrashKind::kProcess);  // the page cache survives a process
  world.restart(host);
  EXPECT_EQ(content("/data/a"), "synced+more");
}

// Over many seeds: a power loss keeps the synced content plus a prefix of
// the later writes, the last one possibly torn (short, or a zero tail).
TEST(SimDiskCrash, KeepsSyncedPlusAPrefixOfTheRestTornAtMostAtTheEnd) {
  const std::string full = "SYNCED|one|two|three|four|five";
  int kept_all = 0, kept_none = 0, torn = 0, zero_tail = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SimWorld world(seed);
    HostId h = world.add_host();
    world.volume(h).create_durable_directories("/d");
    FileSystem& fs = world.runtime(h).files();
    FilePtr f = *fs.open("/d/log", OpenMode::kCreate);
    ASSERT_TRUE(fs.sync_dir("/d").ok());
    ASSERT_TRUE(f->write_at(as_bytes("SYNCED"), 0).ok());
    ASSERT_TRUE(f->sync().ok());
    int64_t at = 6;
    for (std::string_view w : {"|one", "|two", "|three", "|four", "|five"}) {
      ASSERT_TRUE(f->write_at(as_bytes(w), at).ok());
      at += int64_t(w.size());
    }
    world.crash(h);
    Bytes got = *world.volume(h).read_whole("/d/log");
    std::string s(as_string_view(got));
    ASSERT_GE(s.size(), 6u) << seed;
    ASSERT_LE(s.size(), full.size()) << seed;
    size_t same = 0;
    while (same < s.size() && s[same] == full[same]) ++same;
    ASSERT_GE(same, 6u) << "synced bytes lost, seed " << seed;
    for (size_t i = same; i < s.size(); ++i) ASSERT_EQ(s[i], '\0') << "not a prefix plus zeros, seed " << seed;
    if (s == full) ++kept_all;
    if (s == "SYNCED") ++kept_none;
    if (world.volume(h).stats().torn_writes > 0) ++torn;
    if (same < s.size()) {
      ++zero_tail;  // torn, the size covering the whole write: a hole the next incarnation sees
      FilePtr again = *world.restart(h).files().open("/d/log", OpenMode::kRead);
      ASSERT_TRUE(*again->has_hole(int64_t(s.size()))) << seed;
    }
  }
  EXPECT_GT(kept_all, 10);
  EXPECT_GT(kept_none, 10);
  EXPECT_GT(torn, 30);
  EXPECT_GT(zero_tail, 10);
  EXPECT_LT(zero_tail, torn);  // and some torn writes are simply short
}

TEST_F(SimDiskTest, OnlyNamesPresentAtTheLastDirSyncSurvive) {
  FilePtr f = open("/data/new");
  write(f, "x", 0);
  ASSERT_TRUE(f->sync().ok());  // the bytes, not the name
  ASSERT_TRUE(fs().create_directories("/data/sub/deeper").ok());
  ASSERT_TRUE(fs().sync_dir("/data/sub").ok());
  FilePtr kept = open("/data/kept");
  ASSERT_TRUE(fs().sync_dir("/data").ok());
  FilePtr late = open("/data/late");
  power_loss();
  EXPECT_TRUE(*fs().exists("/data/new"));  // named in /data before its sync
  EXPECT_TRUE(*fs().exists("/data/kept"));
  EXPECT_TRUE(*fs().exists("/data/sub/deeper"));
  EXPECT_FALSE(*fs().exists("/data/late"));
  EXPECT_GE(world.volume(host).stats().names_reverted, 1u);
}

TEST_F(SimDiskTest, CreatedButUnsyncedDirectoryEntryIsGone) {
  FilePtr f = open("/data/segment.log");
  write(f, "bytes", 0);
  ASSERT_TRUE(f->sync().ok());
  ASSERT_TRUE(fs().create_directories("/data/t-0").ok());
  FilePtr inside = open("/data/t-0/0.log");
  ASSERT_TRUE(inside->sync().ok());
  ASSERT_TRUE(fs().sync_dir("/data/t-0").ok());  // its own entries, but /data never names t-0 durably
  power_loss();
  EXPECT_FALSE(*fs().exists("/data/segment.log"));
  EXPECT_FALSE(*fs().exists("/data/t-0"));
  EXPECT_FALSE(*fs().exists("/data/t-0/0.log"));
}

TEST_F(SimDiskTest, RenameIsUndoneUntilTheDirectoryIsSynced) {
  FilePtr old = open("/data/checkpoint");
  write(old, "old", 0);
  ASSERT_TRUE(old->sync().ok());
  ASSERT_TRUE(fs().sync_dir("/data").ok());
  FilePtr tmp = open("/data/checkpoint.tmp");
  write(tmp, "new", 0);
  ASSERT_TRUE(tmp->sync().ok());
  ASSERT_TRUE(fs().sync_dir("/data").ok());
  ASSERT_TRUE(fs().rename("/data/checkpoint.tmp", "/data/checkpoint").ok());
  EXPECT_EQ(content("/data/checkpoint"), "new");
  power_loss();
  EXPECT_EQ(content("/data/checkpoint"), "old");  // undone
  EXPECT_TRUE(*fs().exists("/data/checkpoint.tmp"));

  ASSERT_TRUE(fs().rename("/data/checkpoint.tmp", "/data/checkpoint").ok());
  ASSERT_TRUE(fs().sync_dir("/data").ok());
  power_loss();
  EXPECT_EQ(content("/data/checkpoint"), "new");
  EXPECT_FALSE(*fs().exists("/data/checkpoint.tmp"));
}

TEST_F(SimDiskTest, RenamedDirectoryTakesItsEntriesAlong) {
  ASSERT_TRUE(fs().create_directories("/data/t-0").ok());
  FilePtr f = open("/data/t-0/0.log");
  write(f, "abc", 0);
  ASSERT_TRUE(f->sync().ok());
  ASSERT_TRUE(fs().sync_dir("/data/t-0").ok());
  ASSERT_TRUE(fs().sync_dir("/data").ok());
  ASSERT_TRUE(fs().rename("/data/t-0", "/data/t-0.deleted").ok());
  ASSERT_TRUE(fs().sync_dir("/data").ok());
  power_loss();
  EXPECT_FALSE(*fs().exists("/data/t-0"));
  EXPECT_EQ(content("/data/t-0.deleted/0.log"), "abc");
}

TEST_F(SimDiskTest, RemovalNotDirSyncedComesBack) {
  FilePtr f = open("/data/x");
  ASSERT_TRUE(fs().sync_dir("/data").ok());
  ASSERT_TRUE(fs().remove("/data/x").ok());
  EXPECT_FALSE(*fs().exists("/data/x"));
  power_loss();
  EXPECT_TRUE(*fs().exists("/data/x"));
  ASSERT_TRUE(fs().remove("/data/x").ok());
  ASSERT_TRUE(fs().sync_dir("/data").ok());
  power_loss();
  EXPECT_FALSE(*fs().exists("/data/x"));
}

TEST_F(SimDiskTest, NoSpaceAtCapacityButNotInsideAnAllocatedRange) {
  world.volume(host).set_capacity_bytes(1000);
  FilePtr f = open("/data/a");
  Bytes big(2000, 1);
  Status s = f->write_at(big, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kNoSpace);
  ASSERT_TRUE(f->allocate(800).ok());
  auto space = fs().space("/data");
  ASSERT_TRUE(space.ok());
  EXPECT_EQ(space->available_bytes, 200);
  world.volume(host).add_fault(DiskFault{kFsWrite, "", ENOSPC, -1, 1.0});
  EXPECT_TRUE(f->write_at(Bytes(800, 2), 0).ok());  // reserved
  Status beyond = f->write_at(Bytes(10, 2), 800);
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.error().kind(), ErrorKind::kNoSpace);
}

TEST_F(SimDiskTest, InjectedErrorsMatchPathAndOperationAndCount) {
  FilePtr log = open("/data/0.log");
  FilePtr index = open("/data/0.index");
  world.volume(host).add_fault(DiskFault{kFsSync, ".log", EIO, 1, 1.0});
  write(log, "a", 0);
  Status first = log->sync();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().kind(), ErrorKind::kIo);
  EXPECT_NE(first.error().message().find("/data/0.log"), std::string::npos);
  EXPECT_TRUE(index->sync().ok());  // another path
  EXPECT_TRUE(log->write_at(as_bytes("b"), 1).ok());  // another operation
  EXPECT_TRUE(log->sync().ok());  // the one time is used up
  world.volume(host).add_fault(DiskFault{kFsRename | kFsSyncDir, "", EIO, -1, 1.0});
  EXPECT_FALSE(fs().rename("/data/0.log", "/data/1.log").ok());
  EXPECT_FALSE(fs().sync_dir("/data").ok());
  world.volume(host).clear_faults();
  EXPECT_TRUE(fs().sync_dir("/data").ok());
  EXPECT_EQ(world.volume(host).stats().faults_injected, 3u);
}

TEST_F(SimDiskTest, HolesAreNeverWrittenRanges) {
  FilePtr f = open("/data/i");
  ASSERT_TRUE(f->truncate(100).ok());
  EXPECT_TRUE(*f->has_hole(100));
  write(f, std::string(100, 'x'), 0);
  EXPECT_FALSE(*f->has_hole(100));
  ASSERT_TRUE(f->allocate(200).ok());  // reserved, still never written
  EXPECT_EQ(*f->size(), 200);
  EXPECT_TRUE(*f->has_hole(200));
  EXPECT_FALSE(*f->has_hole(100));
  write(f, std::string(50, 'y'), 150);
  EXPECT_TRUE(*f->has_hole(200));  // 100..150
  write(f, std::string(50, 'z'), 100);
  EXPECT_FALSE(*f->has_hole(200));
  EXPECT_TRUE(*f->has_hole(201));  // past the end, as lseek(SEEK_HOLE) answers
  EXPECT_FALSE(*f->has_hole(0));
}

TEST_F(SimDiskTest, MappingSeesLaterWritesAcrossGrowth) {
  FilePtr f = open("/data/idx");
  write(f, "0123456789", 0);
  auto m = f->map(10);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*m)->data()), 10), "0123456789");
  write(f, std::string(100'000, 'g'), 10);  // the file grows (its buffer may move)
  write(f, "AB", 4);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*m)->data()), 10), "0123AB6789");
  EXPECT_FALSE(f->map(200'000).ok());  // beyond the end
}

TEST_F(SimDiskTest, OpenFilesOutliveRemoveAndRename) {
  FilePtr f = open("/data/seg");
  write(f, "still here", 0);
  FilePtr g = open("/data/other");
  write(g, "moved", 0);
  ASSERT_TRUE(fs().remove("/data/seg").ok());
  ASSERT_TRUE(fs().rename("/data/other", "/data/moved").ok());
  uint8_t buf[16];
  EXPECT_EQ(*f->read_at(buf, sizeof buf, 0), 10u);
  EXPECT_EQ(*g->read_at(buf, sizeof buf, 0), 5u);
  EXPECT_TRUE(f->write_at(as_bytes("!"), 10).ok());
  EXPECT_EQ(f->native_handle(), -1);
}

TEST_F(SimDiskTest, TheDeadIncarnationCannotTouchTheDisk) {
  FilePtr f = open("/data/a");
  ASSERT_TRUE(fs().sync_dir("/data").ok());
  write(f, "before", 0);
  ASSERT_TRUE(f->sync().ok());
  FileSystem& dead_fs = world.runtime(host).files();
  world.crash(host, CrashKind::kProcess);
  EXPECT_FALSE(f->write_at(as_bytes("after"), 0).ok());
  EXPECT_FALSE(f->sync().ok());
  EXPECT_FALSE(dead_fs.remove("/data/a").ok());
  world.restart(host);
  EXPECT_EQ(content("/data/a"), "before");
  EXPECT_TRUE(*fs().exists("/data/a"));
}

TEST_F(SimDiskTest, OpenModesListAndErrors) {
  EXPECT_EQ(fs().open("/data/missing", OpenMode::kRead).error().kind(), ErrorKind::kNotFound);
  FilePtr f = open("/data/b", OpenMode::kCreateNew);
  EXPECT_EQ(fs().open("/data/b", OpenMode::kCreateNew).error().kind(), ErrorKind::kAlreadyExists);
  write(f, "abc", 0);
  FilePtr r = open("/data/b", OpenMode::kRead);
  EXPECT_FALSE(r->write_at(as_bytes("x"), 0).ok());
  FilePtr t = open("/data/b", OpenMode::kTruncate);
  EXPECT_EQ(*t->size(), 0);
  open("/data/a");
  ASSERT_TRUE(fs().create_directories("/data/z/y").ok());
  auto l = fs().list("/data");
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->size(), 3u);
  EXPECT_EQ((*l)[0].name, "a");
  EXPECT_EQ((*l)[1].name, "b");
  EXPECT_EQ((*l)[2].name, "z");
  EXPECT_TRUE((*l)[2].is_directory);
  EXPECT_FALSE(fs().remove("/data/z").ok());  // not empty
  EXPECT_TRUE(fs().remove_all("/data/z").ok());
  EXPECT_FALSE(*fs().exists("/data/z/y"));
  EXPECT_TRUE(fs().remove("/data/never").ok());
  auto d = fs().descriptor_usage();
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->open, 3);  // f, r and t; the handle of "/data/a" was dropped
}

TEST_F(SimDiskTest, SlowDiskDelaysBlockingWork) {
  world.volume(host).set_latency_us(500'000, 500'000);
  FilePtr f = open("/data/a");
  bool done = false;
  world.runtime(host).blocking().submit([f] { return f->sync(); }, [&](Status s) {
    EXPECT_TRUE(s.ok());
    done = true;
  });
  world.run_for_ms(499);
  EXPECT_FALSE(done);
  world.run_for_ms(1);
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace samsa::sim
