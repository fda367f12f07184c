// IndexFile::had_holes: the unwritten tail of a preallocated index is
// detected without reading it (a read fault on a full tmpfs is SIGBUS).

#include "storage/index_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "storage/offset_index.h"
#include "storage/test_batches.h"

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

}  // namespace
}  // namespace samsa
