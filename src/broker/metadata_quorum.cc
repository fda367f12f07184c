#include "broker/metadata_quorum.h"

#include <algorithm>

#include "broker/local_quorum.h"

namespace samsa {

bool is_multi_node_quorum(const BrokerConfig& config) {
  return std::any_of(config.controller_quorum_voters.begin(), config.controller_quorum_voters.end(),
                     [&](const QuorumVoter& v) { return v.id != config.node_id; });
}

namespace {

RaftNetworkTransportOptions transport_options(const BrokerConfig& config, const std::string& cluster_id) {
  const ConfigValues& v = config.values();
  RaftNetworkTransportOptions t;
  t.identity.cluster_id = cluster_id;
  t.identity.self = config.node_id;
  for (const QuorumVoter& voter : config.controller_quorum_voters) {
    t.identity.voters.push_back(voter.id);
    if (voter.id != config.node_id) t.peers.push_back(RaftPeer{voter.id, voter.host, uint16_t(voter.port)});
  }
  t.connect_timeout_ms = v.get_long("socket.connection.setup.timeout.ms");
  t.reconnect_backoff_ms = v.get_long("reconnect.backoff.ms");
  t.reconnect_backoff_max_ms = v.get_long("reconnect.backoff.max.ms");
  t.request_timeout_ms = v.get_int("controller.quorum.request.timeout.ms");
  return t;
}

RaftMetadataLogOptions log_options(const BrokerConfig& config, const RaftWireIdentity& identity) {
  RaftMetadataLogOptions o;
  o.driver.tick_ms = MetadataQuorum::kTickMs;
  o.driver.raft.id = config.node_id;
  o.driver.raft.voters = identity.voters;
  int64_t election_ms = config.values().get_int("controller.quorum.election.timeout.ms");
  o.driver.raft.election_ticks = int(std::max<int64_t>(2, election_ms / MetadataQuorum::kTickMs));
  o.driver.raft.heartbeat_ticks = std::max(1, o.driver.raft.election_ticks / 5);
  return o;
}

}  // namespace

Result<std::unique_ptr<MetadataQuorum>> MetadataQuorum::open(Runtime& runtime, const BrokerConfig& config,
                                                             const std::string& cluster_id, ControllerApis& apis) {
  std::unique_ptr<MetadataQuorum> q(new MetadataQuorum(runtime, config));
  RaftNetworkTransportOptions t = transport_options(config, cluster_id);
  RaftMetadataLogOptions options = log_options(config, t.identity);
  q->transport_ = std::make_unique<RaftNetworkTransport>(runtime, std::move(t));
  std::filesystem::path dir = std::filesystem::path(config.metadata_log_dir) / "__cluster_metadata-0";
  ASSIGN_OR_RETURN(q->log_, RaftMetadataLog::open(runtime, dir, *q->transport_, options));
  q->raft_ = q->log_.get();
  RaftMetadataLog* raft = q->raft_;
  q->transport_->set_receiver([raft](const raft::Message& m) { raft->receive(m); });
  q->apis_ = &apis;
  apis.set_transport(q->transport_.get());
  apis.set_quorum(q.get());
  // Observers (broker-only nodes) pull the log from the leader: answered
  // from this node's raft state, read-only (raft/observer.h).
  MetadataQuorum* self = q.get();
  apis.set_fetch_answerer([self](const raft::FetchRequest& request) { return self->answer_fetch(request); });
  return q;
}

MetadataQuorum::~MetadataQuorum() { detach(); }

void MetadataQuorum::detach() {
  if (apis_) {
    apis_->set_transport(nullptr);
    apis_->set_quorum(nullptr);
    apis_->set_fetch_answerer({});
    apis_ = nullptr;
  }
  if (transport_) transport_->set_receiver({});
}

NodeId MetadataQuorum::leader() const { return raft_->driver().node().leader(); }

Offset MetadataQuorum::next_offset() const {
  return Offset(raft_->driver().node().log().last_index().value() + 1);
}

raft::FetchResponse MetadataQuorum::answer_fetch(const raft::FetchRequest& request) {
  const raft::RaftNode& node = raft_->driver().node();
  raft::FetchResponse answer = raft::answer_fetch(node, request, kMaxRaftEntriesPerMessage);
  if (answer.outcome == raft::FetchOutcome::kNotLeader) return answer;
  int64_t now = runtime_.clock().wall_ms();
  Fetcher& f = fetchers_[request.from];
  if (f.term != node.term().value()) f = Fetcher{node.term().value(), ReplicaDescription{request.from}};
  f.seen.last_fetch_ms = now;
  // Its end offset is known only where its log matches ours.
  if (answer.outcome == raft::FetchOutcome::kEntries) {
    f.seen.log_end_offset = request.fetch_index.value();
    if (request.fetch_index >= node.log().commit()) f.seen.last_caught_up_ms = now;
  }
  return answer;
}

QuorumDescription MetadataQuorum::describe_quorum() const {
  QuorumDescription q = describe_raft_quorum(raft_->driver(), runtime_.clock().wall_ms());
  q.nodes = voter_endpoints(config_);
  if (q.is_leader) {
    for (const auto& [id, f] : fetchers_) {
      if (f.term == q.epoch) q.observers.push_back(f.seen);
    }
  }
  return q;
}

}  // namespace samsa
