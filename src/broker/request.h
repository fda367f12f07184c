#pragma once
// Request: one decoded request header plus the body still to decode, and the
// way to answer it. Handlers decode the body into the generated request
// type, act, and call respond() once — now or later (delayed fetch). The
// frame stays alive as long as the Request (or a copy of its frame pointer),
// so record sets borrowed from it stay valid.

#include <memory>
#include <string>

#include "base/byte_reader.h"
#include "base/log.h"
#include "io/frame_sink.h"
#include "protocol/codec.h"
#include "protocol/request_header.h"
#include "protocol/response_header.h"

namespace samsa {

class Request {
 public:
  Request(protocol::RequestHeader header, InboundFrame frame, ByteReader body, ReplyFn reply)
      : header_(std::move(header)), frame_(std::move(frame)), body_(body), reply_(std::move(reply)) {}

  const protocol::RequestHeader& header() const { return header_; }
  int16_t version() const { return header_.api_version; }
  const std::string& peer() const { return frame_.peer; }
  uint64_t connection_id() const { return frame_.connection_id; }
  std::string client_id() const { return header_.client_id.value_or(""); }

  // Decodes the body; on malformed bytes logs, closes the connection (what
  // Kafka does with a request it cannot parse) and returns false.
  template <typename Body>
  bool decode(Body& body) {
    if (body.decode(body_, header_.api_version) && body_.ok()) return true;
    close("malformed request body");
    return false;
  }

  template <typename Response>
  void respond(const Response& response) {
    OutBuffer out;
    protocol::begin_response(out, header_.correlation_id, header_.api_key, header_.api_version);
    protocol::Encoder w(out);
    response.encode(w, header_.api_version);
    protocol::finish_response(out);
    send(std::move(out));
  }

  void send(OutBuffer out) { reply_(Reply{ReplyKind::kSend, std::move(out)}); }
  // Produce with acks=0: the client expects no response.
  void no_reply() { reply_(Reply{ReplyKind::kNoReply, {}}); }
  void close(const std::string& reason);
  // Drops the frame, and with it its charge against queued.max.request.bytes,
  // once the handler is done with the body (nothing borrowed from it may be
  // used after). Kafka releases a request's buffer when its handler returns,
  // also when the answer waits in a purgatory; an acks=all produce parked for
  // replication that kept its bytes would, with enough of them, stop the
  // broker reading every connection, the followers' fetches too, which are
  // what completes them: a deadlock until the timeouts.
  void release_frame() {
    frame_.frame.reset();
    body_ = ByteReader(ByteView());
  }

 private:
  protocol::RequestHeader header_;
  InboundFrame frame_;
  ByteReader body_;
  ReplyFn reply_;
};

}  // namespace samsa
