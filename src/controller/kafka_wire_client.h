#pragma once
// KafkaWireClient: one Kafka client connection over any Stream (the
// simulator's, or a real socket through PosixNetwork): the Raft transport's
// link to each peer (raft_network_transport.h) and the broker simulation's
// clients. Requests are encoded by protocol/'s codec and framed
// (int32 size, header, body); responses are matched to requests by
// correlation id in order, as Kafka answers them on one connection, and
// decoded by the same codec, so the simulation exercises the real wire path
// both ways. A request that expects no answer (produce with acks=0) is
// written and forgotten.
//
// Failure model: a connect error, a reset, an end of stream, a response that
// does not parse or whose correlation id is not the next expected one fails
// every outstanding request with that error and closes the connection; the
// owner dials again (a client retrying after a reset is where duplicates
// come from). Loop-thread only. Callbacks never run inside the call that
// caused them.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "base/assert.h"
#include "base/bytes.h"
#include "base/byte_reader.h"
#include "base/result.h"
#include "io/runtime.h"
#include "protocol/codec.h"
#include "protocol/request_header.h"

namespace samsa {

class KafkaWireClient final : public Stream::Handler {
 public:
  // The response body (after the response header), or why there is none.
  using RawResponseFn = std::function<void(Result<ByteView> body)>;

  KafkaWireClient(Runtime& runtime, std::string client_id);
  ~KafkaWireClient() override;
  KafkaWireClient(const KafkaWireClient&) = delete;
  KafkaWireClient& operator=(const KafkaWireClient&) = delete;

  // Dials; `done` runs once with the outcome. Requests sent before the
  // connection is up wait for it.
  void connect(const std::string& host, uint16_t port, int64_t timeout_ms, std::function<void(Status)> done);
  bool connected() const { return stream_ != nullptr && !stream_->closed(); }
  // Closes and fails every outstanding request with kClosed.
  void close();
  size_t outstanding() const { return waiting_.size(); }

  // Sends one request. `on_response` runs once: with the decoded response,
  // or with the transport's error. With expect_response false it runs with
  // an empty body as soon as the request is written (acks=0).
  template <typename Request, typename Response>
  void call(const Request& request, int16_t version, std::function<void(Result<Response>)> on_response,
            bool expect_response = true);

  // The untyped form under call().
  void call_raw(int16_t api_key, int16_t version, const std::function<void(protocol::Encoder&)>& encode_body,
                RawResponseFn on_response, bool expect_response);

  void on_stream_ready(bool readable, bool writable, bool hangup) override;

 private:
  struct Waiting {
    int32_t correlation_id;
    int16_t api_key;
    int16_t version;
    RawResponseFn on_response;
  };
  void fail_all(const Error& error);
  void flush_output();
  void read_input();
  bool deliver_frames();
  void update_interest();

  Runtime& runtime_;
  std::string client_id_;
  StreamPtr stream_;
  ConnectId connecting_ = 0;
  bool connect_pending_ = false;
  int32_t next_correlation_id_ = 1;
  Bytes output_;           // framed requests not yet written
  size_t output_pos_ = 0;  // first unwritten byte of output_
  Bytes input_;            // bytes read, not yet a whole frame
  std::deque<Waiting> waiting_;
  // Completions of acks=0 requests, delivered from a posted task (never
  // inside call_raw).
  std::deque<RawResponseFn> written_;
  // Set while this object lives; posted tasks check it.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

template <typename Request, typename Response>
void KafkaWireClient::call(const Request& request, int16_t version,
                           std::function<void(Result<Response>)> on_response, bool expect_response) {
  call_raw(
      int16_t(Request::kApiKey), version, [&](protocol::Encoder& w) { request.encode(w, version); },
      [version, on_response = std::move(on_response), expect_response](Result<ByteView> body) {
        if (!body.ok()) return on_response(body.error());
        Response response;
        if (!expect_response) return on_response(std::move(response));
        ByteReader r(body.value());
        if (!response.decode(r, version) || !r.ok() || !r.at_end()) {
          return on_response(Error(ErrorKind::kCorrupt, "response does not parse"));
        }
        on_response(std::move(response));
      },
      expect_response);
}

}  // namespace samsa
