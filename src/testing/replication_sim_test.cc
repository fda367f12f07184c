// Follower replication on the real classes: two Broker objects on one
// SimWorld, broker 2 following broker 1's partition over the simulated
// network (Fetch with ReplicaState, the ReplicaFetcher, the follower append).
// Both brokers learn the partition from the same metadata records committed
// on each (replicas [1, 2], ISR [1, 2], leader 1): the controller that will
// do it for real is not built yet; become_follower() is its stand-in.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/file_region.h"
#include "base/log.h"
#include "broker/alter_partition_local.h"
#include "broker/broker.h"
#include "broker/test_commit.h"
#include "broker/listeners.h"
#include "config/broker_config.h"
#include "io/kafka_client.h"
#include "model/record_batch_builder.h"
#include "protocol/error_code.h"
#include "protocol/generated/fetch.h"
#include "protocol/generated/offset_for_leader_epoch.h"
#include "protocol/generated/produce.h"
#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa::sim {
namespace {

constexpr uint16_t kPort = 9092;
const TopicPartition kTp{"replicated", PartitionId(0)};
const Uuid kTopicId{{0x12, 0x34, 0x56, 0x78, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}};

struct SimBroker {
  HostId host;
  NodeId id;
  std::unique_ptr<BrokerConfig> config;
  std::unique_ptr<Broker> broker;
  std::unique_ptr<BrokerListeners> listeners;
};

class TwoBrokers {
 public:
  explicit TwoBrokers(uint64_t seed) : world_(seed) {
    world_.set_record_trace(false);
    for (int i = 0; i < 2; ++i) brokers_[i] = SimBroker{world_.add_host(), NodeId(i + 1), nullptr, nullptr, nullptr};
    client_host_ = world_.add_host();
  }
  ~TwoBrokers() {
    for (auto& p : producers_) p.reset();
    for (auto& b : brokers_) tear_down(b);
  }

  SimWorld& world() { return world_; }
  Broker& broker(int i) { return *brokers_[i].broker; }
  Partition& partition(int i) {
    Partition* p = brokers_[i].broker->replicas().get(kTp);
    EXPECT_NE(p, nullptr);
    return *p;
  }
  LeaderEndpoint endpoint(int i) const {
    return LeaderEndpoint{brokers_[i].id, world_.address(brokers_[i].host), kPort};
  }

  // Broker settings every boot() adds (e.g. replica.lag.time.max.ms).
  void set_extra_props(std::map<std::string, std::string> extra) { extra_props_ = std::move(extra); }

  void boot(int i) {
    SimBroker& b = brokers_[i];
    std::map<std::string, std::string> props{
        {"node.id", std::to_string(b.id.value())},
        {"log.dirs", "/data/logs"},
        {"metadata.log.dir", "/data/meta"},
        {"listeners", "PLAINTEXT://" + world_.address(b.host) + ":" + std::to_string(kPort)},
        {"log.segment.bytes", "16384"},
        {"log.index.size.max.bytes", "8192"},
        {"replica.high.watermark.checkpoint.interval.ms", "500"},
        {"offsets.topic.num.partitions", "1"},
    };
    for (const auto& [k, v] : extra_props_) props[k] = v;
    auto config = BrokerConfig::from_properties(props);
    ASSERT_TRUE(config.ok()) << config.error().to_string();
    b.config = std::make_unique<BrokerConfig>(std::move(config).value());
    SimRuntime& runtime = world_.runtime(b.host);
    b.broker = std::make_unique<Broker>();
    auto listeners = BrokerListeners::start(runtime, *b.config, b.broker->sink(), b.broker->controller_sink());
    ASSERT_TRUE(listeners.ok()) << listeners.error().to_string();
    b.listeners = std::move(listeners).value();
    Status started = b.broker->start(runtime, *b.config);
    ASSERT_TRUE(started.ok()) << started.error().to_string();
  }

