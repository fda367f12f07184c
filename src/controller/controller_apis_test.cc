// ControllerApis: the controller listener's APIs as frames in, replies out:
// what ApiVersions lists, the size limit, broker APIs refused, Vote and
// SamsaRaftPush through the transport's capture of the core's answer, and
// the cluster id check end to end.

#include "controller/controller_apis.h"

#include "controller/raft_fetch_wire.h"

#include <gtest/gtest.h>

#include "base/byte_reader.h"
#include "protocol/codec.h"
#include "protocol/generated/create_topics.h"
#include "protocol/generated/describe_quorum.h"
#include "protocol/response_header.h"
#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa {
namespace {

using protocol::ApiKey;
using protocol::ErrorCode;

struct FixedQuorum final : QuorumView {
  QuorumDescription describe_quorum() const override {
    QuorumDescription q;
    q.is_leader = true;
    q.leader = NodeId(2);
    q.epoch = 4;
    q.high_watermark = 9;
    q.voters.push_back(ReplicaDescription{NodeId(2), 9, 100, 100});
    return q;
  }
};

template <typename Body>
std::shared_ptr<Bytes> frame(ApiKey key, int16_t version, const Body& body) {
  protocol::RequestHeader header;
  header.api_key = int16_t(key);
  header.api_version = version;
  header.correlation_id = 77;
  header.client_id = "test";
  OutBuffer out;
  header.encode(out);
  protocol::Encoder w(out);
  body.encode(w, version);
  return std::make_shared<Bytes>(out.bytes());
}

struct Answer {
  ReplyKind kind = ReplyKind::kNoReply;
  Bytes body;  // after the response header
};

class ControllerApisTest : public ::testing::Test {
 protected:
  ControllerApisTest() : world(1), host(world.add_host()) {
    RaftNetworkTransportOptions options;
    options.identity = RaftWireIdentity{"cluster-A", NodeId(2), {NodeId(1), NodeId(2), NodeId(3)}, {}};
    transport = std::make_unique<RaftNetworkTransport>(world.runtime(host), options);
  }

  Answer call(std::shared_ptr<Bytes> bytes, ApiKey key, int16_t version) {
    Answer answer;
    InboundFrame f;
    f.connection_id = 1;
    f.frame = std::move(bytes);
    f.peer = "10.0.0.9:5000";
    bool replied = false;
    apis.on_frame(std::move(f), [&](Reply reply) {
      replied = true;
      answer.kind = reply.kind;
      if (reply.kind != ReplyKind::kSend) return;
      ByteReader r(reply.payload.bytes());
      EXPECT_EQ(size_t(r.read_i32()), reply.payload.bytes().size() - 4);
      EXPECT_EQ(r.read_i32(), 77);
      if (protocol::response_header_version(int16_t(key), version) == 1) {
        EXPECT_EQ(r.read_uvarint(), 0u);
      }
      ByteView rest = r.rest();
      answer.body.assign(rest.begin(), rest.end());
    });
    EXPECT_TRUE(replied);
    return answer;
  }

  template <typename Response>
  Response parse(const Answer& a, int16_t version) {
    EXPECT_EQ(a.kind, ReplyKind::kSend);
    Response response;
    ByteReader r(a.body);
    EXPECT_TRUE(response.decode(r, version) && r.at_end());
    return response;
  }

  std::map<int16_t, std::pair<int16_t, int16_t>> listed() {
    protocol::ApiVersionsRequest request;
    auto response = parse<protocol::ApiVersionsResponse>(
        call(frame(ApiKey::kApiVersions, 3, request), ApiKey::kApiVersions, 3), 3);
    std::map<int16_t, std::pair<int16_t, int16_t>> out;
    for (const auto& k : response.api_keys) out[k.api_key] = {k.min_version, k.max_version};
    return out;
  }

