#pragma once
// Test helpers for the simulated runtime's tests: a stream end that reads
// everything it is given and writes what it is asked to, as a Handler, the
// way io/connection does (read until kWouldBlock, write interest only while
// bytes wait), recording what it saw.

#include <memory>
#include <optional>

#include "base/bytes.h"
#include "base/result.h"
#include "io/network.h"

namespace samsa::sim {

class TestPeer final : public Stream::Handler {
 public:
  explicit TestPeer(StreamPtr stream) : s_(std::move(stream)) {
    s_->set_handler(this);
    s_->set_interest(true, false);
  }
  ~TestPeer() override {
    if (s_) s_->set_handler(nullptr);
  }
  TestPeer(const TestPeer&) = delete;
  TestPeer& operator=(const TestPeer&) = delete;

  Stream& stream() { return *s_; }
  void send(ByteView bytes) {
    out_.insert(out_.end(), bytes.begin(), bytes.end());
    flush();
  }
  void set_reading(bool reading) {
    reading_ = reading;
    s_->set_interest(reading_, sent_ < out_.size());
  }
  void close() { s_->close(); }

  void on_stream_ready(bool readable, bool writable, bool hangup) override {
    ++calls;
    if (readable || hangup) drain();
    if (writable) flush();
    if (hangup) {
      // Failed: keep what was read and the error, then close, as a real
      // connection must (a hangup is reported until the stream is closed).
      ++hangups;
      s_->close();
    }
  }

  Bytes received;
  size_t sent() const { return sent_; }
  bool all_sent() const { return sent_ == out_.size(); }
  bool eof = false;
  int read_error = 0;
  int write_error = 0;
  int hangups = 0;
  int calls = 0;
  int would_block = 0;

 private:
  void drain() {
    uint8_t buf[1000];
    for (int i = 0; i < 1'000'000; ++i) {
      IoResult r = s_->read(buf, sizeof buf);
      if (r.status == IoResult::Status::kDone) {
        received.insert(received.end(), buf, buf + r.bytes);
        continue;
      }
      if (r.status == IoResult::Status::kEof) eof = true;
      if (r.status == IoResult::Status::kError) read_error = r.err;
      if (r.status != IoResult::Status::kWouldBlock) s_->set_interest(false, false);
      return;
    }
  }
  void flush() {
    while (sent_ < out_.size()) {
      ByteView piece(out_.data() + sent_, out_.size() - sent_);
      IoResult r = s_->write(&piece, 1);
      if (r.status == IoResult::Status::kDone) {
        sent_ += r.bytes;
        continue;
      }
      if (r.status == IoResult::Status::kWouldBlock) ++would_block;
      if (r.status == IoResult::Status::kError) write_error = r.err;
      break;
    }
    if (!s_->closed()) s_->set_interest(reading_ && !eof && read_error == 0, sent_ < out_.size() && write_error == 0);
  }

  StreamPtr s_;
  Bytes out_;
  size_t sent_ = 0;
  bool reading_ = true;
};

// Bytes 0, 1, ..., 250, 0, 1, ...: order and loss show in any prefix.
inline Bytes test_pattern(size_t n, uint8_t salt = 0) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t((i + salt) % 251);
  return b;
}

}  // namespace samsa::sim
