#include "broker/broker.h"

#include <filesystem>
#include <set>

#include "base/log.h"
#include "broker/alter_partition_local.h"
#include "broker/alter_partition_remote.h"
#include "broker/api_registry.h"
#include "broker/broker_lifecycle.h"
#include "broker/group_manager.h"
#include "broker/producer_ids.h"
#include "broker/cluster_membership.h"
#include "broker/controller_forwarder.h"
#include "broker/local_quorum.h"
#include "broker/metadata_quorum.h"
#include "broker/observer_quorum.h"
#include "broker/handlers/handlers.h"
#include "broker/meta_properties.h"
#include "broker/request.h"
#include "controller/local_metadata_log.h"
#include "protocol/generated/api_versions.h"

namespace samsa {
namespace {
constexpr int64_t kHousekeepingIntervalMs = 1000;

}  // namespace

Broker::Broker() = default;
// Destroyed without shutdown() is a crash: the logs go as they are (see
// Log::~Log). Draining lets a live runtime's worker finish with the files
// first; a dead runtime (a simulated crash) has dropped its work, so a
// rolled segment's flush may never report. That is what a crash does, so
// the logs are not put back on the inline executor, which requires every
// flush to have reported (found by the broker simulation, seed 43).
Broker::~Broker() {
  if (runtime_ != nullptr) runtime_->blocking().drain();
}

// Runs the work already submitted and delivers every outcome here (the
// loop has stopped: a failed fsync must still take its partition offline
// before close() could write the clean-shutdown marker), then puts rolls
// and checkpoint writes back on this thread.
void Broker::stop_blocking_executor() {
  if (runtime_ == nullptr) return;
  runtime_->blocking().drain();
  if (logs_) logs_->set_blocking_executor(inline_blocking_executor());
}

Status Broker::start(Runtime& runtime, const BrokerConfig& config) {
  runtime_ = &runtime;
  config_ = &config;
  // Every random choice of this broker (cluster id, placement, member ids)
  // replays from the node's seed.
  rng_ = Rng(runtime.seed());
  topic_configs_ = std::make_unique<TopicConfigs>(config);
  fetch_waiters_.attach(runtime);

  ASSIGN_OR_RETURN(cluster_id_, ensure_meta_properties(files(), config, rng_));
  RETURN_IF_ERROR(open_metadata_log());

  reload_dynamic_config();  // the stored dynamic broker configs, before any log opens
  LogManagerConfig log_manager_config;
  for (const auto& dir : config.log_dirs) log_manager_config.log_dirs.emplace_back(dir);
  log_manager_config.retention_check_interval_ms = config.log_retention_check_interval_ms;
  log_manager_config.producer_id_expiration_ms = config.values().get_int("producer.id.expiration.ms");
  log_manager_config.producer_id_expiration_check_interval_ms =
      config.values().get_int("producer.id.expiration.check.interval.ms");
  log_manager_config.flush_check_interval_ms = config.values().get_long("log.flush.scheduler.interval.ms");
  log_manager_config.recovery_point_checkpoint_interval_ms =
      config.values().get_int("log.flush.offset.checkpoint.interval.ms");
  log_manager_config.high_watermark_checkpoint_interval_ms =
      config.values().get_long("replica.high.watermark.checkpoint.interval.ms");
  log_manager_config.cleaner = cleaner_config(effective_config().values());  // with dynamic values
  log_manager_config.seed = rng_.next_u64();  // -delete names, roll jitter: replayed from the node's seed
  auto lookup = [this](const TopicPartition& tp) {
    const TopicState* topic = image().topic(tp.topic);
    return topic_configs_->log_config_for(topic ? topic->configs : std::map<std::string, std::string>{});
  };
  ASSIGN_OR_RETURN(logs_, LogManager::open(files(), log_manager_config, topic_configs_->log_config_for({}), clock(),
                                           lookup));
  logs_->set_blocking_executor(runtime.blocking());
  replicas_ = std::make_unique<ReplicaManager>(
      *logs_, config.node_id, [this](const TopicState& t) { return topic_configs_->log_config_for(t.configs); });
  // A high watermark that moves wakes the delayed fetches of its partition
  // (consumers read below it; followers learn it), from a posted task: the
  // move happens inside handlers and inside other delayed fetches.
  replicas_->set_high_watermark_listener([this](const TopicPartition& tp) {
    runtime_->post([this, tp] { fetch_waiters_.notify(tp); });
  });
  replicas_->start_fetchers(replica_fetcher_config(config.values()), runtime, [this] {
    const BrokerState* self = image().broker(node_id());
    return self ? BrokerEpoch(self->epoch) : kNoBrokerEpoch;
  });
  // The ISR: isr-expiration and AlterPartition to the controller (this
  // node's own on the single node; over the network to the active
  // controller on a quorum's broker).
  replicas_->start_isr_management(runtime, config.values().get_long("replica.lag.time.max.ms"),
                                  alter_partition_sender(), [this] {
                                    // A restarted broker's replayed image holds
                                    // its previous incarnation's epoch: an ISR
                                    // change sent with it before this process
                                    // registers again was taken (a leader back
                                    // from a power loss shrank the ISR to
                                    // itself with a truncated log, samsa-sim
                                    // --cluster --seed 269432961230807).
                                    if (membership_) return membership_->broker_epoch();
                                    const BrokerState* self = image().broker(node_id());
                                    return self ? BrokerEpoch(self->epoch) : kNoBrokerEpoch;
                                  });
  // replication-offset-checkpoint: the high watermark of each partition held.
  logs_->set_high_watermark_source([this](const TopicPartition& tp) -> std::optional<Offset> {
    const Partition* p = replicas_->get(tp);
    if (!p) return std::nullopt;
    return p->high_watermark();
  });

  RETURN_IF_ERROR(replicas_->apply_image(image()));
  // From here on every committed delta reaches this broker, then the
  // controller's bookkeeping.
  metadata_log_->add_listener(this);
  controller_ = std::make_unique<Controller>(runtime, *metadata_log_);
  if (metadata_quorum_ || observer_quorum_) {
    membership_ = std::make_unique<ClusterMembership>(
        runtime, config, cluster_id_, rng_.next_u64(), [this] { return quorum_leader(); }, metadata_quorum_.get(),
        *metadata_log_, *controller_, *replicas_, controller_apis_, BrokerEpoch(logs_->previous_broker_epoch()));
    if (metadata_quorum_) serve_on_controller_listener();  // a voter: it may be the active controller
  } else {
    RETURN_IF_ERROR(register_self());
  }
  // Group coordination (issue 4): __consumer_offsets loaded before serving.
  groups_ = std::make_unique<GroupManager>(*this);
  producer_ids_ = std::make_unique<ProducerIds>(*this);
  RETURN_IF_ERROR(groups_->start());
  if (membership_) {
    membership_->follow_leaders();
    membership_->start();  // logs loaded: register, then ask to be unfenced
  }
  schedule_housekeeping();
  LOG_INFO("broker", "node {} started in cluster {} with {} topics", config.node_id.value(), cluster_id_,
           image().topics().size());
  return ok_status();
}

// The single node commits alone (LocalMetadataLog, decision 0016); a voter
// of a multi-node quorum through Raft (MetadataQuorum); a broker-only node
// observes the voters' log (ObserverQuorum).
Status Broker::open_metadata_log() {
  if (!config_->is_controller()) {
    ASSIGN_OR_RETURN(observer_quorum_, ObserverQuorum::open(*runtime_, *config_, cluster_id_));
    metadata_log_ = observer_quorum_->take_log();
    return ok_status();
  }
  // A controller-only node runs Raft even as the only voter: its brokers
  // observe the log through SamsaRaftFetch, which LocalMetadataLog lacks.
  if (is_multi_node_quorum(*config_) || !config_->is_broker()) {
    ASSIGN_OR_RETURN(metadata_quorum_, MetadataQuorum::open(*runtime_, *config_, cluster_id_, controller_apis_));
    metadata_log_ = metadata_quorum_->take_log();
    return ok_status();
  }
  ASSIGN_OR_RETURN(auto local_log, LocalMetadataLog::open(files(), config_->metadata_log_dir, clock()));
  LocalMetadataLog* local = local_log.get();
  metadata_log_ = std::move(local_log);
  if (config_->is_controller()) {
    quorum_ = std::make_unique<LocalQuorum>(*config_, [local] { return local->end_offset().value(); }, clock());
    controller_apis_.set_quorum(quorum_.get());
  }
  return ok_status();
}

const QuorumView* Broker::quorum() const {
  if (metadata_quorum_) return metadata_quorum_.get();
  return quorum_.get();
}

bool Broker::routes_controller_apis() const { return quorum() != nullptr || observer_quorum_ != nullptr; }

NodeId Broker::quorum_leader() const {
  if (metadata_quorum_) return metadata_quorum_->leader();
  if (observer_quorum_) return observer_quorum_->leader();
  return node_id();
}

NodeId Broker::controller_id() {
  if (!observer_quorum_) return quorum_leader();
  std::vector<NodeId> alive;
  for (const auto& [id, b] : image().brokers()) {
    if (!b.fenced) alive.push_back(id);
  }
  if (alive.empty()) return kNoNode;
  return alive[rng_.next_u64() % alive.size()];
}

// The replica.* keys of the fetchers (read at start).
ReplicaFetcherConfig replica_fetcher_config(const ConfigValues& values) {
  ReplicaFetcherConfig c;
  c.num_fetchers = values.get_int("num.replica.fetchers");
  c.fetch_max_bytes = values.get_int("replica.fetch.max.bytes");
  c.fetch_wait_max_ms = values.get_int("replica.fetch.wait.max.ms");
  c.fetch_min_bytes = values.get_int("replica.fetch.min.bytes");
  c.fetch_response_max_bytes = values.get_int("replica.fetch.response.max.bytes");
  c.fetch_backoff_ms = values.get_int("replica.fetch.backoff.ms");
  c.socket_timeout_ms = values.get_int("replica.socket.timeout.ms");
  return c;
}

Status Broker::register_self() {
  // The broker's advertised endpoints and rack are what Metadata tells
  // clients and placement uses; a restart with a new port or rack
  // re-registers. The single node is its own controller, caught up by
  // construction: it registers unfenced (a quorum's brokers register
  // through BrokerLifecycle and ClusterControl instead).
  std::vector<BrokerEndpoint> endpoints = advertised_endpoints(*config_);
  const BrokerState* known = image().broker(node_id());
  if (known && known->listeners == endpoints && known->rack == config_->broker_rack && !known->fenced) {
    return ok_status();
  }
  RegisterBrokerRecord record;
  record.broker_id = node_id();
  record.broker_epoch = known ? known->epoch + 1 : BrokerEpoch(0);
  record.endpoints = std::move(endpoints);
  record.rack = config_->broker_rack;
  record.fenced = false;
  // A failure known at once (the single node could not write its log)
  // fails the start, as before; one that comes later is logged (the next
  // start registers again) and meanwhile placement does not see this broker.
  auto failed_now = std::make_shared<std::optional<ControllerError>>();
  auto answered = std::make_shared<bool>(false);
  submit_change(
      "the registration of broker " + std::to_string(node_id().value()),
      [record](const MetadataImage&) { return Plan(std::vector<MetadataRecord>{record}); }, 0,
      [failed_now, answered](std::optional<ControllerError> failed) {
        if (failed && !*answered) *failed_now = failed;
        if (failed && *answered) LOG_ERROR("broker", "registering this broker failed: {}", failed->message);
        *answered = true;
      });
  *answered = true;
  if (*failed_now) return Error(ErrorKind::kIo, "registering this broker: " + (*failed_now)->message);
  return ok_status();
}

// A cluster node first moves its partition leaderships away (controlled
// shutdown, while it may still be the active controller that moves them),
// then hands on the quorum's leadership if it has it, so the others elect at
// once rather than after an election timeout; bounded by that timeout, as a
// hand-over slower than it gains nothing.
void Broker::begin_shutdown(std::function<void()> ready) {
  const ConfigValues& v = config_->values();
  auto resign = [this, ready = std::move(ready)]() mutable {
    metadata_log_->resign(config_->values().get_int("controller.quorum.election.timeout.ms"), std::move(ready));
  };
  if (!membership_ || !v.get_bool("controlled.shutdown.enable")) return resign();
  int64_t bound_ms = v.get_int("controlled.shutdown.max.retries") * v.get_long("controlled.shutdown.retry.backoff.ms");
  membership_->begin_controlled_shutdown(bound_ms, std::move(resign));
}

bool Broker::may_lead() const { return !membership_ || membership_->may_lead(); }

void Broker::unregister_broker(NodeId broker, std::function<void(protocol::UnregisterBrokerResponse)> done) {
  ASSERT_MSG(membership_, "UnregisterBroker is routed only on a cluster's node");
  membership_->unregister_broker(broker, std::move(done));
}

void Broker::shutdown() {
  if (runtime_ == nullptr) return;
  if (housekeeping_timer_) runtime_->cancel_timer(housekeeping_timer_);
  if (groups_) groups_->stop();  // group coordination (issue 4)
  if (replicas_) replicas_->stop_fetchers();
  if (replicas_) replicas_->stop_isr_management();
  fetch_waiters_.expire_all();
  stop_blocking_executor();
  if (logs_) {
    // The clean-shutdown markers name this incarnation (KIP-966).
    if (membership_) logs_->set_broker_epoch(membership_->broker_epoch().value());
    Status closed = logs_->close();
    if (!closed.ok()) LOG_ERROR("broker", "closing logs: {}", closed.error().to_string());
  }
  controller_apis_.set_alter_partition(nullptr);
  controller_apis_.set_forwarded_requests({});
  membership_.reset();
  controller_.reset();  // in-flight changes are dropped, as Kafka drops requests at shutdown
  if (metadata_quorum_) metadata_quorum_->detach();
  if (observer_quorum_) observer_quorum_->detach();
  if (metadata_log_) {
    metadata_log_->remove_listener(this);
    Status closed = metadata_log_->shutdown();
    if (!closed.ok()) LOG_ERROR("broker", "closing metadata log: {}", closed.error().to_string());
  }
  LOG_INFO("broker", "shut down cleanly");
}

void Broker::schedule_housekeeping() {
  housekeeping_timer_ = runtime_->add_timer(kHousekeepingIntervalMs, [this] {
    if (!replicas_->unopened().empty()) {
      apply_image_to_replicas();
      if (groups_) groups_->follow_leadership();
    }
    Status ticked = logs_->tick(clock().wall_ms());
    if (!ticked.ok()) LOG_ERROR("broker", "log housekeeping: {}", ticked.error().to_string());
    schedule_housekeeping();
  });
}

// A committed delta: this broker catches up with it. Its failures
// (partitions whose logs cannot be created now, retried on the housekeeping
// tick) do not undo or fail the commit. Only the topics a delta names are
// visited; removals and broker-wide config changes walk the whole image.
void Broker::on_committed(Offset, const std::vector<MetadataRecord>& records, uint64_t) {
  bool broker_configs = changes_broker_configs(records);
  if (broker_configs) reload_dynamic_config();
  std::set<std::string> touched;
  bool walk_all = broker_configs;
  bool brokers = false;
  for (const auto& record : records) {
    if (const auto* t = std::get_if<TopicRecord>(&record)) {
      touched.insert(t->name);
    } else if (const auto* p = std::get_if<PartitionRecord>(&record)) {
      if (const TopicState* topic = image().topic_by_id(p->topic_id)) touched.insert(topic->name);
    } else if (const auto* c = std::get_if<PartitionChangeRecord>(&record)) {
      if (const TopicState* topic = image().topic_by_id(c->topic_id)) touched.insert(topic->name);
    } else if (const auto* c = std::get_if<ConfigRecord>(&record)) {
      if (c->resource == ConfigRecord::Resource::kTopic) touched.insert(c->resource_name);
    } else if (std::holds_alternative<RemoveTopicRecord>(record)) {
      walk_all = true;
    } else if (changes_brokers(record)) {
      brokers = true;
    }
  }
  if (brokers) replicas_->apply_brokers(image());  // who may join an ISR
  // Partitions whose logs could not be created earlier are retried with
  // any change (and on the housekeeping tick).
  for (const TopicPartition& tp : replicas_->unopened()) touched.insert(tp.topic);
  if (walk_all) {
    apply_image_to_replicas();
  } else if (!touched.empty()) {
    replicas_->apply_topics(image(), touched);
  }
  if (membership_) membership_->follow_leaders();
  if (groups_) groups_->follow_leadership();
}

bool changes_brokers(const MetadataRecord& record) {
  return std::holds_alternative<RegisterBrokerRecord>(record) ||
         std::holds_alternative<BrokerRegistrationChangeRecord>(record) ||
         std::holds_alternative<UnregisterBrokerRecord>(record) ||
         std::holds_alternative<FenceBrokerRecord>(record) || std::holds_alternative<UnfenceBrokerRecord>(record);
}

void Broker::on_snapshot(Offset) {
  reload_dynamic_config();
  apply_image_to_replicas();
  if (membership_) membership_->follow_leaders();
  if (groups_) groups_->follow_leadership();
}

void Broker::apply_image_to_replicas() {
  Status applied = replicas_->apply_image(image());
  if (!applied.ok()) LOG_ERROR("broker", "applying metadata to local partitions: {}", applied.error().to_string());
}

PartitionLimits Broker::partition_limits() const {
  const ConfigValues& v = config_->values();
  return PartitionLimits{v.get_int("max.partitions.per.request"), v.get_int("max.partitions.per.topic"),
                         v.get_int("max.partitions")};
}

void Broker::create_topic(const NewTopic& topic, bool validate_only, int64_t timeout_ms, ControllerDone done) {
  Status valid = topic_configs_->validate(topic.configs);
  if (!valid.ok()) {
    done(ControllerError{protocol::ErrorCode::kInvalidConfig, valid.error().message()});
    return;
  }
  if (membership_ && !controller_->active() && !handling_forwarded_) {
    // Another node is the active controller: it plans and commits (Kafka's brokers forward too).
    return membership_->forwarder().create_topic(topic, validate_only, timeout_ms, std::move(done));
  }
  TopicDefaults defaults{config_->num_partitions, config_->default_replication_factor};
  PartitionLimits limits = partition_limits();
  PlanFn plan = [this, topic, defaults, limits](const MetadataImage& view) {
    return plan_create_topic(view, topic, defaults, limits, rng_);
  };
  if (validate_only) {
    Plan planned = controller_->dry_run(plan);
    if (auto* e = std::get_if<ControllerError>(&planned)) return done(std::move(*e));
    return done(std::nullopt);
  }
  submit_change("the creation of topic " + topic.name, plan, timeout_ms,
                [name = topic.name, done = std::move(done)](std::optional<ControllerError> failed) {
                  if (!failed) LOG_INFO("controller", "created topic {}", name);
                  done(std::move(failed));
                });
}

protocol::ErrorCode Broker::auto_create_topic(const std::string& name) {
  // Shared with the callback, which may run after this returns.
  auto outcome = std::make_shared<std::optional<protocol::ErrorCode>>();
  create_topic(NewTopic{name, -1, -1, {}, {}}, false, 0, [name, outcome](std::optional<ControllerError> failed) {
    if (failed && failed->code != protocol::ErrorCode::kTopicAlreadyExists) {
      LOG_WARN("controller", "auto-creating topic {} failed: {}", name, failed->message);
    }
    // Already there or on its way (an earlier call's creation in flight).
    bool exists = !failed || failed->code == protocol::ErrorCode::kTopicAlreadyExists;
    *outcome = exists ? protocol::ErrorCode::kNone : failed->code;
  });
  return outcome->value_or(protocol::ErrorCode::kLeaderNotAvailable);
}

AlterPartitionSender Broker::alter_partition_sender() {
  if (!metadata_quorum_ && !observer_quorum_) return local_alter_partition_sender(*this);
  RemoteAlterPartitionOptions o;
  o.self = config_->node_id;
  o.controllers = quorum_controllers(*config_);
  o.connect_timeout_ms = config_->values().get_long("socket.connection.setup.timeout.ms");
  o.request_timeout_ms = config_->values().get_int("controller.quorum.request.timeout.ms");
  return remote_alter_partition_sender(*runtime_, std::move(o), [this] { return quorum_leader(); });
}

void Broker::forward_to_active_controller(int16_t api_key, int16_t version, ByteView body,
                                          std::function<void(Result<Bytes>)> done) {
  ASSERT(membership_);
  membership_->forwarder().forward(api_key, version, body, std::move(done));
}

void Broker::submit_change(std::string what, const PlanFn& plan, int64_t timeout_ms, ControllerDone done) {
  controller_->submit(std::move(what), plan, timeout_ms, std::move(done));
}

void Broker::on_frame(InboundFrame frame, ReplyFn reply) {
  ByteReader reader(*frame.frame);
  protocol::RequestHeader header;
  if (!header.decode(reader)) {
    LOG_WARN("broker", "closing connection from {}: malformed request header", frame.peer);
    reply(Reply{ReplyKind::kClose, {}});
    return;
  }
  if (membership_ && !membership_->serves_clients() && header.api_key != int16_t(protocol::ApiKey::kApiVersions)) {
    // Not caught up with the metadata log yet: the client tries another
    // broker, as with a Kafka broker that has not enabled its listeners.
    // ApiVersions is answered, so that a probe sees the process is up.
    reply(Reply{ReplyKind::kClose, {}});
    return;
  }
  const ApiRoute* route = find_route(header.api_key, routes_controller_apis(), in_cluster());
  if (!route || header.api_version < route->min_version || header.api_version > route->max_version) {
    answer_unsupported(header, frame, reply);
    return;
  }
  bool forwarded = membership_ && ControllerForwarder::is_forwarded(header.client_id.value_or(""));
  // A broker-only node forwards DescribeQuorum too, as Kafka's brokers do:
  // only the quorum leader knows every voter's and observer's progress.
  bool forwards = ControllerForwarder::forwards(header.api_key) ||
                  (observer_quorum_ && header.api_key == int16_t(protocol::ApiKey::kDescribeQuorum));
  if (membership_ && !forwarded && forwards && !controller_->active()) {
    return forward_to_controller(std::move(header), std::move(frame), reader.position(), *route, std::move(reply));
  }
  Request request(std::move(header), std::move(frame), reader, std::move(reply));
  handling_forwarded_ = forwarded;
  route->handle(*this, request);
  handling_forwarded_ = false;
}

void Broker::forward_to_controller(protocol::RequestHeader header, InboundFrame frame, size_t body_at,
                                   const ApiRoute& route, ReplyFn reply) {
  ByteView body = ByteView(*frame.frame).subspan(body_at);
  int16_t key = header.api_key;
  int16_t version = header.api_version;
  membership_->forwarder().forward(
      key, version, body,
      [this, header = std::move(header), frame = std::move(frame), body_at, &route,
       reply = std::move(reply)](Result<Bytes> answer) mutable {
        if (answer.ok()) {
          OutBuffer out;
          protocol::begin_response(out, header.correlation_id, header.api_key, header.api_version);
          out.bytes().insert(out.bytes().end(), answer->begin(), answer->end());
          protocol::finish_response(out);
          return reply(Reply{ReplyKind::kSend, std::move(out)});
        }
        LOG_DEBUG("broker", "forwarding {} to the controller failed ({}); answering here",
                  protocol::api_name(header.api_key), answer.error().to_string());
        ByteReader reader(*frame.frame);
        reader.skip(body_at);
        Request request(std::move(header), std::move(frame), reader, std::move(reply));
        route.handle(*this, request);
      });
}

void Broker::serve_on_controller_listener() {
  // Every leader's AlterPartition, answered by the active controller.
  controller_apis_.set_alter_partition(
      [this](const protocol::AlterPartitionRequest& request, int16_t version,
             std::function<void(protocol::AlterPartitionResponse)> done) {
        serve_alter_partition(*this, request, version,
                              [done = std::move(done)](Result<protocol::AlterPartitionResponse> r) {
                                done(r.ok() ? std::move(r).value() : protocol::AlterPartitionResponse{});
                              });
      });
  // Brokers forward these to the active controller's controller listener
  // (ControllerForwarder); CreateTopics is how a topic creation travels.
  ForwardedRequests f;
  f.sink = &forwarded_sink_;
  f.handles = [](int16_t key, int16_t version) {
    if (!ControllerForwarder::sends(key)) return false;
    const ApiRoute* route = find_route(key, true, true);
    return route && version >= route->min_version && version <= route->max_version;
  };
  f.list = [](protocol::ApiVersionsResponse& response) {
    for (const ApiRoute& route : api_routes()) {
      int16_t key = int16_t(route.key);
      if (!ControllerForwarder::sends(key)) continue;
      protocol::ApiVersionsResponse::ApiVersion v;
      v.api_key = key;
      v.min_version = route.min_version;
      v.max_version = route.max_version;
      response.api_keys.push_back(v);
    }
  };
  controller_apis_.set_forwarded_requests(std::move(f));
}

void Broker::serve_forwarded(InboundFrame frame, ReplyFn reply) {
  ByteReader reader(*frame.frame);
  protocol::RequestHeader header;
  if (!header.decode(reader)) return reply(Reply{ReplyKind::kClose, {}});
  const ApiRoute* route = find_route(header.api_key, true, true);
  ASSERT_MSG(route, "ControllerApis hands over only the routed forwarded APIs");
  Request request(std::move(header), std::move(frame), reader, std::move(reply));
  handling_forwarded_ = true;
  route->handle(*this, request);
  handling_forwarded_ = false;
}

void Broker::answer_unsupported(const protocol::RequestHeader& header, InboundFrame& frame, ReplyFn& reply) {
  if (header.api_key == int16_t(protocol::ApiKey::kApiVersions)) {
    // KIP-511: answer a too-new ApiVersions with a v0 body carrying
    // UNSUPPORTED_VERSION and our ranges, so the client can retry lower.
    protocol::ApiVersionsResponse response;
    response.error_code = int16_t(protocol::ErrorCode::kUnsupportedVersion);
    fill_api_versions(response, routes_controller_apis(), in_cluster());
    OutBuffer out;
    protocol::begin_response_with_header(out, header.correlation_id, 0);
    protocol::Encoder w(out);
    response.encode(w, 0);
    protocol::finish_response(out);
    reply(Reply{ReplyKind::kSend, std::move(out)});
    return;
  }
  // What Kafka does with an API or version it does not serve: log and close.
  LOG_WARN("broker", "closing connection from {}: unsupported {} (key {}) v{}", frame.peer,
           protocol::api_name(header.api_key), header.api_key, header.api_version);
  reply(Reply{ReplyKind::kClose, {}});
}

void fill_api_versions(protocol::ApiVersionsResponse& response, bool controller_role, bool cluster) {
  for (const ApiRoute& route : api_routes()) {
    if (route.controller_role && !controller_role) continue;
    if (route.cluster_only && !cluster) continue;
    protocol::ApiVersionsResponse::ApiVersion v;
    v.api_key = int16_t(route.key);
    v.min_version = route.min_version;
    v.max_version = route.max_version;
    response.api_keys.push_back(v);
  }
}

}  // namespace samsa