  // The same topic on both, led by broker 1 with both in the ISR (metadata
  // a controller would have replicated to both).
  void create_topic_on(int i) {
    if (b_has_topic(i)) return;
    auto failed = test::commit_now(
        broker(i), {TopicRecord{kTp.topic, kTopicId},
                    PartitionRecord{kTopicId, kTp.partition, {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)},
                                    NodeId(1), LeaderEpoch(0), 0}});
    ASSERT_FALSE(failed.has_value()) << *failed;
  }
  bool b_has_topic(int i) { return broker(i).image().topic(kTp.topic) != nullptr; }

  // The metadata a controller would share: broker i learns the other
  // broker's registration (its epoch as the other registered itself), so
  // the other may join its ISRs (KIP-903).
  void register_peer_on(int i) {
    int other = 1 - i;
    const BrokerState* peer = broker(other).image().broker(brokers_[other].id);
    ASSERT_NE(peer, nullptr);
    RegisterBrokerRecord r;
    r.broker_id = peer->id;
    r.broker_epoch = peer->epoch;
    r.incarnation_id = peer->incarnation_id;
    r.endpoints = peer->listeners;
    r.fenced = false;
    auto failed = test::commit_now(broker(i), {r});
    ASSERT_FALSE(failed.has_value()) << *failed;
  }
  void set_topic_config_on(int i, const std::string& key, const std::string& value) {
    auto failed = test::commit_now(broker(i), {ConfigRecord{ConfigRecord::Resource::kTopic, kTp.topic, key, value}});
    ASSERT_FALSE(failed.has_value()) << *failed;
  }

  void crash(int i, CrashKind kind) {
    world_.crash(brokers_[i].host, kind);
    tear_down(brokers_[i]);
    world_.restart(brokers_[i].host);
  }

  // One request to broker i from the client host; the answer.
  template <typename Request, typename Response>
  Response call(int i, const Request& req, int16_t version) {
    KafkaClient client(world_.runtime(client_host_), "tester");
    bool done = false;
    Response out;
    client.connect(world_.address(brokers_[i].host), kPort, 3000, [&](Status st) {
      if (!st.ok()) {
        done = true;
        return;
      }
      client.call<Request, Response>(req, version, [&](Result<Response> resp) {
        done = true;
        EXPECT_TRUE(resp.ok());
        if (resp.ok()) out = std::move(resp).value();
      });
    });
    EXPECT_TRUE(world_.run_until([&] { return done; }, 5000));
    return out;
  }

  // Produces `count` one-record batches to broker `to` + 1 with acks=1, one
  // after the other; returns how many were acknowledged without error.
  int produce(int count, int to = 0) {
    int acked = 0;
    for (int16_t error : produce_acks(count, 1, to)) acked += error == 0 ? 1 : 0;
    return acked;
  }

  // The same with `acks`; each answer's error code (-2: no answer within
  // the timeout plus 5 s). `on_step` runs between simulation events.
  std::vector<int16_t> produce_acks(int count, int16_t acks, int to = 0, int32_t timeout_ms = 5000,
                                    const std::function<void()>& on_step = {}) {
    std::unique_ptr<KafkaClient>& producer_ = producers_[to];
    if (!producer_) {
      producer_ = std::make_unique<KafkaClient>(world_.runtime(client_host_), "producer");
      bool connected = false;
      producer_->connect(world_.address(brokers_[to].host), kPort, 3000, [&](Status st) {
        EXPECT_TRUE(st.ok());
        connected = true;
      });
      EXPECT_TRUE(world_.run_until([&] { return connected; }, 5000));
    }
    std::vector<int16_t> errors;
    for (int n = 0; n < count; ++n) {
      RecordBatchBuilder builder;
      std::string value = "record-" + std::to_string(produced_++);
      builder.add(world_.runtime(client_host_).clock().wall_ms(), std::nullopt,
                  ByteView(reinterpret_cast<const uint8_t*>(value.data()), value.size()));
      protocol::ProduceRequest req;
      req.acks = acks;
      req.timeout_ms = timeout_ms;
      protocol::ProduceRequest::TopicProduceData t;
      t.name = kTp.topic;
      protocol::ProduceRequest::PartitionProduceData p;
      p.index = kTp.partition.value();
      p.records = RecordSet::owned(builder.build().value());
      t.partition_data.push_back(std::move(p));
      req.topic_data.push_back(std::move(t));
      bool done = false;
      int16_t error = -2;
      producer_->call<protocol::ProduceRequest, protocol::ProduceResponse>(
          req, 9, [&](Result<protocol::ProduceResponse> resp) {
            done = true;
            if (resp.ok() && resp->responses.size() == 1 && resp->responses[0].partition_responses.size() == 1) {
              error = resp->responses[0].partition_responses[0].error_code;
            }
          });
      EXPECT_TRUE(world_.run_until(
          [&] {
            if (on_step) on_step();
            return done;
          },
          timeout_ms + 5000));
      errors.push_back(error);
    }
    return errors;
  }

