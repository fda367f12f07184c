#include "broker/observer_quorum.h"

#include <algorithm>

#include "broker/metadata_quorum.h"

namespace samsa {
namespace {

RaftFetchClientOptions client_options(const BrokerConfig& config, const std::string& cluster_id) {
  RaftFetchClientOptions c;
  c.cluster_id = cluster_id;
  c.self = config.node_id;
  for (const QuorumVoter& v : config.controller_quorum_voters) {
    c.voters.push_back(RaftPeer{v.id, v.host, uint16_t(v.port)});
  }
  c.connect_timeout_ms = config.values().get_long("socket.connection.setup.timeout.ms");
  return c;
}

ObserverMetadataLogOptions log_options(const BrokerConfig& config) {
  ObserverMetadataLogOptions o;
  o.driver.tick_ms = MetadataQuorum::kTickMs;
  o.driver.observer.id = config.node_id;
  for (const QuorumVoter& v : config.controller_quorum_voters) o.driver.observer.voters.push_back(v.id);
  // Kafka's observer looks for another leader after a fetch timeout too.
  int64_t fetch_ms = config.values().get_int("controller.quorum.fetch.timeout.ms");
  o.driver.observer.request_timeout_ticks = int(std::max<int64_t>(2, fetch_ms / MetadataQuorum::kTickMs));
  return o;
}

}  // namespace

Result<std::unique_ptr<ObserverQuorum>> ObserverQuorum::open(Runtime& runtime, const BrokerConfig& config,
                                                             const std::string& cluster_id) {
  std::unique_ptr<ObserverQuorum> q(new ObserverQuorum());
  q->client_ = std::make_unique<RaftFetchClient>(runtime, client_options(config, cluster_id));
  std::filesystem::path dir = std::filesystem::path(config.metadata_log_dir) / "__cluster_metadata-0";
  ASSIGN_OR_RETURN(q->log_, ObserverMetadataLog::open(runtime, dir, *q->client_, log_options(config)));
  q->observer_ = q->log_.get();
  ObserverMetadataLog* observer = q->observer_;
  q->client_->set_receiver([observer](const raft::FetchResponse& r) { observer->receive(r); });
  return q;
}

ObserverQuorum::~ObserverQuorum() { detach(); }

void ObserverQuorum::detach() {
  if (client_) client_->set_receiver({});
}

NodeId ObserverQuorum::leader() const { return observer_->driver().observer().leader(); }

}  // namespace samsa