  protocol::VoteRequest vote_request(std::string cluster) {
    raft::Message m;
    m.type = raft::MessageType::kVote;
    m.from = NodeId(1);
    m.to = NodeId(2);
    m.term = raft::Term(3);
    return encode_vote_request(m, cluster);
  }

  sim::SimWorld world;
  sim::HostId host;
  std::unique_ptr<RaftNetworkTransport> transport;
  FixedQuorum quorum;
  ControllerApis apis;
};

TEST_F(ControllerApisTest, ApiVersionsListsWhatIsAnsweredAndNeverThePrivatePush) {
  EXPECT_EQ(listed(), (std::map<int16_t, std::pair<int16_t, int16_t>>{{18, {0, 4}}}));
  apis.set_quorum(&quorum);
  apis.set_transport(transport.get());
  auto all = listed();
  EXPECT_EQ(all[18], std::make_pair(int16_t(0), int16_t(4)));
  EXPECT_EQ(all[55], std::make_pair(int16_t(0), int16_t(2)));
  EXPECT_EQ(all[52], std::make_pair(int16_t(0), int16_t(2)));
  EXPECT_EQ(all[54], std::make_pair(int16_t(0), int16_t(1)));  // EndQuorumEpoch
  EXPECT_EQ(all.count(1000), 0u);
  EXPECT_EQ(all.size(), 4u);
}

TEST_F(ControllerApisTest, BrokerApisAndUnservedApisCloseTheConnection) {
  protocol::DescribeQuorumRequest dq;
  EXPECT_EQ(call(frame(ApiKey::kDescribeQuorum, 0, dq), ApiKey::kDescribeQuorum, 0).kind, ReplyKind::kClose);
  EXPECT_EQ(call(frame(ApiKey::kVote, 2, vote_request("cluster-A")), ApiKey::kVote, 2).kind, ReplyKind::kClose);
  protocol::ApiVersionsRequest any;  // a Metadata header with a junk body: refused by key first
  EXPECT_EQ(call(frame(ApiKey::kMetadata, 0, any), ApiKey::kMetadata, 0).kind, ReplyKind::kClose);
}

TEST_F(ControllerApisTest, ARequestBeyondTheSizeLimitIsClosedBeforeDecoding) {
  apis.set_transport(transport.get());
  auto big = std::make_shared<Bytes>(kMaxRaftMessageBytes + 1);
  EXPECT_EQ(call(big, ApiKey::kSamsaRaftPush, 0).kind, ReplyKind::kClose);
}

TEST_F(ControllerApisTest, DescribeQuorumAnswersFromTheView) {
  apis.set_quorum(&quorum);
  protocol::DescribeQuorumRequest request;
  request.topics.resize(1);
  request.topics[0].topic_name = "__cluster_metadata";
  request.topics[0].partitions.resize(1);
  auto response = parse<protocol::DescribeQuorumResponse>(
      call(frame(ApiKey::kDescribeQuorum, 1, request), ApiKey::kDescribeQuorum, 1), 1);
  ASSERT_EQ(response.error_code, 0);
  const auto& p = response.topics.at(0).partitions.at(0);
  EXPECT_EQ(p.leader_id, 2);
  EXPECT_EQ(p.leader_epoch, 4);
  EXPECT_EQ(p.high_watermark, 9);
  ASSERT_EQ(p.current_voters.size(), 1u);
  EXPECT_EQ(p.current_voters[0].last_caught_up_timestamp, 100);
}

TEST_F(ControllerApisTest, VoteReachesTheCoreAndItsAnswerIsTheResponse) {
  apis.set_transport(transport.get());
  std::vector<raft::Message> received;
  transport->set_receiver([&](const raft::Message& m) {
    received.push_back(m);
    raft::Message grant;
    grant.type = raft::MessageType::kVoteResponse;
    grant.from = NodeId(2);
    grant.to = m.from;
    grant.term = m.term;
    transport->send(grant);  // what the driver does inside receive()
  });
  auto response = parse<protocol::VoteResponse>(
      call(frame(ApiKey::kVote, 2, vote_request("cluster-A")), ApiKey::kVote, 2), 2);
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].from, NodeId(1));
  ASSERT_EQ(response.topics.size(), 1u);
  EXPECT_TRUE(response.topics[0].partitions.at(0).vote_granted);
  EXPECT_EQ(response.topics[0].partitions[0].leader_epoch, 3);
}

