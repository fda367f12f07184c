#pragma once
// ControllerApis: what the controller listener (controller.listener.names)
// answers, as Kafka's ControllerApis does on its own listener, apart from
// the broker's APIs: ApiVersions, DescribeQuorum (55, when a quorum view is
// set), Vote (52) and the Samsa-private SamsaRaftPush (1000, when a raft
// transport is set), BrokerRegistration (62) and BrokerHeartbeat (63, when
// the broker lifecycle APIs are set: the controller's ClusterControlService),
// AlterPartition (56, when its handler is set: planned on this node's
// Controller, answered when committed, NOT_CONTROLLER from a node that is
// not the active controller), SamsaRaftFetch (1001, private: an observer
// pulling the metadata log; when a fetch answerer is set), and the metadata
// changes brokers forward to the active controller (CreateTopics,
// DeleteTopics, CreatePartitions, configs, ...: when a forwarded-request
// sink is set, which serves them with the node's own handlers, as Kafka's
// controller serves them on its listener). ApiVersions
// lists what is answered, never SamsaRaftPush or SamsaRaftFetch. Anything else is refused the way the broker refuses an
// unknown API: the connection is closed.
//
// A request larger than kMaxRaftMessageBytes is refused (closed) before its
// body is decoded. Loop-thread only; the transport and the view outlive it
// (or are unset first).

#include <functional>
#include <span>

#include "controller/quorum_description.h"
#include "controller/raft_network_transport.h"
#include "io/frame_sink.h"
#include "protocol/generated/alter_partition.h"
#include "protocol/generated/api_versions.h"
#include "protocol/generated/broker_heartbeat.h"
#include "protocol/generated/broker_registration.h"
#include "protocol/request_header.h"
#include "raft/observer.h"

namespace samsa {

// What answers BrokerRegistration and BrokerHeartbeat; `done` may run later
// (when the records commit).
class BrokerLifecycleApis {
 public:
  virtual ~BrokerLifecycleApis() = default;
  virtual void broker_registration(const protocol::BrokerRegistrationRequest& request,
                                   std::function<void(protocol::BrokerRegistrationResponse)> done) = 0;
  virtual void broker_heartbeat(const protocol::BrokerHeartbeatRequest& request,
                                std::function<void(protocol::BrokerHeartbeatResponse)> done) = 0;
};

// What answers AlterPartition; `done` may run later (when the records
// commit).
using AlterPartitionHandler = std::function<void(const protocol::AlterPartitionRequest& request, int16_t version,
                                                 std::function<void(protocol::AlterPartitionResponse)> done)>;

// What a voter answers an observer's fetch (raft::answer_fetch on its node).
using RaftFetchAnswerer = std::function<raft::FetchResponse(const raft::FetchRequest& request)>;

// Where the requests brokers forward go (the node's broker-side handlers);
// `handles` says which (key, version), `list` adds their ranges to
// ApiVersions.
struct ForwardedRequests {
  FrameSink* sink = nullptr;
  std::function<bool(int16_t key, int16_t version)> handles;
  std::function<void(protocol::ApiVersionsResponse&)> list;
};

class ControllerApis final : public FrameSink {
 public:
  void set_forwarded_requests(ForwardedRequests forwarded) { forwarded_ = std::move(forwarded); }
  // Needs the transport too (its identity checks the fetcher).
  void set_fetch_answerer(RaftFetchAnswerer answerer) { fetch_answerer_ = std::move(answerer); }
  void set_alter_partition(AlterPartitionHandler handler) { alter_partition_ = std::move(handler); }
  void set_transport(RaftNetworkTransport* transport) { transport_ = transport; }
  void set_broker_lifecycle(BrokerLifecycleApis* lifecycle) { lifecycle_ = lifecycle; }
  void set_quorum(const QuorumView* quorum) { quorum_ = quorum; }

  void on_frame(InboundFrame frame, ReplyFn reply) override;

  // The (key, min, max) this listener answers now: what ApiVersions says.
  void fill_api_versions(protocol::ApiVersionsResponse& response) const;

 private:
  bool answers(int16_t api_key, int16_t version) const;
  void api_versions(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                    ReplyFn& reply) const;
  void describe_quorum(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                       ReplyFn& reply) const;
  void vote(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame, ReplyFn& reply);
  void end_quorum_epoch(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                        ReplyFn& reply);
  void raft_push(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame, ReplyFn& reply);
  void raft_fetch(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                  ReplyFn& reply);
  void broker_registration(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                           ReplyFn& reply);
  void broker_heartbeat(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                        ReplyFn& reply);

  void alter_partition(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                       ReplyFn& reply);

  RaftNetworkTransport* transport_ = nullptr;
  AlterPartitionHandler alter_partition_;
  RaftFetchAnswerer fetch_answerer_;
  const QuorumView* quorum_ = nullptr;
  BrokerLifecycleApis* lifecycle_ = nullptr;
  ForwardedRequests forwarded_;
};

}  // namespace samsa