 private:
  void tear_down(SimBroker& b) {
    b.listeners.reset();
    b.broker.reset();
    b.config.reset();
  }

  SimWorld world_;
  SimBroker brokers_[2];
  HostId client_host_;
  std::unique_ptr<KafkaClient> producers_[2];
  int produced_ = 0;
  std::map<std::string, std::string> extra_props_;
};

// Every byte of the partition's log, segment by segment.
Bytes log_bytes(Log& log) {
  Bytes out;
  Offset from = log.log_start_offset();
  for (int guard = 0; guard < 10000 && from < log.log_end_offset(); ++guard) {
    auto r = log.read(from, 1 << 20, Offset(INT64_MAX), true);
    EXPECT_TRUE(r.ok());
    if (!r.ok() || r->records.size == 0) break;
    Bytes bytes = read_region(r->records).value();
    out.insert(out.end(), bytes.begin(), bytes.end());
    for (size_t at = 0; at < bytes.size();) {
      RecordBatchHeader h(bytes.data() + at);
      from = h.last_offset() + 1;
      at += size_t(h.total_size());
    }
  }
  return out;
}

bool same_logs(TwoBrokers& c) {
  Log& leader = c.partition(0).log();
  Log& follower = c.partition(1).log();
  return leader.log_end_offset() == follower.log_end_offset() && log_bytes(leader) == log_bytes(follower) &&
         leader.leader_epochs() == follower.leader_epochs();
}

struct Outcome {
  uint64_t trace_hash = 0;
  int64_t final_log_end = 0;
};

