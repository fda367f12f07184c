#pragma once
// Broker: the Service that run_server() runs — it wires storage, the
// metadata (controller) and the partitions together and answers requests.
// Every request arrives on the event loop thread and is dispatched through
// the API registry (api_registry.h) to one handler in handlers/.
//
// Loop-thread only. Owned by run_server; lives until shutdown() returns.

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/rng.h"
#include "broker/topic_configs.h"
#include "broker/fetch_waiters.h"
#include "broker/replica_manager.h"
#include "controller/controller_apis.h"
#include "controller/metadata_log.h"
#include "controller/quorum_controller.h"
#include "controller/quorum_description.h"
#include "controller/topic_planner.h"
#include "io/file_system.h"
#include "io/runtime.h"
#include "io/frame_sink.h"
#include "protocol/generated/api_versions.h"
#include "protocol/generated/unregister_broker.h"
#include "protocol/request_header.h"
#include "config/broker_config.h"
#include "config/dynamic_broker_config.h"
#include "broker/service.h"
#include "storage/log_manager.h"

namespace samsa {

class GroupManager;  // group coordination (issue 4)
class ClusterMembership;
struct ApiRoute;
class MetadataQuorum;
class ObserverQuorum;
class ProducerIds;

class Broker final : public Service, public FrameSink, private MetadataListener {
 public:
  Broker();
  ~Broker() override;

  // Service
  FrameSink& sink() override { return *this; }
  FrameSink& controller_sink() override { return controller_apis_; }
  Status start(Runtime& runtime, const BrokerConfig& config) override;
  // A cluster's broker: controlled shutdown first (docs/cluster.md); the
  // single node: ready at once.
  void begin_shutdown(std::function<void()> ready) override;
  void shutdown() override;

  // FrameSink
  void on_frame(InboundFrame frame, ReplyFn reply) override;

  // For handlers.
  const BrokerConfig& config() const { return *config_; }
  // Time, timers and posted work: the runtime's (real or simulated).
  Runtime& runtime() { return *runtime_; }
  Clock& clock() { return runtime_->clock(); }
  Rng& rng() { return rng_; }
  FileSystem& files() { return runtime_->files(); }
  NodeId node_id() const { return config_->node_id; }
  // The committed metadata, as this broker has applied it.
  const MetadataImage& image() const { return metadata_log_->image(); }
  // This node's controller (single node: always active; in a quorum, only
  // while this node leads it).
  Controller& controller() { return *controller_; }
  // Metadata's and DescribeCluster's controller_id: itself on the single
  // node, the metadata quorum's leader on a node with the controller role
  // (kNoNode while there is none); on a broker-only node, whose clients
  // cannot reach the controllers, a random alive broker (Kafka's
  // KRaftMetadataCache), which forwards what the controller must do.
  NodeId controller_id();
  // The quorum leader this node knows of: the active controller (itself on
  // the single node; kNoNode while there is none).
  NodeId quorum_leader() const;
  ReplicaManager& replicas() { return *replicas_; }
  // Self-fencing: whether this broker may act as a partition leader now
  // (always on the single node; in a cluster, unfenced and heard from the
  // controller within broker.session.timeout.ms).
  bool may_lead() const;
  // UnregisterBroker (64), answered by this node's controller (a cluster's
  // node only: the route is absent on the single node).
  void unregister_broker(NodeId broker, std::function<void(protocol::UnregisterBrokerResponse)> done);
  FetchWaiters& fetch_waiters() { return fetch_waiters_; }
  // InitProducerId's ids (broker/producer_ids.h).
  ProducerIds& producer_ids() { return *producer_ids_; }
  // A request body to the active controller's broker listener (a cluster's
  // node only: ControllerForwarder::forward).
  void forward_to_active_controller(int16_t api_key, int16_t version, ByteView body,
                                    std::function<void(Result<Bytes>)> done);
  GroupManager& groups() { return *groups_; }  // group coordination (issue 4)
  // The metadata quorum, on a node with the controller role (nullptr otherwise).
  const QuorumView* quorum() const;
  // Whether the controller-role APIs of the broker listener are routed
  // (DescribeQuorum): on a node with the controller role, and on a
  // broker-only node, which forwards them to the active controller.
  bool routes_controller_apis() const;
  // A node of a multi-node quorum (registers and heartbeats; cluster-only APIs).
  bool in_cluster() const { return membership_ != nullptr; }

  const TopicConfigs& topic_configs() const { return *topic_configs_; }
  // Dynamic broker configs (KIP-226): the layers, and the configuration in
  // effect with them (its values and log defaults; the listeners and what
  // is read once at start come from config()). broker_dynamic_config.cc.
  const DynamicBrokerConfig& dynamic_config() const { return *dynamic_config_; }
  const BrokerConfig& effective_config() const { return *effective_config_; }
  const std::string& cluster_id() const { return cluster_id_; }

  // max.partitions.per.request, max.partitions.per.topic, max.partitions.
  PartitionLimits partition_limits() const;

