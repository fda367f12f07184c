#pragma once
// Connection: the queueing over one Stream (io/network.h), written once for
// every Stream: a posix socket (io/posix_network.h) or a simulated one.
//
// Reading is pull-style: when the stream is readable the observer's
// on_readable() is called and the observer calls read() (as often as it
// likes; it stops at kWouldBlock). set_reading(false) drops the read
// interest, which is how the owner applies back-pressure.
//
// Writing: send() queues an OutBuffer behind everything queued before and
// writes as much as the stream takes at once. Bytes go out with one
// Stream::write() (one sendmsg(2)) gathering up to 128 pieces across queued
// buffers; file regions go out with Stream::send_file() (sendfile(2),
// straight from the page cache). Whatever the stream does not take waits
// for writability, which is watched only while something is queued (see
// also cork()). When the queue empties the observer's on_drained() is
// called (only after it had been non-empty at the end of a send()).
// One virtual call per syscall, none per byte.
//
// Memory: queued_memory_bytes() counts the in-memory bytes of queued
// buffers (file regions excluded: they live in the page cache), from send()
// until the buffer is fully written and freed; the same bytes are held in
// the optional shared memory budget (queued.max.response.bytes), which the
// owner consults to mute connections whose responses are not being read.
//
// Errors: a failed write or a hang-up found while handling an event is
// reported through on_error(); a failed write inside send() is returned
// instead (no re-entrant callback). A file region that ends before its size
// (the file was truncated underneath) is kCorrupt: the response framing is
// already promised to the peer. After close() nothing is called any more.
// Loop-thread only. The observer must outlive the connection, and must not
// destroy the connection from inside an observer callback (close() it, and
// drop it later, e.g. from a posted task).

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "base/out_buffer.h"
#include "base/result.h"
#include "io/byte_budget.h"
#include "io/network.h"

namespace samsa {

class Connection final : public Stream::Handler {
 public:
  class Observer {
   public:
    virtual ~Observer() = default;
    virtual void on_readable() = 0;
    virtual void on_drained() {}
    virtual void on_error(const Error& error) = 0;
  };

  // Takes the stream over (its handler), reading enabled.
  Connection(StreamPtr stream, Observer* observer);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  IoResult read(uint8_t* dst, size_t capacity) { return stream_->read(dst, capacity); }
  void set_reading(bool enabled);
  bool reading() const { return reading_; }

  Status send(OutBuffer buffer);
  // While corked, send() only queues. uncork() then writes everything queued
  // with as few syscalls as possible: a burst of pipelined replies goes out
  // in one sendmsg instead of one each.
  void cork() { corked_ = true; }
  Status uncork();
  size_t queued_bytes() const { return queued_bytes_; }
  size_t queued_memory_bytes() const { return queued_memory_bytes_; }
  void set_memory_budget(std::shared_ptr<ByteBudget> budget) { memory_budget_ = std::move(budget); }
  bool has_queued() const { return !queue_.empty(); }

  // Closes the stream; queued data is dropped. Idempotent.
  void close();
  bool closed() const { return stream_->closed(); }
  const std::string& peer() const { return stream_->peer_address(); }

  void on_stream_ready(bool readable, bool writable, bool hangup) override;

 private:
  struct Pending {
    OutBuffer buffer;
    size_t byte_pos = 0;     // next byte of buffer.bytes() to send
    size_t next_splice = 0;  // first splice not yet fully sent
    int64_t region_sent = 0; // bytes of splices[next_splice] already sent
  };
  enum class Flush { kDone, kWouldBlock, kError };

  Flush flush();
  Flush send_region(Pending& p);
  Flush send_bytes();
  void advance_bytes(size_t n);
  static void skip_empty(Pending& p);
  static bool at_region(const Pending& p);
  static bool finished(const Pending& p);
  void update_interest();
  void pop_sent();

  Flush failed(Error error);

  StreamPtr stream_;
  Observer* observer_;
  bool reading_ = true;
  bool corked_ = false;
  bool read_interest_ = true;  // the interests set on the stream
  bool writing_ = false;
  std::deque<Pending> queue_;
  size_t queued_bytes_ = 0;
  size_t queued_memory_bytes_ = 0;
  std::shared_ptr<ByteBudget> memory_budget_;
  Error write_error_{ErrorKind::kClosed, ""};
  bool write_failed_ = false;
};

}  // namespace samsa
