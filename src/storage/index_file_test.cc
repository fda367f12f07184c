// IndexFile::had_holes: the unwritten tail of a preallocated index is
// detected without reading it (a read fault on a full tmpfs is SIGBUS).
// IndexFile::resize: a failure at any step leaves every entry readable.

#include "storage/index_file.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>

#include "storage/offset_index.h"
#include "storage/test_batches.h"
#include "storage/test_faulty_file_system.h"

namespace samsa {
namespace {

TEST(IndexFileTest, APreallocatedTailIsAHoleAndFailsTheSanityCheck) {
  test::TempDir tmp;
  auto path = tmp.path() / "00000000000000000000.index";
  {
    auto index = OffsetIndex::open(test::files(), path, Offset(0), /*truncate=*/true);
    ASSERT_TRUE(index.ok());
    ASSERT_TRUE(index->file().resize(10 << 20).ok());  // as an active segment's
    ASSERT_TRUE(index->append(Offset(5), 0).ok());
  }  // a crash: never trimmed
  auto reopened = OffsetIndex::open(test::files(), path, Offset(0), false);
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE(reopened->file().had_holes());
  EXPECT_FALSE(reopened->sane(1000));
  // Trimmed (a roll or a clean close): no hole, sane again.
  reopened->file().truncate_entries(0);
  ASSERT_TRUE(reopened->append(Offset(5), 0).ok());
  ASSERT_TRUE(reopened->file().trim().ok());
  auto trimmed = OffsetIndex::open(test::files(), path, Offset(0), false);
  ASSERT_TRUE(trimmed.ok());
  EXPECT_FALSE(trimmed->file().had_holes());
  EXPECT_TRUE(trimmed->sane(1000));
}

// The entries an index of 41 (offset 10 i, position 100 i) must keep serving.
void expect_entries_served(const OffsetIndex& index) {
  ASSERT_EQ(index.entries(), 41u);
  for (int64_t i = 0; i < 41; ++i) EXPECT_EQ(index.lookup(Offset(10 * i + 5)).position, 100 * i);
}

// Broker simulation seed 45: a roll on a full disk trimmed the index (the
// truncate and the remap both failed with ENOSPC), then made it active again
// (the same), and the next fetch read an entry outside the mapping.
TEST(IndexFileTest, AFailedResizeKeepsEveryEntryMapped) {
  test::TempDir tmp;
  test::FaultyFileSystem files(test::files());
  auto index = OffsetIndex::open(files, tmp.path() / "00000000000000000000.index", Offset(0), /*truncate=*/true);
  ASSERT_TRUE(index.ok());
  ASSERT_TRUE(index->file().resize(512).ok());  // active
  for (int64_t i = 0; i < 41; ++i) ASSERT_TRUE(index->append(Offset(10 * i), 100 * i).ok());

  // The disk is full: truncates and mappings fail.
  files.set_hook([](test::FileOp op, const std::filesystem::path&) { return op == test::FileOp::kTruncate ? ENOSPC : 0; });
  files.fail_maps(ENOSPC);
  Status trimmed = index->file().trim();  // the roll
  ASSERT_FALSE(trimmed.ok());
  EXPECT_EQ(trimmed.error().kind(), ErrorKind::kNoSpace);
  expect_entries_served(*index);
  EXPECT_FALSE(index->file().resize(512).ok());  // active again
  expect_entries_served(*index);

  // The file grows, its mapping cannot: the old one serves.
  files.clear_hook();
  EXPECT_FALSE(index->file().resize(1024).ok());
  expect_entries_served(*index);

  // Space again: the roll succeeds and leaves an exact, sane index.
  files.fail_maps(0);
  ASSERT_TRUE(index->file().trim().ok());
  expect_entries_served(*index);
  EXPECT_TRUE(index->full());
  EXPECT_TRUE(index->sane(100 * 41));
}

}  // namespace
}  // namespace samsa