  // Creates a topic through the controller: configs validated here, then
  // planned against the controller's view, proposed, and `done` called when
  // committed (or refused, see quorum_controller.h). With validate_only it
  // is only planned, and `done` is called at once. timeout_ms <= 0: none.
  void create_topic(const NewTopic& topic, bool validate_only, int64_t timeout_ms, ControllerDone done);
  // Metadata's auto-creation with the broker defaults (num.partitions,
  // default.replication.factor). The outcome when it is known at once (a
  // refusal; the single node commits inline); LEADER_NOT_AVAILABLE while the
  // creation is in flight, what Kafka answers then too.
  protocol::ErrorCode auto_create_topic(const std::string& name);
  // Any other metadata change: planned by `plan` against the controller's
  // view, committed, then `done` (quorum_controller.h).
  void submit_change(std::string what, const PlanFn& plan, int64_t timeout_ms, ControllerDone done);

 private:
  // A request another node forwarded to this one's controller listener
  // (ControllerApis' forwarded requests): served by the broker's handlers,
  // never forwarded again.
  void serve_forwarded(InboundFrame frame, ReplyFn reply);
  // A voter's controller listener: AlterPartition and the forwarded requests.
  void serve_on_controller_listener();
  void answer_unsupported(const protocol::RequestHeader& header, InboundFrame& frame, ReplyFn& reply);
  // A metadata change asked of a node that is not the active controller:
  // the request goes to the one that is and its answer back to the client
  // (ControllerForwarder::forward); handled here (NOT_CONTROLLER) when that fails.
  void forward_to_controller(protocol::RequestHeader header, InboundFrame frame, size_t body_at,
                             const ApiRoute& route, ReplyFn reply);
  // Re-reads the BROKER ConfigRecords of the image into dynamic_config_ and
  // rebuilds effective_config_ and topic_configs_ from them.
  void reload_dynamic_config();
  void schedule_housekeeping();
  void apply_image_to_replicas();
  Status open_metadata_log();
  Status register_self();
  // The AlterPartition channel: the local Controller on the single node,
  // the network to the active controller on a quorum's broker.
  AlterPartitionSender alter_partition_sender();
  // MetadataListener: act on each committed delta.
  void on_committed(Offset offset, const std::vector<MetadataRecord>& records, uint64_t tag) override;
  void on_snapshot(Offset offset) override;
  void stop_blocking_executor();

  const BrokerConfig* config_ = nullptr;
  Runtime* runtime_ = nullptr;
  Rng rng_{0};  // reseeded from runtime.seed() by start()
  std::string cluster_id_;
  std::unique_ptr<TopicConfigs> topic_configs_;
  std::unique_ptr<DynamicBrokerConfig> dynamic_config_;
  std::unique_ptr<BrokerConfig> effective_config_;
  std::unique_ptr<LogManager> logs_;
  // A multi-node quorum's transport and view (nullptr on the single node):
  // before metadata_log_, which it outlives.
  std::unique_ptr<MetadataQuorum> metadata_quorum_;
  // A broker-only node's observer of the quorum (nullptr otherwise): as
  // metadata_quorum_, before metadata_log_.
  std::unique_ptr<ObserverQuorum> observer_quorum_;
  std::unique_ptr<MetadataLog> metadata_log_;
  std::unique_ptr<Controller> controller_;  // after metadata_log_: destroyed before it
  std::unique_ptr<ReplicaManager> replicas_;
  // Registration, heartbeats, fencing, following leaders: a multi-node
  // quorum only. After controller_ and replicas_: destroyed before them.
  std::unique_ptr<ClusterMembership> membership_;
  FetchWaiters fetch_waiters_;
  std::unique_ptr<GroupManager> groups_;  // group coordination (issue 4)
  std::unique_ptr<ProducerIds> producer_ids_;
  TimerId housekeeping_timer_ = 0;
  // Set while a request another node forwarded is handled: it is not
  // forwarded again (create_topic).
  bool handling_forwarded_ = false;
  // The controller listener's APIs and the quorum they describe.
  std::unique_ptr<QuorumView> quorum_;
  ControllerApis controller_apis_;
  // What ControllerApis hands the forwarded requests to (serve_forwarded).
  class ForwardedSink final : public FrameSink {
   public:
    explicit ForwardedSink(Broker& broker) : broker_(broker) {}
    void on_frame(InboundFrame frame, ReplyFn reply) override {
      broker_.serve_forwarded(std::move(frame), std::move(reply));
    }

   private:
    Broker& broker_;
  };
  ForwardedSink forwarded_sink_{*this};
};

// The ApiVersions entries: exactly the API registry (its controller-role
// APIs only on a node with that role, its cluster-only ones only on a node
// of a multi-node quorum).
void fill_api_versions(protocol::ApiVersionsResponse& response, bool controller_role, bool cluster = false);

// The replica fetchers' settings (replica.fetch.*, num.replica.fetchers).
ReplicaFetcherConfig replica_fetcher_config(const ConfigValues& values);
// Whether a record changes a broker's registration (epoch, fencing, shutdown).
bool changes_brokers(const MetadataRecord& record);
// Whether records change a BROKER resource's configs (broker_dynamic_config.cc).
bool changes_broker_configs(const std::vector<MetadataRecord>& records);
// The log cleaner's settings from a broker configuration (log.cleaner.*;
// dedupe.buffer.size and backoff.ms are dynamic). broker_dynamic_config.cc.
CleanerConfig cleaner_config(const ConfigValues& values);

}  // namespace samsa
