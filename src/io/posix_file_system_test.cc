#include "io/posix_file_system.h"
#include "base/test_files.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <string>
#include <system_error>

namespace samsa {
namespace {

namespace fs = std::filesystem;

using samsa::testing::TempDir;

ByteView bytes_of(const std::string& s) { return as_bytes(std::string_view(s)); }

std::string read_all(const File& f, size_t size, int64_t at = 0) {
  std::string out(size, '\0');
  auto n = f.read_at(reinterpret_cast<uint8_t*>(out.data()), size, at);
  EXPECT_TRUE(n.ok());
  out.resize(n.ok() ? *n : 0);
  return out;
}

TEST(PosixFileSystem, WritesReadsAndSizesAtPositions) {
  TempDir tmp;
  PosixFileSystem files;
  auto f = files.open(tmp.path() / "a", OpenMode::kCreate);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->write_at(bytes_of("hello"), 0).ok());
  ASSERT_TRUE((*f)->write_at(bytes_of("world"), 10).ok());  // leaves a hole of zeros
  EXPECT_EQ(*(*f)->size(), 15);
  EXPECT_EQ(read_all(**f, 15), std::string("hello\0\0\0\0\0world", 15));
  EXPECT_EQ(read_all(**f, 100, 10), "world");  // short only at end of file
  EXPECT_EQ((*f)->path(), (tmp.path() / "a").string());
  EXPECT_GE((*f)->native_handle(), 0);
  ASSERT_TRUE((*f)->sync().ok());
  ASSERT_TRUE((*f)->truncate(3).ok());
  EXPECT_EQ(read_all(**f, 100), "hel");
}

TEST(PosixFileSystem, OpenModes) {
  TempDir tmp;
  PosixFileSystem files;
  const fs::path p = tmp.path() / "m";
  auto missing = files.open(p, OpenMode::kRead);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kNotFound);
  EXPECT_NE(missing.error().message().find(p.string()), std::string::npos);  // names the path
  EXPECT_NE(missing.error().message().find(std::strerror(ENOENT)), std::string::npos);  // and the errno
  EXPECT_FALSE(files.open(p, OpenMode::kReadWrite).ok());
  ASSERT_TRUE(files.open(p, OpenMode::kCreateNew).ok());
  auto again = files.open(p, OpenMode::kCreateNew);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind(), ErrorKind::kAlreadyExists);
  ASSERT_TRUE((*files.open(p, OpenMode::kCreate))->write_at(bytes_of("abc"), 0).ok());
  EXPECT_EQ(*(*files.open(p, OpenMode::kCreate))->size(), 3);  // kCreate keeps the content
  auto ro = files.open(p, OpenMode::kRead);
  ASSERT_TRUE(ro.ok());
  EXPECT_FALSE((*ro)->write_at(bytes_of("x"), 0).ok());  // read-only
  EXPECT_EQ(*(*files.open(p, OpenMode::kTruncate))->size(), 0);
}

TEST(PosixFileSystem, AFileOutlivesItsName) {
  TempDir tmp;
  PosixFileSystem files;
  auto f = files.open(tmp.path() / "gone", OpenMode::kCreate);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->write_at(bytes_of("still here"), 0).ok());
  ASSERT_TRUE(files.remove(tmp.path() / "gone").ok());
  EXPECT_FALSE(*files.exists(tmp.path() / "gone"));
  EXPECT_EQ(read_all(**f, 10), "still here");
}

TEST(PosixFileSystem, MappingSeesLaterWrites) {
  TempDir tmp;
  PosixFileSystem files;
  auto f = files.open(tmp.path() / "idx", OpenMode::kCreate);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->truncate(4096).ok());
  auto m = (*f)->map(4096);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ((*m)->size(), 4096u);
  EXPECT_EQ((*m)->data()[7], 0);
  ASSERT_TRUE((*f)->write_at(bytes_of("Z"), 7).ok());
  EXPECT_EQ((*m)->data()[7], 'Z');  // MAP_SHARED over the page cache
  auto empty = (*f)->map(0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->size(), 0u);
}

