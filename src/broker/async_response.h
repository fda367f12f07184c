#pragma once
// AsyncResponse: a response whose parts complete later (each a controller
// change that is answered when its records commit). The handler moves its
// Request in, fills the parts it knows, and takes a share for each part it
// starts; the response is sent when the last share is finished (the
// handler's own share included, so nothing is sent before every part was
// started). A part whose callback is never called (the broker shuts down
// first) leaves the response unsent, as Kafka drops requests at shutdown; a
// connection closed meanwhile drops the reply (io/frame_sink.h).
//
// Loop-thread only.

#include <memory>

#include "base/assert.h"
#include "broker/request.h"

namespace samsa {

template <typename Response>
class AsyncResponse {
 public:
  static std::shared_ptr<AsyncResponse> start(Request& request) {
    return std::shared_ptr<AsyncResponse>(new AsyncResponse(std::move(request)));
  }

  Response& response() { return response_; }
  const Request& request() const { return request_; }

  // One more part under way; finish() it once.
  void add_part() { ++outstanding_; }
  void finish() {
    ASSERT(outstanding_ > 0);
    if (--outstanding_ == 0) request_.respond(response_);
  }

 private:
  explicit AsyncResponse(Request request) : request_(std::move(request)) {}

  Request request_;
  Response response_;
  int outstanding_ = 1;  // the handler's own share
};

}  // namespace samsa
