#pragma once
// Test-only: reads a data file of the repository (test data under tests/data,
// docs/...). Paths are relative to the repository root, which is where ctest
// runs every unit test (WORKING_DIRECTORY in cmake/samsa.cmake); nothing may
// come from outside the checkout (tests/repo_hygiene/check_paths.py).
//
// A missing or unreadable file fails the test with the path and the reason,
// so the caller writes ASSERT_TRUE(read_repo_file("docs/x.md", &text)) and
// stops there instead of working on empty data.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

namespace samsa::testing {

// A fresh directory under the system temp dir, removed with its contents on
// destruction. `prefix` names the test's area in the directory's name.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "samsa") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp " << tmpl << ": " << std::strerror(errno);
    }
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The path as a reader should see it: absolute, so a test run from the wrong
// directory says where it looked.
inline std::string shown_path(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path.string() : absolute.string();
}

inline ::testing::AssertionResult read_repo_file(const std::filesystem::path& relative, std::string* text) {
  const char* hint = " (test data is read relative to the repository root, where ctest runs the tests)";
  std::FILE* f = std::fopen(relative.c_str(), "rb");
  if (f == nullptr) {
    return ::testing::AssertionFailure() << "cannot open " << shown_path(relative) << ": " << std::strerror(errno)
                                         << hint;
  }
  text->clear();
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text->append(buf, n);
  // fopen of a directory succeeds on Linux; the read then fails (EISDIR).
  const bool failed = std::ferror(f) != 0;
  const int read_errno = errno;
  std::fclose(f);
  if (failed) {
    return ::testing::AssertionFailure() << "cannot read " << shown_path(relative) << ": "
                                         << std::strerror(read_errno) << hint;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace samsa::testing
