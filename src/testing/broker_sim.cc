#include "testing/broker_sim.h"

#include <map>
#include <memory>
#include <sstream>

#include "broker/broker.h"
#include "broker/listeners.h"
#include "config/broker_config.h"
#include "protocol/generated/create_topics.h"
#include "testing/broker_admin_clients.h"
#include "testing/broker_clients.h"
#include "testing/group_history.h"
#include "testing/sim_group_client.h"
#include "testing/topic_history.h"
#include "testing/sim_file_system.h"
#include "testing/sim_runtime.h"
#include "testing/sim_stream_net.h"
#include "testing/sim_world.h"

namespace samsa::sim {
namespace {

constexpr uint16_t kBrokerPort = 9092;
constexpr const char* kTopic = "sim";
constexpr const char* kChurnTopic = "churn";
constexpr const char* kGroup = "sim-group";
constexpr int kGroupMembers = 2;
constexpr int64_t kRecoveryDeadlineMs = 30'000;
constexpr int64_t kProduceIntervalMs = 5;
constexpr int64_t kFetchIntervalMs = 20;
// An fsync off the loop takes this long on a healthy disk: the windows
// between a write and its durability (a roll and its segment's fsync, say)
// stay open long enough for a crash to land in them.
constexpr int64_t kDiskLatencyMinUs = 100;
constexpr int64_t kDiskLatencyMaxUs = 10'000;
// A disk in trouble before a power loss: each fsync takes up to seconds.
constexpr int64_t kSlowRollFsyncMinUs = 500'000;
constexpr int64_t kSlowRollFsyncMaxUs = 3'000'000;
constexpr int64_t kListOffsetsIntervalMs = 50;
constexpr int64_t kChurnIntervalMs = 20;
constexpr int64_t kGroupTickMs = 50;

// The clients of a seed: as asked, or each drawn.
BrokerSimMix draw_mix(const BrokerSimMix& asked, Rng& rng) {
  if (!asked.drawn) return asked;
  BrokerSimMix mix;
  mix.drawn = false;
  mix.offset_lister = rng.chance(0.7);
  mix.topic_churn = rng.chance(0.5);
  mix.group = rng.chance(0.5);
  return mix;
}

class BrokerSimRun {
 public:
  explicit BrokerSimRun(const BrokerSimOptions& options)
      : options_(options), world_(options.seed), fault_rng_(options.seed ^ 0x5eedfa17u),
        history_(fault_rng_.chance(0.3)), small_index_(fault_rng_.chance(0.2)),
        groups_(history_.fsync_every_message()), mix_(draw_mix(options.mix, fault_rng_)) {
    result_.fsync_every_message = history_.fsync_every_message();
    result_.mix = mix_;
    if (options.print_trace) world_.set_trace_sink([](const std::string& line) { std::printf("%s\n", line.c_str()); });
    world_.set_record_trace(false);
    broker_host_ = world_.add_host();
    client_host_ = world_.add_host();
    world_.volume(broker_host_).set_latency_us(kDiskLatencyMinUs, kDiskLatencyMaxUs);
  }
  ~BrokerSimRun() { tear_down_broker(); }

  BrokerSimResult run();

 private:
  ClientEnv client_env() {
    ClientEnv env;
    env.runtime = &world_.runtime(client_host_);
    env.history = &history_;
    env.topics = &topics_;
    env.groups = &groups_;
    env.broker = BrokerAddress{world_.address(broker_host_), kBrokerPort};
    env.trace = [this](const std::string& what) { world_.note(client_host_, what); };
    return env;
  }
  std::map<std::string, std::string> broker_properties() const;
  bool boot();
  void tear_down_broker();
  bool create_topic();
  void start_clients();
  void stop_producers();
  void stop_clients();
  void read_back(const std::string& topic, int32_t partition, const std::string& key, bool may_be_gone, int& pending,
                 std::string& error);
  void start_producers();
  bool crash_and_recover(CrashKind kind);
  bool read_back_every_partition();
  void inject_fault();
  bool all_ok() const { return history_.ok() && topics_.violations().empty() && groups_.violations().empty(); }
  bool failed(const std::string& why) {
    if (result_.failure.empty()) result_.failure = why;
    return false;
  }