TEST_F(ControllerApisTest, AnotherClustersVoteIsInconsistentClusterIdAndNeverReachesTheCore) {
  apis.set_transport(transport.get());
  int received = 0;
  transport->set_receiver([&](const raft::Message&) { ++received; });
  auto response = parse<protocol::VoteResponse>(
      call(frame(ApiKey::kVote, 2, vote_request("cluster-B")), ApiKey::kVote, 2), 2);
  EXPECT_EQ(response.error_code, int16_t(ErrorCode::kInconsistentClusterId));
  EXPECT_EQ(received, 0);
}

TEST_F(ControllerApisTest, APushTheCoreIgnoresIsAnsweredWithNothing) {
  apis.set_transport(transport.get());
  transport->set_receiver([](const raft::Message&) {});
  raft::Message hb;
  hb.type = raft::MessageType::kHeartbeat;
  hb.from = NodeId(3);
  hb.to = NodeId(2);
  hb.term = raft::Term(5);
  auto response = parse<protocol::SamsaRaftPushResponse>(
      call(frame(ApiKey::kSamsaRaftPush, 0, encode_push_request(hb, "cluster-A")), ApiKey::kSamsaRaftPush, 0), 0);
  EXPECT_EQ(response.error_code, 0);
  EXPECT_FALSE(response.answered);
}

TEST_F(ControllerApisTest, AnObserversFetchIsAnsweredAndNeverListed) {
  apis.set_transport(transport.get());
  raft::FetchRequest asked{NodeId(4), NodeId(2), raft::LogIndex(3), raft::Term(1)};
  auto fetch = [&](const raft::FetchRequest& r) {
    return call(frame(ApiKey::kSamsaRaftFetch, 0, encode_fetch_request(r, "cluster-A")), ApiKey::kSamsaRaftFetch, 0);
  };
  // Without an answerer it is not served.
  EXPECT_EQ(fetch(asked).kind, ReplyKind::kClose);
  std::vector<raft::FetchRequest> seen;
  apis.set_fetch_answerer([&](const raft::FetchRequest& r) {
    seen.push_back(r);
    raft::FetchResponse answer;
    answer.outcome = raft::FetchOutcome::kEntries;
    answer.from = NodeId(2);
    answer.to = r.from;
    answer.term = raft::Term(2);
    answer.leader_hint = NodeId(2);
    answer.entries = {raft::Entry{raft::Term(2), raft::LogIndex(4), raft::EntryKind::kNormal, Bytes{9}}};
    answer.commit = raft::LogIndex(4);
    return answer;
  });
  EXPECT_EQ(listed().count(1001), 0u);
  auto response = parse<protocol::SamsaRaftFetchResponse>(fetch(asked), 0);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].fetch_index, raft::LogIndex(3));
  auto back = decode_fetch_response(response, asked);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back.value().entries.size(), 1u);
  EXPECT_EQ(back.value().entries[0].index, raft::LogIndex(4));
  EXPECT_EQ(back.value().commit, raft::LogIndex(4));
  // A voter is pushed to, it never pulls: refused before the answerer.
  raft::FetchRequest from_voter{NodeId(3), NodeId(2), raft::LogIndex(3), raft::Term(1)};
  auto refused = parse<protocol::SamsaRaftFetchResponse>(fetch(from_voter), 0);
  EXPECT_EQ(refused.error_code, int16_t(ErrorCode::kInconsistentVoterSet));
  EXPECT_EQ(seen.size(), 1u);
}

