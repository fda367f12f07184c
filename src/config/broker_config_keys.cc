// The broker's ConfigDef: Kafka's server.properties keys with Kafka's
// defaults, except where docs/configuration.md says otherwise (marked SAMSA).

#include "config/broker_config.h"

namespace samsa {
namespace {

using T = ConfigType;
using V = ConfigValidator;
constexpr auto kHigh = ConfigImportance::kHigh;
constexpr auto kMedium = ConfigImportance::kMedium;
constexpr auto kLow = ConfigImportance::kLow;

const char* const kIntMax = "2147483647";
const char* const kLongMax = "9223372036854775807";

void define_server(ConfigDef& d) {
  // SAMSA: node.id defaults to 1 (Kafka: required) so an unconfigured
  // single node starts.
  d.define({"node.id", T::kInt, "1", false, V::at_least(0), kHigh, "The node id of this server."});
  d.define({"broker.id", T::kInt, "-1", false, V::at_least(-1), kHigh, "Alias of node.id (ZooKeeper-era name)."});
  // SAMSA: both roles by default: one process is a complete cluster.
  d.define({"process.roles", T::kList, "broker,controller", false, V::in({"broker", "controller"}), kHigh,
            "The roles this process plays: broker, controller, or both."});
  d.define({"cluster.id", T::kString, std::nullopt, false, {}, kMedium,
            "Cluster id; when unset the id stored in the data directory (or a new one) is used."});
  // SAMSA: loopback by default (Kafka: all interfaces).
  d.define({"listeners", T::kList, "PLAINTEXT://127.0.0.1:9092", false, {}, kHigh,
            "Comma-separated NAME://host:port listeners to bind."});
  d.define({"advertised.listeners", T::kList, std::nullopt, false, {}, kHigh,
            "Listeners published to clients; default: listeners (minus controller listeners)."});
  d.define({"listener.security.protocol.map", T::kList,
            "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT",
            false, {}, kLow, "Listener name to security protocol."});
  d.define({"inter.broker.listener.name", T::kString, std::nullopt, false, {}, kMedium,
            "Listener brokers use to talk to each other; default: the first advertised listener."});
  d.define({"controller.listener.names", T::kList, "", false, {}, kHigh,
            "Listeners used by the controller quorum."});
  // SAMSA: with both roles and neither quorum key, the node is its own only
  // voter (Kafka requires one of the two keys).
  d.define({"controller.quorum.voters", T::kList, "", false, {}, kHigh,
            "Static controller quorum as id@host:port,...; empty with controller.quorum.bootstrap.servers empty: "
            "this node alone."});
  d.define({"controller.quorum.bootstrap.servers", T::kList, "", false, {}, kHigh,
            "host:port of controllers to discover a dynamic quorum (KIP-853) from."});
  d.define({"broker.rack", T::kString, std::nullopt, false, {}, kMedium,
            "Rack of this broker; replicas of a partition are placed on different racks while racks remain."});
  d.define({"replica.selector.class", T::kString, std::nullopt, false,
            V::in({kLeaderSelector, kRackAwareReplicaSelector}), kMedium,
            "Which replica a consumer reads from: unset or LeaderSelector, the leader; RackAwareReplicaSelector, "
            "a replica on the consumer's client.rack (KIP-392)."});
  d.define({"controller.quorum.election.timeout.ms", T::kInt, "1000", false, V::at_least(1), kHigh,
            "Raft election timeout."});
  d.define({"controller.quorum.fetch.timeout.ms", T::kInt, "2000", false, V::at_least(1), kHigh,
            "Raft fetch timeout before a follower starts an election."});
  d.define({"controller.quorum.election.backoff.max.ms", T::kInt, "1000", false, V::at_least(1), kHigh,
            "Raft election backoff bound."});
  d.define({"controller.quorum.request.timeout.ms", T::kInt, "2000", false, V::at_least(1), kMedium,
            "Raft request timeout."});
  // The raft transport's connections to the other voters (Kafka's NetworkClient settings).
  d.define({"socket.connection.setup.timeout.ms", T::kLong, "10000", false, V::at_least(0), kMedium,
            "How long a connection to another node may take to establish before it is abandoned."});
  d.define({"reconnect.backoff.ms", T::kLong, "50", false, V::at_least(0), kLow,
            "Wait before reconnecting to a node after a failed connection; doubles per failure."});
  d.define({"reconnect.backoff.max.ms", T::kLong, "1000", false, V::at_least(0), kLow,
            "Upper bound of the reconnect backoff."});
  d.define({"broker.heartbeat.interval.ms", T::kInt, "2000", false, V::at_least(1), kMedium,
            "Broker to controller heartbeat interval."});
  d.define({"broker.session.timeout.ms", T::kInt, "9000", false, V::at_least(1), kMedium,
            "A broker missing heartbeats this long is fenced."});
  // Controlled shutdown (docs/cluster.md): Kafka's keys. Kafka's KRaft broker
  // waits up to 5 minutes for the controller; Samsa bounds the wait by
  // max.retries x retry.backoff.ms (15 s by default), then shuts down anyway.
  d.define({"controlled.shutdown.enable", T::kBoolean, "true", false, {}, kMedium,
            "On SIGTERM, ask the controller to move this broker's leaderships away before stopping."});
  d.define({"controlled.shutdown.max.retries", T::kInt, "3", false, V::at_least(1), kMedium,
            "With retry.backoff.ms, bounds the wait for a controlled shutdown."});
  d.define({"controlled.shutdown.retry.backoff.ms", T::kLong, "5000", false, V::at_least(0), kMedium,
            "With max.retries, bounds the wait for a controlled shutdown."});
  d.define({"metadata.log.dir", T::kString, std::nullopt, false, {}, kHigh,
            "Directory of the metadata log; default: the first log dir."});
  d.define({"metadata.log.segment.bytes", T::kInt, "1073741824", false, V::at_least(12), kHigh,
            "Segment size of the metadata log."});
  d.define({"metadata.max.retention.bytes", T::kLong, "104857600", false, {}, kHigh,
            "Metadata log bytes kept before snapshots allow deletion."});
  d.define({"num.io.threads", T::kInt, "8", false, V::at_least(1), kHigh, "Accepted for compatibility."});
  d.define({"num.network.threads", T::kInt, "3", false, V::at_least(1), kHigh, "Accepted for compatibility."});
  d.define({"num.replica.fetchers", T::kInt, "1", false, V::at_least(1), kHigh,
            "Fetcher connections per source broker; partitions are hashed onto them."});
  d.define({"background.threads", T::kInt, "10", false, V::at_least(1), kHigh, "Accepted for compatibility."});
  d.define({"num.recovery.threads.per.data.dir", T::kInt, "1", false, V::at_least(1), kHigh,
            "Accepted for compatibility."});
}

void define_socket(ConfigDef& d) {
  d.define({"socket.request.max.bytes", T::kInt, "104857600", false, V::at_least(1), kHigh,
            "Largest request accepted; a bigger size prefix closes the connection."});
  // SAMSA: -1 (OS autotuning) by default; Kafka: 102400.
  d.define({"socket.send.buffer.bytes", T::kInt, "-1", false, V::at_least(-1), kHigh,
            "SO_SNDBUF of client connections; -1 = OS default."});
  d.define({"socket.receive.buffer.bytes", T::kInt, "-1", false, V::at_least(-1), kHigh,
            "SO_RCVBUF of client connections; -1 = OS default."});
  d.define({"queued.max.requests", T::kInt, "500", false, V::at_least(1), kHigh,
            "Requests in flight per connection before reading from it pauses."});
  // SAMSA: 104857600 (Kafka: -1, unbounded), see docs/decisions/0011-request-and-response-budgets.md.
  d.define({"queued.max.request.bytes", T::kLong, "104857600", false, {}, kMedium,
            "Bytes of requests being read or handled, all connections together, before reading pauses; <= 0 = "
            "unbounded."});
  // SAMSA only (Kafka answers one request per connection at a time).
  d.define({"queued.max.response.bytes", T::kLong, "67108864", false, {}, kMedium,
            "Unsent response bytes in memory, all connections together, before connections whose responses are "
            "not read stop being read; <= 0 = unbounded."});
  d.define({"queued.max.response.bytes.per.connection", T::kLong, "16777216", false, {}, kMedium,
            "Unsent response bytes of one connection before reading from it pauses; <= 0 = unbounded."});
  d.define({"connections.max.idle.ms", T::kLong, "600000", false, {}, kMedium,
            "Idle connections are closed after this long."});
  d.define({"max.connections", T::kInt, kIntMax, false, V::at_least(0), kMedium,
            "Open connections per broker; more are refused."});
  d.define({"max.connections.per.ip", T::kInt, kIntMax, false, V::at_least(0), kMedium,
            "Accepted for compatibility."});
  d.define({"fetch.max.bytes", T::kInt, "57671680", false, V::at_least(1024), kMedium,
            "Largest fetch response the broker builds."});
  d.define({"request.timeout.ms", T::kInt, "30000", false, V::at_least(0), kMedium, "Accepted for compatibility."});
}

void define_log(ConfigDef& d) {
  d.define({"log.dirs", T::kList, std::nullopt, false, {}, kHigh, "Data directories; default: log.dir."});
  // SAMSA: ./data (Kafka: /tmp/kafka-logs).
  d.define({"log.dir", T::kString, "./data", false, {}, kHigh, "Data directory when log.dirs is unset."});
  d.define({"num.partitions", T::kInt, "1", false, V::at_least(1), kMedium, "Partitions of auto-created topics."});
  d.define({"default.replication.factor", T::kInt, "1", false, V::between(1, 32767), kMedium,
            "Replication factor of auto-created topics."});
  d.define({"auto.create.topics.enable", T::kBoolean, "true", false, {}, kHigh,
            "Create a topic when metadata for an unknown topic is requested."});
  d.define({"delete.topic.enable", T::kBoolean, "true", false, {}, kHigh, "Allow DeleteTopics."});
  // SAMSA: the partition and auto-creation bounds below are Samsa's keys
  // (Kafka hard-codes 10000 partitions per CreateTopics request and has no
  // other bound); docs/operations.md, "Resource budget".
  d.define({"max.partitions.per.request", T::kInt, "10000", false, V::at_least(1), kMedium,
            "Partitions one CreateTopics or CreatePartitions request may add; beyond: POLICY_VIOLATION."});
  d.define({"max.partitions.per.topic", T::kInt, "10000", false, V::at_least(1), kMedium,
            "Partitions one topic may have; beyond: POLICY_VIOLATION."});
  d.define({"max.partitions", T::kInt, "100000", false, V::at_least(1), kMedium,
            "Partitions of all topics in the cluster; beyond: POLICY_VIOLATION."});
  d.define({"auto.create.topics.max.per.request", T::kInt, "100", false, V::at_least(1), kMedium,
            "Topics one Metadata request may auto-create; the others answer LEADER_NOT_AVAILABLE (retry)."});
  d.define({"log.segment.bytes", T::kInt, "1073741824", false, V::at_least(14), kHigh, "Segment file size."});
  d.define({"log.roll.ms", T::kLong, std::nullopt, false, V::at_least(1), kHigh, "Segment age before rolling."});
  d.define({"log.roll.hours", T::kInt, "168", false, V::at_least(1), kHigh, "log.roll.ms in hours."});
  d.define({"log.roll.jitter.ms", T::kLong, std::nullopt, false, V::at_least(0), kHigh, "Jitter on rolling."});
  d.define({"log.roll.jitter.hours", T::kInt, "0", false, V::at_least(0), kHigh, "log.roll.jitter.ms in hours."});
  d.define({"log.retention.ms", T::kLong, std::nullopt, false, V::at_least(-1), kHigh,
            "Age at which segments are deleted; -1 = forever."});
  d.define({"log.retention.minutes", T::kInt, std::nullopt, false, V::at_least(-1), kHigh,
            "log.retention.ms in minutes."});
  d.define({"log.retention.hours", T::kInt, "168", false, V::at_least(-1), kHigh, "log.retention.ms in hours."});
  d.define({"log.retention.bytes", T::kLong, "-1", false, {}, kHigh,
            "Partition size above which old segments are deleted; -1 = unlimited."});
  d.define({"log.retention.check.interval.ms", T::kLong, "300000", false, V::at_least(1), kMedium,
            "How often retention runs."});
  d.define({"producer.id.expiration.check.interval.ms", T::kInt, "600000", false, V::at_least(1), kLow,
            "How often expired producer state is removed."});
  d.define({"log.segment.delete.delay.ms", T::kLong, "60000", false, V::at_least(0), kHigh,
            "Delay before a deleted segment's files are removed."});
  d.define({"log.flush.interval.messages", T::kLong, kLongMax, false, V::at_least(1), kHigh,
            "Messages appended to a partition before an fsync."});
  d.define({"log.flush.interval.ms", T::kLong, std::nullopt, false, V::at_least(0), kHigh,
            "Age of unflushed data before an fsync; null = only by messages."});
  d.define({"log.flush.scheduler.interval.ms", T::kLong, kLongMax, false, {}, kHigh,
            "How often the time-based flush is checked."});
  d.define({"log.flush.offset.checkpoint.interval.ms", T::kInt, "60000", false, V::at_least(0), kHigh,
            "How often recovery points are checkpointed."});
  d.define({"log.index.interval.bytes", T::kInt, "4096", false, V::at_least(0), kMedium,
            "Bytes between offset index entries."});
  d.define({"log.index.size.max.bytes", T::kInt, "10485760", false, V::at_least(4), kMedium,
            "Size of an offset index file."});
  d.define({"log.preallocate", T::kBoolean, "false", false, {}, kMedium, "Preallocate segment files."});
  d.define({"log.cleanup.policy", T::kList, "delete", false, V::in({"delete", "compact"}), kMedium,
            "delete, compact, or both."});
  d.define({"log.message.timestamp.type", T::kString, "CreateTime", false, V::in({"CreateTime", "LogAppendTime"}),
            kMedium, "Which timestamp records keep."});
  d.define({"log.message.timestamp.before.max.ms", T::kLong, kLongMax, false, V::at_least(0), kMedium,
            "How far in the past a CreateTime may be."});
  d.define({"log.message.timestamp.after.max.ms", T::kLong, kLongMax, false, V::at_least(0), kMedium,
            "How far in the future a CreateTime may be."});
  d.define({"message.max.bytes", T::kInt, "1048588", false, V::at_least(0), kHigh, "Largest record batch."});
  // SAMSA extension (Kafka has no such bound): what validating the
  // compressed batches of one produce request may decompress, in total.
  d.define({"produce.request.decompressed.max.bytes", T::kInt, "67108864", false, V::at_least(1), kMedium,
            "Bytes the compressed batches of one produce request may decompress to, in total; beyond it "
            "MESSAGE_TOO_LARGE."});
  d.define({"compression.type", T::kString, "producer", false,
            V::in({"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}), kHigh,
            "Compression of stored batches; producer = keep the producer's."});
  d.define({"min.insync.replicas", T::kInt, "1", false, V::at_least(1), kHigh,
            "Replicas that must have a write for acks=all to succeed."});
  d.define({"unclean.leader.election.enable", T::kBoolean, "false", false, {}, kHigh,
            "Allow a replica outside the ISR to become leader."});
  d.define({"eligible.leader.replicas.enable", T::kBoolean, "true", false, {}, kMedium,
            "Eligible leader replicas (KIP-966, Kafka 4.1's eligible.leader.replicas.version feature): members that "
            "leave the ISR below min.insync.replicas stay electable. Read by the controller."});
  d.define({"auto.leader.rebalance.enable", T::kBoolean, "true", false, {}, kHigh,
            "Move leadership back to preferred replicas."});
  d.define({"leader.imbalance.check.interval.seconds", T::kLong, "300", false, V::at_least(1), kHigh,
            "How often leadership balance is checked."});
  d.define({"leader.imbalance.per.broker.percentage", T::kInt, "10", false, V::between(0, 100), kHigh,
            "The share of a broker's preferred partitions it may not lead before a rebalance."});
}

void define_cleaner(ConfigDef& d) {
  d.define({"log.cleaner.enable", T::kBoolean, "true", false, {}, kMedium, "Run compaction."});
  d.define({"log.cleaner.threads", T::kInt, "1", false, V::at_least(0), kMedium, "Compaction threads."});
  d.define({"log.cleaner.dedupe.buffer.size", T::kLong, "134217728", false, {}, kMedium,
            "Memory for compaction's key map."});
  d.define({"log.cleaner.io.buffer.size", T::kInt, "524288", false, V::at_least(0), kMedium,
            "Compaction I/O buffer."});
  d.define({"log.cleaner.io.max.bytes.per.second", T::kDouble, "1.7976931348623157E308", false, {}, kMedium,
            "Compaction I/O throttle."});
  d.define({"log.cleaner.min.cleanable.ratio", T::kDouble, "0.5", false, V::between(0, 1), kMedium,
            "Dirty ratio that makes a log eligible for compaction."});
  d.define({"log.cleaner.backoff.ms", T::kLong, "15000", false, V::at_least(0), kMedium,
            "Sleep when there is nothing to compact."});
  d.define({"log.cleaner.delete.retention.ms", T::kLong, "86400000", false, V::at_least(0), kMedium,
            "How long tombstones are kept."});
  d.define({"log.cleaner.min.compaction.lag.ms", T::kLong, "0", false, V::at_least(0), kMedium,
            "Minimum age of a record before compaction."});
  d.define({"log.cleaner.max.compaction.lag.ms", T::kLong, kLongMax, false, V::at_least(1), kMedium,
            "Maximum age of uncompacted records."});
}

void define_replication(ConfigDef& d) {
  d.define({"replica.lag.time.max.ms", T::kLong, "30000", false, {}, kHigh,
            "A follower not caught up for this long leaves the ISR."});
  d.define({"replica.fetch.max.bytes", T::kInt, "1048576", false, V::at_least(0), kMedium,
            "Bytes per partition in a follower fetch (at least one batch is sent)."});
  d.define({"replica.fetch.response.max.bytes", T::kInt, "10485760", false, V::at_least(0), kMedium,
            "Bytes per follower fetch response."});
  d.define({"replica.fetch.wait.max.ms", T::kInt, "500", false, {}, kMedium, "How long the leader may hold a follower fetch that has less than replica.fetch.min.bytes."});
  d.define({"replica.fetch.min.bytes", T::kInt, "1", false, {}, kHigh, "Bytes a follower fetch waits for (up to replica.fetch.wait.max.ms)."});
  d.define({"replica.fetch.backoff.ms", T::kInt, "1000", false, V::at_least(0), kMedium,
            "How long a follower waits after a failed fetch (the connection, or that partition)."});
  d.define({"replica.socket.timeout.ms", T::kInt, "30000", false, {}, kHigh, "A follower fetch unanswered this long past replica.fetch.wait.max.ms drops its connection."});
  d.define({"replica.high.watermark.checkpoint.interval.ms", T::kLong, "5000", false, {}, kHigh,
            "How often high watermarks are checkpointed."});
}

void define_groups(ConfigDef& d) {
  d.define({"offsets.topic.num.partitions", T::kInt, "50", false, V::at_least(1), kHigh,
            "Partitions of __consumer_offsets."});
  // Kafka's 3; `samsa server` without a config file runs with the
  // quickstart's 1 (BrokerConfig::single_node_defaults).
  d.define({"offsets.topic.replication.factor", T::kInt, "3", false, V::between(1, 32767), kHigh,
            "Replication factor of __consumer_offsets."});
  d.define({"offsets.topic.segment.bytes", T::kInt, "104857600", false, V::at_least(1), kHigh,
            "Segment size of __consumer_offsets."});
  d.define({"offsets.retention.minutes", T::kInt, "10080", false, V::at_least(1), kHigh,
            "Committed offsets of empty groups are kept this long."});
  d.define({"offsets.retention.check.interval.ms", T::kLong, "600000", false, V::at_least(1), kHigh,
            "How often expired offsets are removed."});
  d.define({"offsets.commit.timeout.ms", T::kInt, "5000", false, V::at_least(1), kHigh,
            "Offset commit replication timeout."});
  d.define({"offsets.load.buffer.size", T::kInt, "5242880", false, V::at_least(1), kHigh,
            "Read buffer when loading offsets."});
  d.define({"group.initial.rebalance.delay.ms", T::kInt, "3000", false, {}, kMedium,
            "Wait for more members before the first rebalance of a new group."});
  d.define({"group.min.session.timeout.ms", T::kInt, "6000", false, {}, kMedium, "Smallest session timeout."});
  d.define({"group.max.session.timeout.ms", T::kInt, "1800000", false, {}, kMedium, "Largest session timeout."});
  d.define({"group.max.size", T::kInt, kIntMax, false, V::at_least(1), kMedium, "Members per group."});
  d.define({"transaction.state.log.num.partitions", T::kInt, "50", false, V::at_least(1), kHigh,
            "Partitions of __transaction_state."});
  // Kafka's 3 and 2; without a config file, the quickstart's 1 and 1.
  d.define({"transaction.state.log.replication.factor", T::kInt, "3", false, V::between(1, 32767), kHigh,
            "Replication factor of __transaction_state."});
  d.define({"transaction.state.log.min.isr", T::kInt, "2", false, V::at_least(1), kHigh,
            "min.insync.replicas of __transaction_state."});
  d.define({"transaction.state.log.segment.bytes", T::kInt, "104857600", false, V::at_least(1), kHigh,
            "Segment size of __transaction_state."});
  d.define({"transactional.id.expiration.ms", T::kInt, "604800000", false, V::at_least(1), kHigh,
            "Idle transactional ids expire after this long."});
  d.define({"transaction.max.timeout.ms", T::kInt, "900000", false, V::at_least(1), kHigh,
            "Largest transaction timeout a producer may ask for."});
  d.define({"producer.id.expiration.ms", T::kInt, "86400000", false, V::at_least(1), kLow,
            "Idle producer ids expire after this long."});
}

// Keys Kafka 3.9 still accepts but ignores (deprecated in 3.x, removed in
// 4.0): defined so a server.properties written for Kafka 3.x starts without
// warnings and DescribeConfigs shows them; nothing reads them.
// docs/configuration.md, "Deprecated keys".
void define_deprecated(ConfigDef& d) {
  d.define({"log.message.format.version", T::kString, "3.0-IV1", false, {}, kMedium,
            "Accepted and ignored (deprecated in Kafka 3.x): the format is always 3.0."});
  d.define({"log.message.downconversion.enable", T::kBoolean, "true", false, {}, kLow,
            "Accepted and ignored (deprecated in Kafka 3.x): old fetch versions are always down-converted."});
  d.define({"inter.broker.protocol.version", T::kString, "3.9-IV0", false, {}, kMedium,
            "Accepted and ignored (deprecated in KRaft mode since Kafka 3.3)."});
}

ConfigDef build() {
  ConfigDef d;
  define_server(d);
  define_socket(d);
  define_log(d);
  define_cleaner(d);
  define_replication(d);
  define_groups(d);
  define_deprecated(d);
  return d;
}

}  // namespace

const ConfigDef& BrokerConfig::definition() {
  static const ConfigDef def = build();
  return def;
}

}  // namespace samsa
