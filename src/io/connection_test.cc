// Connection over a scripted Stream (no socket, no loop): the queue logic is
// the same for every Stream, and its syscall economy (one write per corked
// burst, send_file for regions) is visible in the calls the stream sees.

#include "io/connection.h"
#include "io/posix_file_system.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace samsa {
namespace {

// Takes at most `room` bytes per call (then kWouldBlock until refilled).
class ScriptedStream final : public Stream {
 public:
  size_t room = size_t(-1);
  std::string wire;               // everything written, in order
  std::vector<size_t> write_pieces;  // pieces per write() call
  int send_file_calls = 0;
  bool file_ends_early = false;
  bool read_interest = false, write_interest = false;
  Handler* handler = nullptr;

  void set_handler(Handler* h) override { handler = h; }
  void set_interest(bool r, bool w) override {
    read_interest = r;
    write_interest = w;
  }
  IoResult read(uint8_t*, size_t) override { return {IoResult::Status::kWouldBlock, 0, 0}; }
  IoResult write(const ByteView* pieces, size_t count) override {
    write_pieces.push_back(count);
    size_t n = 0;
    for (size_t i = 0; i < count && room > 0; ++i) {
      size_t k = std::min(room, pieces[i].size());
      wire.append(reinterpret_cast<const char*>(pieces[i].data()), k);
      room -= k;
      n += k;
    }
    if (n == 0) return {IoResult::Status::kWouldBlock, 0, 0};
    return {IoResult::Status::kDone, n, 0};
  }
  IoResult send_file(const File& file, int64_t position, size_t size) override {
    ++send_file_calls;
    if (file_ends_early) return {IoResult::Status::kEof, 0, 0};
    size_t k = std::min(room, size);
    if (k == 0) return {IoResult::Status::kWouldBlock, 0, 0};
    std::string buf(k, '\0');
    auto got = file.read_at(reinterpret_cast<uint8_t*>(buf.data()), k, position);
    EXPECT_TRUE(got.ok());
    wire.append(buf, 0, *got);
    room -= *got;
    return {IoResult::Status::kDone, *got, 0};
  }
  void close() override { closed_ = true; }
  bool closed() const override { return closed_; }
  const std::string& peer_address() const override { return address_; }
  const std::string& local_address() const override { return address_; }

 private:
  bool closed_ = false;
  std::string address_ = "scripted:1";
};

// A file with `bytes` (unlinked at once), as FileRegions hold one.
std::shared_ptr<const File> file_of(const std::string& bytes) {
  char path[] = "/tmp/samsa-connection-test-XXXXXX";
  int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  ::close(fd);
  PosixFileSystem files;
  auto file = files.open(path, OpenMode::kReadWrite);
  EXPECT_TRUE(file.ok());
  ::unlink(path);
  EXPECT_TRUE((*file)->write_at(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0).ok());
  return *file;
}

struct Recorder : Connection::Observer {
  int drained = 0;
  std::vector<Error> errors;
  void on_readable() override {}
  void on_drained() override { ++drained; }
  void on_error(const Error& e) override { errors.push_back(e); }
};

OutBuffer bytes_of(std::string_view s) {
  OutBuffer out;
  out.bytes().assign(s.begin(), s.end());
  return out;
}

struct Wired {
  Wired() {
    auto owned = std::make_unique<ScriptedStream>();
    stream = owned.get();
    conn = std::make_unique<Connection>(std::move(owned), &observer);
  }
  ScriptedStream* stream;
  Recorder observer;
  std::unique_ptr<Connection> conn;
};

TEST(Connection, ACorkedBurstGoesOutInOneWrite) {
  Wired s;
  EXPECT_TRUE(s.stream->read_interest);
  s.conn->cork();
  for (const char* reply : {"one ", "two ", "three"}) ASSERT_TRUE(s.conn->send(bytes_of(reply)).ok());
  EXPECT_TRUE(s.stream->write_pieces.empty());  // corked: only queued
  ASSERT_TRUE(s.conn->uncork().ok());
  EXPECT_EQ(s.stream->write_pieces, (std::vector<size_t>{3}));
  EXPECT_EQ(s.stream->wire, "one two three");
  EXPECT_FALSE(s.conn->has_queued());
  EXPECT_FALSE(s.stream->write_interest);
}

TEST(Connection, RegionsGoThroughSendFileAndAFullStreamWaitsForWritability) {
  Wired s;
  auto file = file_of("0123456789");
  OutBuffer out = bytes_of("head:");
  out.append_region(FileRegion{file, 2, 6});
  out.bytes().insert(out.bytes().end(), {':', 't', 'a', 'i', 'l'});
  s.stream->room = 7;  // "head:" and two bytes of the region
  ASSERT_TRUE(s.conn->send(std::move(out)).ok());
  EXPECT_EQ(s.stream->wire, "head:23");
  EXPECT_TRUE(s.stream->write_interest);  // the rest waits for room
  EXPECT_EQ(s.conn->queued_bytes(), 4u + 5u);
  s.stream->room = size_t(-1);
  s.stream->handler->on_stream_ready(false, true, false);
  EXPECT_EQ(s.stream->wire, "head:234567:tail");
  // Two bytes, then kWouldBlock (a short send_file is tried again), then the rest.
  EXPECT_EQ(s.stream->send_file_calls, 3);
  EXPECT_EQ(s.observer.drained, 1);
  EXPECT_FALSE(s.stream->write_interest);
  EXPECT_EQ(s.conn->queued_bytes(), 0u);
}

TEST(Connection, ARegionWhoseFileEndsEarlyBreaksTheStream) {
  Wired s;
  s.stream->file_ends_early = true;
  OutBuffer out;
  out.append_region(FileRegion{file_of("abc"), 0, 3});
  Status sent = s.conn->send(std::move(out));
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.error().kind(), ErrorKind::kCorrupt);
  EXPECT_FALSE(s.conn->send(bytes_of("later")).ok());  // the failure sticks
}

TEST(Connection, AHangupWhileNotReadingIsAnError) {
  Wired s;
  s.conn->set_reading(false);
  EXPECT_FALSE(s.stream->read_interest);
  s.stream->handler->on_stream_ready(false, false, true);
  ASSERT_EQ(s.observer.errors.size(), 1u);
  EXPECT_EQ(s.observer.errors[0].kind(), ErrorKind::kClosed);
}

}  // namespace
}  // namespace samsa