// The scenario, checked step by step; the trace hash of the run.
Outcome follow_and_recover(uint64_t seed) {
  TwoBrokers c(seed);
  c.boot(0);
  c.boot(1);
  c.create_topic_on(0);
  c.create_topic_on(1);
  EXPECT_TRUE(c.partition(0).is_leader());
  EXPECT_TRUE(c.partition(1).is_follower());

  // Broker 2 does not fetch yet: the records are acknowledged (acks=1) but
  // the HW cannot pass what broker 2, an ISR member, has.
  EXPECT_EQ(c.produce(20), 20);
  c.world().run_for_ms(2000);
  EXPECT_EQ(c.partition(0).log().log_end_offset(), Offset(20));
  EXPECT_EQ(c.partition(0).high_watermark(), Offset(0)) << "the HW passed a follower that never fetched";

  // Broker 2 follows: the HW reaches the log end once it fetched it all.
  EXPECT_TRUE(c.broker(1).replicas().become_follower(kTp, c.endpoint(0), LeaderEpoch(0)).ok());
  EXPECT_TRUE(c.world().run_until([&] { return c.partition(0).high_watermark() == Offset(20); }, 10'000));
  EXPECT_GE(c.broker(1).replicas().fetchers()->fetcher_of(kTp)->fetches_sent(), 1u);
  EXPECT_TRUE(same_logs(c)) << "the follower's log is not the leader's byte for byte";
  // The follower learns the HW from the next answer (KIP-1166: at once).
  EXPECT_TRUE(c.world().run_until([&] { return c.partition(1).high_watermark() == Offset(20); }, 10'000));

  // Under steady produce the follower keeps up and the HW follows.
  EXPECT_EQ(c.produce(30), 30);
  EXPECT_TRUE(c.world().run_until([&] { return c.partition(0).high_watermark() == Offset(50); }, 10'000));
  EXPECT_TRUE(same_logs(c));

  // Power loss on broker 2: its unsynced tail is gone. Restarted and told
  // to follow again, it catches up to an identical log while broker 1 goes
  // on taking records.
  c.crash(1, CrashKind::kPowerLoss);
  EXPECT_EQ(c.produce(10), 10);
  EXPECT_EQ(c.partition(0).high_watermark(), Offset(50)) << "the HW moved without the ISR follower";
  c.boot(1);
  c.create_topic_on(1);  // a no-op when its metadata log kept it
  const Offset recovered_end = c.partition(1).log().log_end_offset();
  EXPECT_LE(recovered_end, Offset(50));
  EXPECT_LE(c.partition(1).high_watermark(), recovered_end);  // HW = min(checkpoint, log end)
  EXPECT_TRUE(c.broker(1).replicas().become_follower(kTp, c.endpoint(0), LeaderEpoch(0)).ok());
  EXPECT_TRUE(c.world().run_until([&] { return c.partition(0).high_watermark() == Offset(60); }, 10'000));
  EXPECT_TRUE(same_logs(c)) << "after the restart the follower's log differs";
  return Outcome{c.world().trace_hash(), c.partition(0).log().log_end_offset().value()};
}

TEST(ReplicationSim, AFollowerCopiesTheLeaderByteForByteAndCatchesUpAfterPowerLoss) {
  set_log_level(LogLevel::kWarn);
  Outcome a = follow_and_recover(7);
  EXPECT_EQ(a.final_log_end, 60);
  set_log_level(LogLevel::kInfo);
}

// A follower's Fetch as broker `replica` would send it (v18, ReplicaState).
protocol::FetchResponse::PartitionData follower_fetch(TwoBrokers& c, int32_t replica, int32_t current_epoch,
                                                      int64_t offset, int32_t last_fetched_epoch) {
  protocol::FetchRequest req;
  req.replica_state.replica_id = replica;
  req.max_wait_ms = 0;
  req.min_bytes = 1;
  protocol::FetchRequest::FetchTopic t;
  t.topic_id = kTopicId;
  protocol::FetchRequest::FetchPartition p;
  p.partition = 0;
  p.current_leader_epoch = current_epoch;
  p.fetch_offset = offset;
  p.last_fetched_epoch = last_fetched_epoch;
  p.partition_max_bytes = 1 << 20;
  t.partitions.push_back(p);
  req.topics.push_back(t);
  auto resp = c.call<protocol::FetchRequest, protocol::FetchResponse>(0, req, 18);
  EXPECT_EQ(resp.responses.size(), 1u);
  if (resp.responses.empty() || resp.responses[0].partitions.empty()) return {};
  return resp.responses[0].partitions[0];
}

TEST(ReplicationSim, TheLeaderAnswersFollowerFetchesAsKafka) {
  set_log_level(LogLevel::kWarn);
  TwoBrokers c(3);
  c.boot(0);
  c.boot(1);
  c.create_topic_on(0);
  c.create_topic_on(1);
  // Epoch 0 holds 5 records; broker 1 then leads in epoch 2 and takes 5 more.
  ASSERT_EQ(c.produce(5), 5);
  ASSERT_TRUE(c.broker(0).replicas().become_leader(kTp, LeaderEpoch(2)).ok());
  ASSERT_EQ(c.produce(5), 5);
  using protocol::ErrorCode;
  // Reads up to the log end, not the HW (which waits for broker 2).
  auto ok = follower_fetch(c, 2, 2, 0, -1);
  EXPECT_EQ(ok.error_code, int16_t(ErrorCode::kNone));
  EXPECT_EQ(ok.high_watermark, 0);
  EXPECT_GT(ok.records.size(), 0u);
  // The fetch at 10 tells the leader broker 2 has everything: the HW moves.
  EXPECT_EQ(follower_fetch(c, 2, 2, 10, 2).error_code, int16_t(ErrorCode::kNone));
  EXPECT_EQ(c.partition(0).high_watermark(), Offset(10));
  EXPECT_EQ(follower_fetch(c, 2, 1, 10, 2).error_code, int16_t(ErrorCode::kFencedLeaderEpoch));
  EXPECT_EQ(follower_fetch(c, 2, 3, 10, 2).error_code, int16_t(ErrorCode::kUnknownLeaderEpoch));
  // Broker 3 holds no replica: UNKNOWN_LEADER_EPOCH with an epoch (it may
  // be a reassignment target the leader has not heard of), else NOT_LEADER.
  EXPECT_EQ(follower_fetch(c, 3, 2, 0, -1).error_code, int16_t(ErrorCode::kUnknownLeaderEpoch));
  EXPECT_EQ(follower_fetch(c, 3, -1, 0, -1).error_code, int16_t(ErrorCode::kNotLeaderOrFollower));
  // A follower that wrote epoch 1 (never the leader's) up to offset 8:
  // the leader answers where its own epoch 0 ends, without records.
  auto diverging = follower_fetch(c, 2, 2, 8, 1);
  EXPECT_EQ(diverging.error_code, int16_t(ErrorCode::kNone));
  EXPECT_EQ(diverging.diverging_epoch.epoch, 0);
  EXPECT_EQ(diverging.diverging_epoch.end_offset, 5);
  EXPECT_EQ(diverging.records.size(), 0u);

  // OffsetForLeaderEpoch from the same cache.
  protocol::OffsetForLeaderEpochRequest req;
  req.replica_id = 2;
  protocol::OffsetForLeaderEpochRequest::OffsetForLeaderTopic t;
  t.topic = kTp.topic;
  for (int32_t epoch : {0, 1, 2, 7}) {
    protocol::OffsetForLeaderEpochRequest::OffsetForLeaderPartition p;
    p.partition = 0;
    p.current_leader_epoch = 2;
    p.leader_epoch = epoch;
    t.partitions.push_back(p);
  }
  protocol::OffsetForLeaderEpochRequest::OffsetForLeaderPartition fenced;
  fenced.current_leader_epoch = 1;
  t.partitions.push_back(fenced);
  req.topics.push_back(t);
  auto resp = c.call<protocol::OffsetForLeaderEpochRequest, protocol::OffsetForLeaderEpochResponse>(0, req, 4);
  ASSERT_EQ(resp.topics.size(), 1u);
  ASSERT_EQ(resp.topics[0].partitions.size(), 5u);
  const auto& r = resp.topics[0].partitions;
  EXPECT_EQ(std::make_pair(r[0].leader_epoch, r[0].end_offset), std::make_pair(0, int64_t(5)));
  EXPECT_EQ(std::make_pair(r[1].leader_epoch, r[1].end_offset), std::make_pair(0, int64_t(5)));
  EXPECT_EQ(std::make_pair(r[2].leader_epoch, r[2].end_offset), std::make_pair(2, int64_t(10)));
  EXPECT_EQ(std::make_pair(r[3].leader_epoch, r[3].end_offset), std::make_pair(-1, int64_t(-1)));
  EXPECT_EQ(r[4].error_code, int16_t(ErrorCode::kFencedLeaderEpoch));
  set_log_level(LogLevel::kInfo);
}

// KIP-101/320 end to end: broker 2 led epoch 1 for a moment and wrote
// records broker 1 never saw; broker 1 leads epoch 2. Following it, broker 2
// learns from the DivergingEpoch answer where the logs part, cuts its epoch
// 1 records and copies epoch 2's.
TEST(ReplicationSim, AFollowerTruncatesWhereItsLogDivergesFromTheLeaders) {
  set_log_level(LogLevel::kWarn);
  TwoBrokers c(5);
  c.boot(0);
  c.boot(1);
  c.create_topic_on(0);
  c.create_topic_on(1);
  ASSERT_EQ(c.produce(5), 5);
  ASSERT_TRUE(c.broker(1).replicas().become_follower(kTp, c.endpoint(0), LeaderEpoch(0)).ok());
  ASSERT_TRUE(c.world().run_until([&] { return c.partition(1).log().log_end_offset() == Offset(5); }, 10'000));

  ASSERT_TRUE(c.broker(1).replicas().become_leader(kTp, LeaderEpoch(1)).ok());
  ASSERT_EQ(c.produce(3, 1), 3);  // offsets 5-7 in epoch 1, only on broker 2
  ASSERT_TRUE(c.broker(0).replicas().become_leader(kTp, LeaderEpoch(2)).ok());
  ASSERT_EQ(c.produce(4, 0), 4);  // offsets 5-8 in epoch 2, only on broker 1
  EXPECT_EQ(c.partition(1).log().log_end_offset(), Offset(8));

  ASSERT_TRUE(c.broker(1).replicas().become_follower(kTp, c.endpoint(0), LeaderEpoch(2)).ok());
  EXPECT_TRUE(c.world().run_until([&] { return same_logs(c); }, 10'000)) << "the follower never converged";
  EXPECT_EQ(c.partition(1).log().log_end_offset(), Offset(9));
  EXPECT_EQ(c.partition(1).log().leader_epochs(),
            (std::vector<EpochEntry>{{LeaderEpoch(0), Offset(0)}, {LeaderEpoch(2), Offset(5)}}));
  EXPECT_TRUE(c.world().run_until([&] { return c.partition(0).high_watermark() == Offset(9); }, 10'000));
  set_log_level(LogLevel::kInfo);
}

// Watches the leader's HW between simulation events: it never goes back.
class HighWatermarkWatch {
 public:
  explicit HighWatermarkWatch(TwoBrokers& c) : c_(c) {}
  void operator()() {
    Offset hw = c_.partition(0).high_watermark();
    EXPECT_GE(hw, last_) << "the leader's HW went back";
    if (hw < last_) ++regressions_;
    last_ = std::max(last_, hw);
  }
  int regressions() const { return regressions_; }

 private:
  TwoBrokers& c_;
  Offset last_{0};
  int regressions_ = 0;
};

using protocol::ErrorCode;
constexpr int16_t kNone = 0;

// Issue 15 items 3 and 4 end to end on two brokers: acks=-1 waits for the
// follower; the follower crashes and, after replica.lag.time.max.ms, the
// leader drops it from the ISR through AlterPartition (its own controller
// here); with min.insync.replicas=2 acks=-1 then gets NOT_ENOUGH_REPLICAS
// while acks=1 still works; the follower comes back, catches up to the HW,
// rejoins through AlterPartition, and acks=-1 works again.
Outcome shrink_and_expand(uint64_t seed) {
  TwoBrokers c(seed);
  c.set_extra_props({{"replica.lag.time.max.ms", "2000"}});
  c.boot(0);
  c.boot(1);
  c.create_topic_on(0);
  c.create_topic_on(1);
  c.register_peer_on(0);
  c.set_topic_config_on(0, "min.insync.replicas", "2");
  HighWatermarkWatch watch(c);
  auto step = [&] { watch(); };
  auto run_until = [&](const std::function<bool()>& done, int64_t max_ms) {
    return c.world().run_until(
        [&] {
          watch();
          return done();
        },
        max_ms);
  };

  // acks=-1 with the follower fetching: answered once it has the records.
  EXPECT_TRUE(c.broker(1).replicas().become_follower(kTp, c.endpoint(0), LeaderEpoch(0)).ok());
  EXPECT_EQ(c.produce_acks(10, -1, 0, 5000, step), std::vector<int16_t>(10, kNone));
  EXPECT_EQ(c.partition(0).high_watermark(), Offset(10));
  EXPECT_EQ(c.partition(0).isr(), (std::vector<NodeId>{NodeId(1), NodeId(2)}));

  // The follower dies. A produce in flight waits: the HW cannot pass it
  // (nor, with min.insync.replicas=2, move once the ISR is the leader alone:
  // strict min ISR), so it times out (REQUEST_TIMED_OUT), written but not
  // acknowledged.
  c.crash(1, CrashKind::kProcess);
  EXPECT_EQ(c.produce_acks(1, -1, 0, 1000, step), std::vector<int16_t>{int16_t(ErrorCode::kRequestTimedOut)});
  // replica.lag.time.max.ms later it leaves the ISR, committed by the controller.
  EXPECT_TRUE(run_until([&] { return c.partition(0).isr() == std::vector<NodeId>{NodeId(1)}; }, 10'000));
  const PartitionState& shrunk = c.broker(0).image().topic(kTp.topic)->partitions[0];
  EXPECT_EQ(shrunk.isr, std::vector<NodeId>{NodeId(1)});
  EXPECT_EQ(shrunk.partition_epoch, 1) << "one PartitionChangeRecord";
  EXPECT_EQ(shrunk.leader_epoch, LeaderEpoch(0));
  const Offset end_before = c.partition(0).log().log_end_offset();
  EXPECT_EQ(c.produce_acks(3, -1, 0, 5000, step), std::vector<int16_t>(3, int16_t(ErrorCode::kNotEnoughReplicas)));
  EXPECT_EQ(c.partition(0).log().log_end_offset(), end_before) << "NOT_ENOUGH_REPLICAS wrote records";
  EXPECT_EQ(c.produce_acks(5, 1, 0, 5000, step), std::vector<int16_t>(5, kNone));
  EXPECT_EQ(c.partition(0).high_watermark(), Offset(10)) << "below min.insync.replicas the HW stays";

  // It comes back, catches up to the HW and rejoins; the HW moves on.
  c.boot(1);
  c.create_topic_on(1);
  EXPECT_TRUE(c.broker(1).replicas().become_follower(kTp, c.endpoint(0), LeaderEpoch(0)).ok());
  EXPECT_TRUE(run_until(
      [&] { return c.partition(0).isr() == std::vector<NodeId>{NodeId(1), NodeId(2)}; }, 10'000));
  EXPECT_EQ(c.broker(0).image().topic(kTp.topic)->partitions[0].partition_epoch, 2);
  EXPECT_TRUE(run_until([&] { return c.partition(0).high_watermark() == c.partition(0).log().log_end_offset(); },
                        10'000));
  EXPECT_EQ(c.produce_acks(4, -1, 0, 5000, step), std::vector<int16_t>(4, kNone));
  EXPECT_TRUE(same_logs(c));
  EXPECT_EQ(watch.regressions(), 0);
  return Outcome{c.world().trace_hash(), c.partition(0).log().log_end_offset().value()};
}

TEST(ReplicationSim, AStalledFollowerLeavesTheIsrAndRejoinsAfterCatchingUp) {
  set_log_level(LogLevel::kWarn);
  Outcome a = shrink_and_expand(11);
  EXPECT_EQ(a.final_log_end, 10 + 1 + 5 + 4);
  set_log_level(LogLevel::kInfo);
}

TEST(ReplicationSim, TheIsrScenarioReplaysFromItsSeed) {
  set_log_level(LogLevel::kOff);
  Outcome a = shrink_and_expand(13);
  Outcome b = shrink_and_expand(13);
  set_log_level(LogLevel::kInfo);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
}

// acks=-1 on the leader alone with the follower never fetching and
// min.insync.replicas=1: the produce waits for the ISR member and times out;
// once the follower fetches, waiting produces are answered as its fetches
// move the HW.
TEST(ReplicationSim, AcksAllWaitsForTheIsrAndTimesOutWithoutIt) {
  set_log_level(LogLevel::kWarn);
  TwoBrokers c(17);
  c.boot(0);
  c.boot(1);
  c.create_topic_on(0);
  c.create_topic_on(1);
  EXPECT_EQ(c.produce_acks(2, -1, 0, 500), std::vector<int16_t>(2, int16_t(ErrorCode::kRequestTimedOut)));
  EXPECT_EQ(c.partition(0).log().log_end_offset(), Offset(2)) << "a timed-out acks=-1 produce is still written";
  EXPECT_EQ(c.broker(0).replicas().produce_purgatory().size(), 0u);
  EXPECT_EQ(c.produce_acks(3, 1, 0, 500), std::vector<int16_t>(3, kNone)) << "acks=1 does not wait";
  EXPECT_TRUE(c.broker(1).replicas().become_follower(kTp, c.endpoint(0), LeaderEpoch(0)).ok());
  EXPECT_EQ(c.produce_acks(3, -1, 0, 5000), std::vector<int16_t>(3, kNone));
  EXPECT_EQ(c.partition(0).high_watermark(), Offset(8));
  set_log_level(LogLevel::kInfo);
}

// The AlterPartition channel is the injected function: one that first
// answers NOT_CONTROLLER (the active controller moved) makes the leader send
// the same proposal again after the retry backoff, one at a time, until the
// controller takes it.
TEST(ReplicationSim, AnIsrChangeTheControllerCouldNotTakeIsSentAgain) {
  set_log_level(LogLevel::kWarn);
  TwoBrokers c(19);
  c.set_extra_props({{"replica.lag.time.max.ms", "2000"}});
  c.boot(0);
  c.boot(1);
  c.create_topic_on(0);
  c.create_topic_on(1);
  Broker& leader = c.broker(0);
  std::vector<int64_t> sent_at;
  int in_flight = 0, max_in_flight = 0;
  leader.replicas().start_isr_management(
      leader.runtime(), 2000,
      [&](const protocol::AlterPartitionRequest& request, int16_t version, AlterPartitionReply reply) {
        sent_at.push_back(leader.clock().monotonic_ms());
        max_in_flight = std::max(max_in_flight, ++in_flight);
        if (sent_at.size() <= 2) {
          protocol::AlterPartitionResponse refused;
          refused.error_code = int16_t(ErrorCode::kNotController);
          --in_flight;
          reply(refused);
          return;
        }
        serve_alter_partition(leader, request, version, [&, reply](Result<protocol::AlterPartitionResponse> r) {
          --in_flight;
          reply(std::move(r));
        });
      },
      [&] { return leader.image().broker(NodeId(1))->epoch; });
  // Broker 2 never fetches: after replica.lag.time.max.ms it leaves the ISR.
  EXPECT_TRUE(c.world().run_until([&] { return c.partition(0).isr() == std::vector<NodeId>{NodeId(1)}; }, 10'000));
  ASSERT_EQ(sent_at.size(), 3u);
  EXPECT_GE(sent_at[1] - sent_at[0], ReplicaManager::kAlterPartitionRetryMs);
  EXPECT_GE(sent_at[2] - sent_at[1], ReplicaManager::kAlterPartitionRetryMs);
  EXPECT_EQ(max_in_flight, 1);
  EXPECT_EQ(c.broker(0).image().topic(kTp.topic)->partitions[0].isr, std::vector<NodeId>{NodeId(1)});
  set_log_level(LogLevel::kInfo);
}

TEST(ReplicationSim, TheSameSeedGivesTheSameTrace) {
  set_log_level(LogLevel::kOff);
  Outcome a = follow_and_recover(21);
  Outcome b = follow_and_recover(21);
  set_log_level(LogLevel::kInfo);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
}

}  // namespace
}  // namespace samsa::sim