  BrokerSimOptions options_;
  SimWorld world_;
  Rng fault_rng_;
  LogHistory history_;
  bool small_index_;
  TopicHistory topics_;
  GroupHistory groups_;
  BrokerSimMix mix_;
  HostId broker_host_, client_host_;
  std::unique_ptr<BrokerConfig> config_;
  std::unique_ptr<Broker> broker_;
  std::unique_ptr<BrokerListeners> listeners_;
  std::vector<std::unique_ptr<SimProducer>> producers_;
  std::vector<std::unique_ptr<SimConsumer>> consumers_;
  std::unique_ptr<SimOffsetLister> lister_;
  std::unique_ptr<SimTopicChurn> churn_;
  std::vector<std::unique_ptr<SimGroupMember>> members_;
  BrokerSimResult result_;
};

std::map<std::string, std::string> BrokerSimRun::broker_properties() const {
  std::map<std::string, std::string> p{
      {"node.id", "1"},
      {"log.dirs", "/data/logs"},
      {"metadata.log.dir", "/data/meta"},
      {"listeners", "PLAINTEXT://" + world_.address(broker_host_) + ":" + std::to_string(kBrokerPort)},
      // Small segments and indexes: rolls, index and recovery-point work
      // happen within seconds of simulated time.
      {"log.segment.bytes", "16384"},
      {"log.index.interval.bytes", "256"},
      // Kafka's 10 MB would cost the simulated disk 20 MB per roll; a small
      // index also rolls segments on a full index now and then.
      {"log.index.size.max.bytes", small_index_ ? "512" : "8192"},
      {"log.flush.scheduler.interval.ms", "200"},
      {"log.flush.offset.checkpoint.interval.ms", "500"},
      {"replica.high.watermark.checkpoint.interval.ms", "500"},
      {"offsets.topic.num.partitions", "1"},
      {"offsets.topic.replication.factor", "1"},  // one broker (Kafka's 3 would leave groups without a coordinator)
      // Kafka's 3 s would leave a short run's group waiting for its first
      // generation (Kafka's own integration tests set 0).
      {"group.initial.rebalance.delay.ms", "100"},
  };
  if (history_.fsync_every_message()) p["log.flush.interval.messages"] = "1";
  return p;
}

bool BrokerSimRun::boot() {
  auto config = BrokerConfig::from_properties(broker_properties());
  if (!config.ok()) return failed("config: " + config.error().to_string());
  config_ = std::make_unique<BrokerConfig>(std::move(config).value());
  SimRuntime& runtime = world_.runtime(broker_host_);
  broker_ = std::make_unique<Broker>();
  auto listeners = BrokerListeners::start(runtime, *config_, broker_->sink(), broker_->controller_sink());
  if (!listeners.ok()) return failed("listen: " + listeners.error().to_string());
  listeners_ = std::move(listeners).value();
  Status started = broker_->start(runtime, *config_);
  if (!started.ok()) return failed("broker start: " + started.error().to_string());
  world_.note(broker_host_, "broker started");
  return true;
}

// After a crash: the objects go without a clean shutdown (their runtime is
// dead, every call on it a no-op), as a killed process's would.
void BrokerSimRun::tear_down_broker() {
  listeners_.reset();
  broker_.reset();
  config_.reset();
}

bool BrokerSimRun::create_topic() {
  auto admin = std::make_shared<KafkaClient>(world_.runtime(client_host_), "sim-admin");
  bool done = false;
  std::string error;
  protocol::CreateTopicsRequest req;
  protocol::CreateTopicsRequest::CreatableTopic t;
  t.name = kTopic;
  t.num_partitions = options_.partitions;
  t.replication_factor = 1;
  req.topics.push_back(t);
  req.timeout_ms = 5000;
  admin->connect(world_.address(broker_host_), kBrokerPort, 3000, [&](Status s) {
    if (!s.ok()) {
      error = s.error().to_string();
      done = true;
      return;
    }
    admin->call<protocol::CreateTopicsRequest, protocol::CreateTopicsResponse>(
        req, 4, [&](Result<protocol::CreateTopicsResponse> resp) {
          done = true;
          if (!resp.ok()) error = resp.error().to_string();
          else if (resp.value().topics.size() != 1 || resp.value().topics[0].error_code != 0) error = "CreateTopics failed";
        });
  });
  if (!world_.run_until([&] { return done; }, 10'000)) return failed("CreateTopics did not answer");
  if (!error.empty()) return failed("CreateTopics: " + error);
  return true;
}

// The clients that write records (the churn too: it produces), stopped
// over a crash until the logs are read back.
void BrokerSimRun::start_producers() {
  for (auto& p : producers_) p->start(kProduceIntervalMs);
  if (churn_) churn_->start(kChurnIntervalMs);
}

void BrokerSimRun::stop_producers() {
  for (auto& p : producers_) p->stop();
  if (churn_) churn_->stop();
}

void BrokerSimRun::start_clients() {
  for (int i = 0; i < options_.producers; ++i) {
    producers_.push_back(std::make_unique<SimProducer>(client_env(), i, kTopic, options_.partitions,
                                                       fault_rng_.next_u64()));
  }
  for (int32_t p = 0; p < options_.partitions; ++p) {
    consumers_.push_back(std::make_unique<SimConsumer>(client_env(), int(p), kTopic, p));
    consumers_.back()->start(kFetchIntervalMs);
  }
  if (mix_.offset_lister) {
    lister_ = std::make_unique<SimOffsetLister>(client_env(), kTopic, options_.partitions, fault_rng_.next_u64());
    lister_->start(kListOffsetsIntervalMs);
  }
  if (mix_.topic_churn) churn_ = std::make_unique<SimTopicChurn>(client_env(), kChurnTopic, fault_rng_.next_u64());
  for (int i = 0; mix_.group && i < kGroupMembers; ++i) {
    members_.push_back(std::make_unique<SimGroupMember>(client_env(), i, kGroup, kTopic, options_.partitions,
                                                        fault_rng_.next_u64()));
    members_.back()->start(kGroupTickMs);
  }
  start_producers();
}

void BrokerSimRun::stop_clients() {
  stop_producers();
  for (auto& c : consumers_) c->stop();
  if (lister_) lister_->stop();
  for (auto& m : members_) m->stop();
}

// Reads topic-partition from offset 0 and hands the log to LogHistory as
// `key`'s; one that is gone (may_be_gone: its deletion was under way) is
// forgotten instead.
void BrokerSimRun::read_back(const std::string& topic, int32_t partition, const std::string& key, bool may_be_gone,
                             int& pending, std::string& error) {
  int64_t deadline = world_.runtime(client_host_).now_ms() + kRecoveryDeadlineMs;
  read_whole_log(client_env(), topic, partition, deadline,
                 [this, key, may_be_gone, &pending, &error](Result<std::vector<ReadRecord>> log) {
                   --pending;
                   if (log.ok()) return history_.recovered(key, log.value());
                   if (log.error().kind() == ErrorKind::kCorrupt) return history_.corrupt(key, log.error().message());
                   if (log.error().kind() == ErrorKind::kNotFound && may_be_gone) return;
                   error = log.error().to_string();
                 });
}

// Reads every partition (and the churned topic's live incarnation) from
// offset 0 and hands each log to LogHistory.
bool BrokerSimRun::read_back_every_partition() {
  int pending = options_.partitions;
  std::string error;
  for (int32_t p = 0; p < options_.partitions; ++p) read_back(kTopic, p, partition_key(kTopic, p), false, pending, error);
  if (auto live = churn_ ? churn_->live() : std::optional<SimTopicChurn::Live>()) {
    ++pending;
    read_back(kChurnTopic, 0, live->key, live->may_be_gone, pending, error);
  }
  if (!world_.run_until([&] { return pending == 0; }, kRecoveryDeadlineMs + 1000)) {
    return failed("reading the logs back did not finish");
  }
  if (!error.empty()) return failed("reading the logs back: " + error);
  history_.resumed();
  return true;
}

bool BrokerSimRun::crash_and_recover(CrashKind kind) {
  stop_producers();
  world_.crash(broker_host_, kind);
  history_.crashed(kind);
  groups_.crashed(kind);
  tear_down_broker();
  ++result_.crashes;
  world_.run_for_ms(fault_rng_.range(1, 500));
  world_.restart(broker_host_);
  if (!boot()) return false;
  if (!read_back_every_partition()) return false;
  start_producers();
  return true;
}

void BrokerSimRun::inject_fault() {
  SimVolume& disk = world_.volume(broker_host_);
  switch (fault_rng_.uniform(7)) {
    case 0:
      if (!crash_and_recover(CrashKind::kPowerLoss)) return;
      break;
    case 1:
      if (!crash_and_recover(CrashKind::kProcess)) return;
      break;
    case 2: {  // the disk fills up for a while
      // What needs space fails; reads do not, and a failed fsync (EIO's
      // case below) takes a log offline until a restart, which this case
      // is not about: the broker must carry on by itself once space is back.
      constexpr uint32_t kNeedsSpace = kFsOpen | kFsWrite | kFsTruncate | kFsAllocate | kFsMkdir | kFsRename;
      uint64_t id = disk.add_fault(DiskFault{kNeedsSpace, "", 28, -1, 1.0});
      world_.note(broker_host_, "fault: ENOSPC");
      ++result_.disk_faults;
      world_.run_for_ms(fault_rng_.range(50, 2000));
      disk.remove_fault(id);
      break;
    }
    case 3: {  // an I/O error: the log dir goes offline; an operator restarts the broker
      uint64_t id = disk.add_fault(DiskFault{kFsAll, "", 5, int64_t(fault_rng_.range(1, 3)), 1.0});
      world_.note(broker_host_, "fault: EIO");
      ++result_.disk_faults;
      world_.run_for_ms(fault_rng_.range(50, 1000));
      disk.remove_fault(id);
      crash_and_recover(CrashKind::kProcess);
      break;
    }
    case 4:  // a slow disk
      disk.set_latency_us(1000, 50'000);
      world_.note(broker_host_, "fault: slow disk");
      world_.run_for_ms(fault_rng_.range(100, 3000));
      disk.set_latency_us(kDiskLatencyMinUs, kDiskLatencyMaxUs);
      break;
    case 5:
      result_.resets += int(world_.net().reset_host(client_host_));
      break;
    case 6: {  // the power goes while the disk is slow: fsyncs of rolled segments queue up
      // The windows between a roll and its segment's fsync stay open for
      // seconds, rolls go on meanwhile, and the power loss lands inside
      // them; the restart brings a healthy disk.
      disk.set_latency_us(kSlowRollFsyncMinUs, kSlowRollFsyncMaxUs);
      world_.note(broker_host_, "fault: slow disk, then a power loss");
      world_.run_for_ms(fault_rng_.range(1000, 8000));
      disk.set_latency_us(kDiskLatencyMinUs, kDiskLatencyMaxUs);
      crash_and_recover(CrashKind::kPowerLoss);
      break;
    }
  }
}

BrokerSimResult BrokerSimRun::run() {
  if (!boot() || !create_topic()) return result_;
  start_clients();
  int64_t end = world_.now_ms() + options_.duration_ms;
  while (world_.now_ms() < end && result_.failure.empty() && all_ok()) {
    world_.run_for_ms(fault_rng_.range(200, 3000));
    if (options_.faults) inject_fault();
  }
  // The end: no faults, producers stopped, the whole log read back once
  // more (judged as after a crash that must lose nothing).
  if (result_.failure.empty()) {
    stop_producers();
    world_.run_for_ms(1000);
    read_back_every_partition();
  }
  stop_clients();
  result_.violations = history_.violations();
  for (const auto* more : {&topics_.violations(), &groups_.violations()}) {
    result_.violations.insert(result_.violations.end(), more->begin(), more->end());
  }
  if (!result_.violations.empty() && result_.failure.empty()) {
    const Violation& v = result_.violations.front();
    result_.failure = std::string(to_string(v.kind)) + " in " + v.partition + ": " + v.detail;
  }
  result_.ok = result_.failure.empty();
  result_.acknowledged = history_.acknowledged_records();
  result_.lost_allowed = history_.lost_allowed();
  if (lister_) result_.list_offsets_answers = lister_->answers();
  if (churn_) result_.topic_incarnations = churn_->incarnations();
  for (const auto& m : members_) {
    result_.group_commits_acknowledged += m->commits_acknowledged();
    result_.group_generations += m->generations();
  }
  result_.events = world_.events_run();
  result_.trace_hash = world_.trace_hash();
  result_.trace_lines = world_.trace_lines();
  return result_;
}

}  // namespace

std::string BrokerSimResult::summary() const {
  std::ostringstream s;
  s << (ok ? "ok" : "FAILED") << " acked=" << acknowledged << " lost_allowed=" << lost_allowed
    << " crashes=" << crashes << " disk_faults=" << disk_faults << " resets=" << resets
    << " fsync_every_message=" << (fsync_every_message ? 1 : 0);
  if (mix.offset_lister) s << " list_offsets=" << list_offsets_answers;
  if (mix.topic_churn) s << " topics=" << topic_incarnations;
  if (mix.group) s << " group_commits=" << group_commits_acknowledged << " generations=" << group_generations;
  s << " events=" << events << " trace=" << std::hex
    << trace_hash << std::dec << "/" << trace_lines;
  if (!ok) s << " : " << failure;
  return s.str();
}

std::optional<BrokerSimMix> BrokerSimMix::named(const std::string& name) {
  BrokerSimMix mix;
  if (name == "drawn") return mix;
  mix.drawn = false;
  if (name == "base") return mix;
  mix.offset_lister = name == "all" || name == "offsets";
  mix.topic_churn = name == "all" || name == "churn";
  mix.group = name == "all" || name == "group";
  if (!mix.offset_lister && !mix.topic_churn && !mix.group) return std::nullopt;
  return mix;
}

BrokerSimResult run_broker_sim(const BrokerSimOptions& options) { return BrokerSimRun(options).run(); }

}  // namespace samsa::sim
