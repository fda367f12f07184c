#include "controller/kafka_wire_client.h"

#include <utility>

#include "base/byte_writer.h"
#include "protocol/response_header.h"

namespace samsa {
namespace {
constexpr size_t kReadChunk = 64 * 1024;
// A response larger than this is a broken stream, not a response (the
// simulation's fetches ask for far less).
constexpr int32_t kMaxResponseBytes = 64 * 1024 * 1024;
}  // namespace

KafkaWireClient::KafkaWireClient(Runtime& runtime, std::string client_id)
    : runtime_(runtime), client_id_(std::move(client_id)) {}

KafkaWireClient::~KafkaWireClient() {
  *alive_ = false;
  if (connect_pending_) runtime_.network().cancel_connect(connecting_);
  if (stream_) stream_->set_handler(nullptr);
}

void KafkaWireClient::connect(const std::string& host, uint16_t port, int64_t timeout_ms,
                              std::function<void(Status)> done) {
  ASSERT_MSG(!connect_pending_ && !connected(), "connect() while connected or connecting");
  connect_pending_ = true;
  std::weak_ptr<bool> alive = alive_;
  connecting_ = runtime_.network().connect(
      host, port, timeout_ms, [this, alive, done = std::move(done)](Result<StreamPtr> stream) {
        if (alive.expired() || !*alive.lock()) return;
        connect_pending_ = false;
        if (!stream.ok()) {
          fail_all(stream.error());
          return done(stream.error());
        }
        stream_ = std::move(stream).value();
        stream_->set_handler(this);
        update_interest();
        flush_output();
        done(ok_status());
      });
}

void KafkaWireClient::close() { fail_all(Error(ErrorKind::kClosed, "closed by the client")); }

void KafkaWireClient::fail_all(const Error& error) {
  if (stream_) {
    stream_->set_handler(nullptr);
    stream_->close();
    stream_.reset();
  }
  output_.clear();
  output_pos_ = 0;
  input_.clear();
  auto waiting = std::move(waiting_);
  waiting_.clear();
  auto written = std::move(written_);
  written_.clear();
  for (auto& w : waiting) w.on_response(error);
  for (auto& fn : written) fn(error);
}

void KafkaWireClient::call_raw(int16_t api_key, int16_t version,
                               const std::function<void(protocol::Encoder&)>& encode_body,
                               RawResponseFn on_response, bool expect_response) {
  protocol::RequestHeader header;
  header.api_key = api_key;
  header.api_version = version;
  header.correlation_id = next_correlation_id_++;
  header.client_id = client_id_;
  OutBuffer out;
  ByteWriter(out.bytes()).write_i32(0);  // the size, patched below
  header.encode(out);
  protocol::Encoder w(out);
  encode_body(w);
  // Record sets given as file regions cannot occur here: the client builds
  // its batches in memory.
  ASSERT_MSG(out.splices().empty(), "a client request with file regions");
  Bytes& frame = out.bytes();
  uint32_t size = uint32_t(frame.size() - 4);
  frame[0] = uint8_t(size >> 24);
  frame[1] = uint8_t(size >> 16);
  frame[2] = uint8_t(size >> 8);
  frame[3] = uint8_t(size);
  output_.insert(output_.end(), frame.begin(), frame.end());
  if (expect_response) {
    waiting_.push_back(Waiting{header.correlation_id, api_key, version, std::move(on_response)});
  } else {
    written_.push_back(std::move(on_response));
  }
  flush_output();
}

void KafkaWireClient::flush_output() {
  if (!connected()) return;
  while (output_pos_ < output_.size()) {
    ByteView piece(output_.data() + output_pos_, output_.size() - output_pos_);
    IoResult r = stream_->write(&piece, 1);
    if (r.status == IoResult::Status::kWouldBlock) break;
    if (r.status != IoResult::Status::kDone) {
      return fail_all(Error(ErrorKind::kIo, "write failed (errno " + std::to_string(r.err) + ")"));
    }
    output_pos_ += r.bytes;
  }
  if (output_pos_ == output_.size()) {
    output_.clear();
    output_pos_ = 0;
    // Everything written: acks=0 requests are done, on a posted task.
    if (!written_.empty()) {
      auto written = std::make_shared<std::deque<RawResponseFn>>(std::move(written_));
      written_.clear();
      std::weak_ptr<bool> alive = alive_;
      runtime_.post([alive, written] {
        if (alive.expired() || !*alive.lock()) return;
        for (auto& fn : *written) fn(ByteView());
      });
    }
  }
  update_interest();
}

void KafkaWireClient::update_interest() {
  if (connected()) stream_->set_interest(true, output_pos_ < output_.size());
}

void KafkaWireClient::on_stream_ready(bool readable, bool writable, bool hangup) {
  // A callback may destroy this client (a reader giving up and dialing
  // anew): nothing here touches it after one ran and it is gone.
  std::weak_ptr<bool> alive = alive_;
  if (writable) flush_output();
  if (alive.expired()) return;
  if (connected() && (readable || hangup)) read_input();
}

void KafkaWireClient::read_input() {
  while (connected()) {
    size_t old = input_.size();
    input_.resize(old + kReadChunk);
    IoResult r = stream_->read(input_.data() + old, kReadChunk);
    input_.resize(old + (r.status == IoResult::Status::kDone ? r.bytes : 0));
    if (r.status == IoResult::Status::kWouldBlock) return;
    if (r.status == IoResult::Status::kEof) return fail_all(Error(ErrorKind::kClosed, "connection closed by peer"));
    if (r.status == IoResult::Status::kError) {
      return fail_all(Error(ErrorKind::kIo, "read failed (errno " + std::to_string(r.err) + ")"));
    }
    std::weak_ptr<bool> alive = alive_;
    bool more = deliver_frames();
    if (alive.expired() || !more) return;
  }
}

// Hands every complete frame to its waiter; false once the connection failed.
bool KafkaWireClient::deliver_frames() {
  size_t pos = 0;
  while (input_.size() - pos >= 4) {
    ByteReader size_reader(ByteView(input_.data() + pos, 4));
    int32_t size = size_reader.read_i32();
    if (size < 4 || size > kMaxResponseBytes) {
      fail_all(Error(ErrorKind::kCorrupt, "response size " + std::to_string(size)));
      return false;
    }
    if (input_.size() - pos - 4 < size_t(size)) break;
    ByteReader r(ByteView(input_.data() + pos + 4, size_t(size)));
    int32_t correlation_id = r.read_i32();
    if (waiting_.empty() || waiting_.front().correlation_id != correlation_id) {
      fail_all(Error(ErrorKind::kCorrupt, "unexpected correlation id " + std::to_string(correlation_id)));
      return false;
    }
    Waiting w = std::move(waiting_.front());
    waiting_.pop_front();
    if (protocol::response_header_version(w.api_key, w.version) == 1) {
      // Tagged fields of the response header: none defined; skip them.
      uint32_t tags = r.read_uvarint();
      for (uint32_t i = 0; i < tags && r.ok(); ++i) {
        r.read_uvarint();
        r.skip(r.read_uvarint());
      }
    }
    std::weak_ptr<bool> alive = alive_;
    if (!r.ok()) {
      w.on_response(Error(ErrorKind::kCorrupt, "response header does not parse"));
    } else {
      w.on_response(r.rest());
    }
    if (alive.expired()) return false;  // the callback destroyed this client
    pos += 4 + size_t(size);
    if (!connected()) return false;  // the callback closed us
  }
  input_.erase(input_.begin(), input_.begin() + ptrdiff_t(pos));
  return true;
}

}  // namespace samsa
