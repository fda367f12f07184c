// ControllerForwarder against a stand-in controller listener on loopback:
// a forwarded request whose answer says NOT_CONTROLLER (the node reached
// had just lost the leadership) is sent again until a controller answers
// it, and only that answer reaches the caller; other errors inside an
// answer are the client's. forwarded_answer_says_not_controller for every
// forwarded API.

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "broker/controller_forwarder.h"
#include "broker/forwarded_answer.h"
#include "io/frame_server.h"
#include "io/posix_runtime.h"
#include "protocol/codec.h"
#include "protocol/error_code.h"
#include "protocol/generated/alter_client_quotas.h"
#include "protocol/generated/apis.h"
#include "protocol/generated/create_partitions.h"
#include "protocol/generated/delete_topics.h"
#include "protocol/generated/elect_leaders.h"
#include "protocol/generated/unregister_broker.h"
#include "protocol/request_header.h"
#include "protocol/response_header.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
constexpr int16_t kDeleteTopicsVersion = 6;

template <typename Response>
Bytes body_of(const Response& response, int16_t version) {
  OutBuffer out;
  protocol::Encoder w(out);
  response.encode(w, version);
  return out.bytes();
}

protocol::DeleteTopicsResponse delete_answer(ErrorCode code) {
  protocol::DeleteTopicsResponse r;
  protocol::DeleteTopicsResponse::DeletableTopicResult t;
  t.name = "t";
  t.error_code = int16_t(code);
  r.responses.push_back(t);
  return r;
}

// Answers DeleteTopics: NOT_CONTROLLER to the first `refusals`, then `final_code`.
class StandInController final : public FrameSink {
 public:
  StandInController(int refusals, ErrorCode final_code) : refusals_(refusals), final_code_(final_code) {}
  int requests() const { return requests_; }

  void on_frame(InboundFrame frame, ReplyFn reply) override {
    ByteReader reader(*frame.frame);
    protocol::RequestHeader header;
    ASSERT_TRUE(header.decode(reader));
    ASSERT_EQ(header.api_key, int16_t(protocol::ApiKey::kDeleteTopics));
    ++requests_;
    ErrorCode code = requests_ <= refusals_ ? ErrorCode::kNotController : final_code_;
    OutBuffer out;
    protocol::begin_response(out, header.correlation_id, header.api_key, header.api_version);
    protocol::Encoder w(out);
    delete_answer(code).encode(w, header.api_version);
    protocol::finish_response(out);
    reply(Reply{ReplyKind::kSend, std::move(out)});
  }

 private:
  int refusals_;
  ErrorCode final_code_;
  int requests_ = 0;
};

struct Outcome {
  std::optional<Result<Bytes>> answer;
  int requests = 0;
};

Outcome forward_delete_topics(int refusals, ErrorCode final_code) {
  auto runtime = PosixRuntime::create(1);
  EXPECT_TRUE(runtime.ok());
  StandInController sink(refusals, final_code);
  auto server = FrameServer::start(**runtime, FrameServerOptions{}, sink);
  EXPECT_TRUE(server.ok());
  LeaderEndpoint controller{NodeId(2), "127.0.0.1", (*server)->port()};
  Outcome outcome;
  {
    ControllerForwarder forwarder(**runtime, NodeId(1), [controller] { return controller; });
    protocol::DeleteTopicsRequest request;
    request.topic_names.push_back("t");
    request.timeout_ms = 5000;
    Bytes body = body_of(request, kDeleteTopicsVersion);
    forwarder.forward(int16_t(protocol::ApiKey::kDeleteTopics), kDeleteTopicsVersion, body,
                      [&](Result<Bytes> answer) {
                        outcome.answer = std::move(answer);
                        (*runtime)->stop();
                      });
    TimerId guard = (*runtime)->add_timer(20000, [&] { (*runtime)->stop(); });
    (*runtime)->run();
    (*runtime)->cancel_timer(guard);
  }
  outcome.requests = sink.requests();
  return outcome;
}

ErrorCode first_topic_code(const Bytes& body) {
  protocol::DeleteTopicsResponse r;
  ByteReader reader(body);
  EXPECT_TRUE(r.decode(reader, kDeleteTopicsVersion));
  EXPECT_EQ(r.responses.size(), 1u);
  return r.responses.empty() ? ErrorCode::kUnknownServerError : ErrorCode(r.responses[0].error_code);
}

TEST(ControllerForwarder, AnAnswerOfNotControllerIsSentAgainUntilAControllerTakesIt) {
  Outcome o = forward_delete_topics(3, ErrorCode::kNone);
  ASSERT_TRUE(o.answer.has_value()) << "no answer within 20 s";
  ASSERT_TRUE(o.answer->ok()) << o.answer->error().to_string();
  EXPECT_EQ(first_topic_code(**o.answer), ErrorCode::kNone);
  EXPECT_EQ(o.requests, 4);
}

TEST(ControllerForwarder, AnyOtherErrorInsideTheAnswerIsTheClients) {
  Outcome o = forward_delete_topics(0, ErrorCode::kUnknownTopicOrPartition);
  ASSERT_TRUE(o.answer.has_value() && o.answer->ok());
  EXPECT_EQ(first_topic_code(**o.answer), ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(o.requests, 1);
}

TEST(ForwardedAnswer, NotControllerIsFoundWhereverTheApiKeepsItsErrors) {
  using protocol::ApiKey;
  auto says = [](ApiKey key, int16_t version, const Bytes& body) {
    return forwarded_answer_says_not_controller(int16_t(key), version, body);
  };
  EXPECT_TRUE(says(ApiKey::kDeleteTopics, 6, body_of(delete_answer(ErrorCode::kNotController), 6)));
  EXPECT_FALSE(says(ApiKey::kDeleteTopics, 6, body_of(delete_answer(ErrorCode::kNone), 6)));

  protocol::CreatePartitionsResponse partitions;
  partitions.results.emplace_back().error_code = int16_t(ErrorCode::kNone);
  EXPECT_FALSE(says(ApiKey::kCreatePartitions, 3, body_of(partitions, 3)));
  partitions.results.emplace_back().error_code = int16_t(ErrorCode::kNotController);
  EXPECT_TRUE(says(ApiKey::kCreatePartitions, 3, body_of(partitions, 3)));

  protocol::ElectLeadersResponse elect;
  elect.replica_election_results.emplace_back().partition_result.emplace_back().error_code =
      int16_t(ErrorCode::kNotController);
  EXPECT_TRUE(says(ApiKey::kElectLeaders, 2, body_of(elect, 2)));

  protocol::AlterClientQuotasResponse quotas;
  quotas.entries.emplace_back().error_code = int16_t(ErrorCode::kNotController);
  EXPECT_TRUE(says(ApiKey::kAlterClientQuotas, 1, body_of(quotas, 1)));

  protocol::UnregisterBrokerResponse unregister;
  unregister.error_code = int16_t(ErrorCode::kNotController);
  EXPECT_TRUE(says(ApiKey::kUnregisterBroker, 0, body_of(unregister, 0)));

  // Not a forwarded API, or bytes that do not decode: the answer is the client's.
  EXPECT_FALSE(says(ApiKey::kProduce, 9, body_of(unregister, 0)));
  EXPECT_FALSE(says(ApiKey::kDeleteTopics, 6, Bytes{0xff, 0xff, 0xff}));
}

}  // namespace
}  // namespace samsa
