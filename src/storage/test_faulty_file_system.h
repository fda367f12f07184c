#pragma once
// Test-only: FaultyFileSystem, a FileSystem decorator that fails chosen
// operations on chosen paths, for the fault-injection and full-disk tests
// of storage (and of the layers above, which hand it to what they test).
//
// Every mutating operation (an open that may create, a write, truncate,
// allocate, fsync of a file or a directory, rename, remove) first asks the
// hook. It returns 0 to proceed, an errno to fail the operation without
// doing it, or -errno (writes only) to write the first half of the data and
// then fail with errno (a torn write). Reads and listings pass through;
// mappings too, unless fail_maps() says otherwise. Files opened through it are wrapped, so the hook also sees the
// writes and fsyncs of files opened before it was set.
//
// The hook may be changed at any time (set_hook); it runs on whatever
// thread the operation runs on (a blocking executor's fsyncs included), so
// a hook that keeps state must be set before that work starts.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/file.h"
#include "io/file_system.h"

namespace samsa::test {

enum class FileOp { kOpen, kWrite, kTruncate, kAllocate, kFsync, kRename, kRemove };

inline const char* to_string(FileOp op) {
  switch (op) {
    case FileOp::kOpen: return "open";
    case FileOp::kWrite: return "write";
    case FileOp::kTruncate: return "truncate";
    case FileOp::kAllocate: return "allocate";
    case FileOp::kFsync: return "fsync";
    case FileOp::kRename: return "rename";
    case FileOp::kRemove: return "remove";
  }
  return "?";
}

using FaultHook = std::function<int(FileOp op, const std::filesystem::path& path)>;

class FaultyFileSystem final : public FileSystem {
 public:
  explicit FaultyFileSystem(FileSystem& inner)
      : inner_(inner), hook_(std::make_shared<FaultHook>()), map_errno_(std::make_shared<int>(0)) {}

  // An empty hook injects nothing.
  void set_hook(FaultHook hook) { *hook_ = std::move(hook); }
  void clear_hook() { *hook_ = {}; }
  // Every File::map() fails with `errno_value` (0: mappings work again), on
  // files already open too. Not a hook operation, so that hooks counting
  // the mutating operations see the same ones.
  void fail_maps(int errno_value) { *map_errno_ = errno_value; }

  Result<FilePtr> open(const std::filesystem::path& path, OpenMode mode) override {
    if (mode != OpenMode::kRead && mode != OpenMode::kReadWrite) {
      if (int e = ask(*hook_, FileOp::kOpen, path); e > 0) return errno_error("open " + path.string(), e);
    }
    ASSIGN_OR_RETURN(FilePtr file, inner_.open(path, mode));
    return FilePtr(std::make_shared<FaultyFile>(std::move(file), hook_, map_errno_));
  }
  Result<bool> exists(const std::filesystem::path& path) override { return inner_.exists(path); }
  Result<bool> is_directory(const std::filesystem::path& path) override { return inner_.is_directory(path); }
  Result<std::vector<DirEntry>> list(const std::filesystem::path& dir) override { return inner_.list(dir); }
  Status create_directories(const std::filesystem::path& dir) override { return inner_.create_directories(dir); }
  Status rename(const std::filesystem::path& from, const std::filesystem::path& to) override {
    if (int e = ask(*hook_, FileOp::kRename, from); e > 0) return errno_error("rename " + from.string(), e);
    return inner_.rename(from, to);
  }
  Status remove(const std::filesystem::path& path) override {
    if (int e = ask(*hook_, FileOp::kRemove, path); e > 0) return errno_error("unlink " + path.string(), e);
    return inner_.remove(path);
  }
  Status remove_all(const std::filesystem::path& path) override {
    if (int e = ask(*hook_, FileOp::kRemove, path); e > 0) return errno_error("remove " + path.string(), e);
    return inner_.remove_all(path);
  }
  Status sync_dir(const std::filesystem::path& dir) override {
    if (int e = ask(*hook_, FileOp::kFsync, dir); e > 0) return errno_error("fsync " + dir.string(), e);
    return inner_.sync_dir(dir);
  }
  Result<SpaceInfo> space(const std::filesystem::path& path) override { return inner_.space(path); }
  std::optional<DescriptorUsage> descriptor_usage() override { return inner_.descriptor_usage(); }

 private:
  static int ask(const FaultHook& hook, FileOp op, const std::filesystem::path& path) {
    return hook ? hook(op, path) : 0;
  }

  class FaultyFile final : public File {
   public:
    FaultyFile(FilePtr inner, std::shared_ptr<FaultHook> hook, std::shared_ptr<int> map_errno)
        : inner_(std::move(inner)), hook_(std::move(hook)), map_errno_(std::move(map_errno)) {}
    const std::string& path() const override { return inner_->path(); }
    Status write_at(ByteView data, int64_t position) override {
      if (int e = ask(*hook_, FileOp::kWrite, path()); e != 0) {
        if (e < 0) {  // torn: half of the data reaches the file
          (void)inner_->write_at(data.subspan(0, data.size() / 2), position);
          e = -e;
        }
        return errno_error("write " + path(), e);
      }
      return inner_->write_at(data, position);
    }
    Result<size_t> read_at(uint8_t* out, size_t size, int64_t position) const override {
      return inner_->read_at(out, size, position);
    }
    Result<int64_t> size() const override { return inner_->size(); }
    Status truncate(int64_t size) override {
      if (int e = ask(*hook_, FileOp::kTruncate, path()); e > 0) return errno_error("truncate " + path(), e);
      return inner_->truncate(size);
    }
    Status allocate(int64_t size) override {
      if (int e = ask(*hook_, FileOp::kAllocate, path()); e > 0) return errno_error("fallocate " + path(), e);
      return inner_->allocate(size);
    }
    Status sync() override {
      if (int e = ask(*hook_, FileOp::kFsync, path()); e > 0) return errno_error("fsync " + path(), e);
      return inner_->sync();
    }
    Result<bool> has_hole(int64_t size) const override { return inner_->has_hole(size); }
    Result<std::unique_ptr<FileMapping>> map(size_t size) const override {
      if (*map_errno_ != 0) return errno_error("mmap " + path(), *map_errno_);
      return inner_->map(size);
    }
    Result<int64_t> modified_ms() const override { return inner_->modified_ms(); }
    int native_handle() const override { return inner_->native_handle(); }

   private:
    FilePtr inner_;
    std::shared_ptr<FaultHook> hook_;  // the file system's: set_hook() reaches open files too
    std::shared_ptr<int> map_errno_;   // the file system's too
  };

  FileSystem& inner_;
  std::shared_ptr<FaultHook> hook_;
  std::shared_ptr<int> map_errno_;
};

}  // namespace samsa::test