TEST_F(ControllerApisTest, AlterPartitionGoesToItsHandlerAndItsAnswerIsTheResponse) {
  protocol::AlterPartitionRequest request;
  request.broker_id = 3;
  request.broker_epoch = 41;
  // Without a handler it is not answered here.
  EXPECT_EQ(call(frame(ApiKey::kAlterPartition, 3, request), ApiKey::kAlterPartition, 3).kind, ReplyKind::kClose);
  std::vector<int32_t> seen;
  apis.set_alter_partition([&](const protocol::AlterPartitionRequest& r, int16_t version,
                               std::function<void(protocol::AlterPartitionResponse)> done) {
    EXPECT_EQ(version, 3);
    seen.push_back(r.broker_id);
    protocol::AlterPartitionResponse response;
    response.error_code = int16_t(ErrorCode::kNotController);
    done(response);
  });
  EXPECT_EQ(listed()[56], std::make_pair(int16_t(0), int16_t(3)));
  auto response = parse<protocol::AlterPartitionResponse>(
      call(frame(ApiKey::kAlterPartition, 3, request), ApiKey::kAlterPartition, 3), 3);
  EXPECT_EQ(response.error_code, int16_t(ErrorCode::kNotController));
  EXPECT_EQ(seen, std::vector<int32_t>{3});
}

// The metadata changes brokers forward: handed over whole (header and body)
// to the sink, which answers; listed as the sink says; only what `handles`
// accepts, everything else as before.
TEST_F(ControllerApisTest, ForwardedRequestsGoToTheirSinkWithTheirHeader) {
  protocol::CreateTopicsRequest create;
  EXPECT_EQ(call(frame(ApiKey::kCreateTopics, 5, create), ApiKey::kCreateTopics, 5).kind, ReplyKind::kClose);
  struct Sink final : FrameSink {
    std::vector<std::pair<int16_t, size_t>> seen;  // api key, frame size
    void on_frame(InboundFrame f, ReplyFn reply) override {
      ByteReader r(*f.frame);
      protocol::RequestHeader header;
      EXPECT_TRUE(header.decode(r));
      seen.emplace_back(header.api_key, f.frame->size());
      reply(Reply{ReplyKind::kClose, {}});  // what it answers is its own
    }
  } sink;
  ForwardedRequests forwarded;
  forwarded.sink = &sink;
  forwarded.handles = [](int16_t key, int16_t version) {
    return key == int16_t(ApiKey::kCreateTopics) && version <= 5;
  };
  forwarded.list = [](protocol::ApiVersionsResponse& response) {
    protocol::ApiVersionsResponse::ApiVersion v;
    v.api_key = int16_t(ApiKey::kCreateTopics);
    v.min_version = 2;
    v.max_version = 5;
    response.api_keys.push_back(v);
  };
  apis.set_forwarded_requests(std::move(forwarded));
  EXPECT_EQ(listed()[19], std::make_pair(int16_t(2), int16_t(5)));
  auto bytes = frame(ApiKey::kCreateTopics, 5, create);
  size_t size = bytes->size();
  call(bytes, ApiKey::kCreateTopics, 5);
  EXPECT_EQ(sink.seen, (std::vector<std::pair<int16_t, size_t>>{{19, size}}));
  // Not handled: a version it refuses, and a broker API.
  EXPECT_EQ(call(frame(ApiKey::kCreateTopics, 6, create), ApiKey::kCreateTopics, 6).kind, ReplyKind::kClose);
  protocol::ApiVersionsRequest any;  // a Metadata header with a junk body: refused by key first
  EXPECT_EQ(call(frame(ApiKey::kMetadata, 0, any), ApiKey::kMetadata, 0).kind, ReplyKind::kClose);
  EXPECT_EQ(sink.seen.size(), 1u);
}

}  // namespace
}  // namespace samsa