TEST(PosixFileSystem, HolesAndAllocation) {
  TempDir tmp;
  PosixFileSystem files;
  auto f = files.open(tmp.path() / "sparse", OpenMode::kCreate);
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(*(*f)->has_hole(0));
  ASSERT_TRUE((*f)->truncate(1 << 20).ok());  // sparse where holes are tracked
  auto sparse = (*f)->has_hole(1 << 20);
  ASSERT_TRUE(sparse.ok());
  auto g = files.open(tmp.path() / "dense", OpenMode::kCreate);
  ASSERT_TRUE(g.ok());
  std::string block(8192, 'x');
  ASSERT_TRUE((*g)->write_at(bytes_of(block), 0).ok());
  EXPECT_FALSE(*(*g)->has_hole(8192));
  ASSERT_TRUE((*g)->allocate(1 << 16).ok());
  EXPECT_EQ(*(*g)->size(), 1 << 16);
}

TEST(PosixFileSystem, DirectoriesListRenameRemove) {
  TempDir tmp;
  PosixFileSystem files;
  const fs::path d = tmp.path() / "x" / "y";
  ASSERT_TRUE(files.create_directories(d).ok());
  ASSERT_TRUE(files.create_directories(d).ok());  // existing is fine
  EXPECT_TRUE(*files.is_directory(d));
  EXPECT_FALSE(*files.is_directory(d / "nope"));
  ASSERT_TRUE(files.open(d / "b", OpenMode::kCreate).ok());
  ASSERT_TRUE(files.open(d / "a", OpenMode::kCreate).ok());
  ASSERT_TRUE(files.create_directories(d / "c").ok());
  auto entries = files.list(d);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 3u);  // sorted, no "." or ".."
  EXPECT_EQ((*entries)[0].name, "a");
  EXPECT_FALSE((*entries)[0].is_directory);
  EXPECT_EQ((*entries)[2].name, "c");
  EXPECT_TRUE((*entries)[2].is_directory);
  ASSERT_TRUE(files.rename(d / "a", d / "b").ok());  // replaces b
  EXPECT_FALSE(*files.exists(d / "a"));
  EXPECT_TRUE(*files.exists(d / "b"));
  EXPECT_FALSE(files.rename(d / "a", d / "z").ok());
  ASSERT_TRUE(files.sync_dir(d).ok());
  EXPECT_FALSE(files.sync_dir(d / "missing").ok());
  ASSERT_TRUE(files.remove(d / "c").ok());  // an empty directory
  ASSERT_TRUE(files.remove(d / "c").ok());  // missing: fine
  EXPECT_FALSE(files.list(d / "c").ok());
  ASSERT_TRUE(files.remove_all(tmp.path() / "x").ok());
  EXPECT_FALSE(*files.exists(tmp.path() / "x"));
  ASSERT_TRUE(files.remove_all(tmp.path() / "x").ok());
}

TEST(PosixFileSystem, SpaceAndDescriptors) {
  TempDir tmp;
  PosixFileSystem files;
  auto space = files.space(tmp.path());
  ASSERT_TRUE(space.ok());
  EXPECT_GT(space->capacity_bytes, 0);
  EXPECT_LE(space->available_bytes, space->capacity_bytes);
  EXPECT_FALSE(files.space(tmp.path() / "missing").ok());
  auto before = files.descriptor_usage();
  ASSERT_TRUE(before.has_value());
  EXPECT_GT(before->limit, 0);
  auto f = files.open(tmp.path() / "held", OpenMode::kCreate);
  ASSERT_TRUE(f.ok());
  auto after = files.descriptor_usage();
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->open, before->open + 1);
}

}  // namespace
}  // namespace samsa
