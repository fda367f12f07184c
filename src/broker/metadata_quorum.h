#pragma once
// MetadataQuorum: the metadata log of a node in a controller quorum of
// several voters (controller.quorum.voters naming other nodes): a
// RaftMetadataLog in `<metadata.log.dir>/__cluster_metadata-0` whose
// messages travel over a RaftNetworkTransport to the other voters'
// controller listeners, and arrive through this node's (ControllerApis).
// The same classes run on the real runtime and in the simulator.
//
// Timing from Kafka's keys: the Raft tick is kTickMs; a follower that hears
// no leader campaigns after controller.quorum.election.timeout.ms (to twice
// that, randomized), the leader heartbeats five times per election timeout;
// the transport's dial and request timeouts and backoffs are
// socket.connection.setup.timeout.ms, controller.quorum.request.timeout.ms,
// reconnect.backoff.ms and reconnect.backoff.max.ms.
//
// Also the QuorumView DescribeQuorum answers from, and who leads.
//
// Loop-thread only. Owns the transport, which must outlive the log: the
// owner destroys the log (metadata_log()) first.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/broker_config.h"
#include "controller/controller_apis.h"
#include "controller/quorum_description.h"
#include "controller/raft_metadata_log.h"
#include "controller/raft_network_transport.h"
#include "io/runtime.h"

namespace samsa {

// Whether the configuration names a quorum of other nodes than this one
// (the single node, or a quorum of itself only, keeps LocalMetadataLog).
bool is_multi_node_quorum(const BrokerConfig& config);

class MetadataQuorum final : public QuorumView {
 public:
  static constexpr int64_t kTickMs = 50;

  // Opens the log and starts the Raft node; `apis` (the controller
  // listener) delivers the other voters' messages from now on.
  static Result<std::unique_ptr<MetadataQuorum>> open(Runtime& runtime, const BrokerConfig& config,
                                                      const std::string& cluster_id, ControllerApis& apis);
  ~MetadataQuorum() override;

  // The log, for the broker to own (it is destroyed before this object).
  std::unique_ptr<RaftMetadataLog> take_log() { return std::move(log_); }

  // The leader this node knows of (kNoNode while there is none): the
  // active controller once it has applied its term's first entry.
  NodeId leader() const;
  // The metadata offset the next proposed batch lands at (its Raft index).
  Offset next_offset() const;

  // Stops delivering messages (before the log goes).
  void detach();

  QuorumDescription describe_quorum() const override;

 private:
  MetadataQuorum(Runtime& runtime, const BrokerConfig& config) : runtime_(runtime), config_(config) {}

  // An observer's fetch, answered from the raft node; the leader keeps
  // what it says of the observer for DescribeQuorum (as Kafka's leader
  // learns its observers from their fetches).
  raft::FetchResponse answer_fetch(const raft::FetchRequest& request);

  // What each observer's last fetch in `term` said (this node leading).
  struct Fetcher {
    int64_t term = 0;
    ReplicaDescription seen;
  };

  Runtime& runtime_;
  const BrokerConfig& config_;
  ControllerApis* apis_ = nullptr;
  std::unique_ptr<RaftNetworkTransport> transport_;
  std::unique_ptr<RaftMetadataLog> log_;  // until take_log()
  RaftMetadataLog* raft_ = nullptr;       // the log, wherever it is owned
  std::map<NodeId, Fetcher> fetchers_;
};

}  // namespace samsa
