"""Cluster configuration before the cluster exists (issue 14 items 1 and 5):
`samsa storage format` / `random-uuid` as kafka-storage.sh, `samsa server`
refusing another node's or cluster's log dir and configurations that need
the multi-node quorum, each with its message, and offsets.topic.replication
.factor with Kafka's COORDINATOR_NOT_AVAILABLE while too few brokers exist,
while the single-node default (no config file) keeps groups working.
Every server listens on 127.0.0.1 and is stopped by PID (harness.Broker).
"""

import re
import struct
import time

import pytest
from confluent_kafka import Consumer, Producer

import kafka_wire
from clients import samsa
from cluster_harness import find_coordinator_v1
from harness import HOST, REPO, Broker, BrokerError, free_port

COORDINATOR_NOT_AVAILABLE = 15
UUID = re.compile(r"[A-Za-z0-9_-]{22}")


def write_config(path, settings):
    path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    return path


def combined(tmp_path, node_id=1, data="data", **extra):
    """A combined node of its own static quorum, as config/combined.properties,
    on free loopback ports: (config path, client port)."""
    port, controller_port = free_port(), free_port()
    settings = {
        "process.roles": "broker,controller",
        "node.id": node_id,
        "controller.quorum.voters": f"{node_id}@{HOST}:{controller_port}",
        "listeners": f"PLAINTEXT://{HOST}:{port},CONTROLLER://{HOST}:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        "log.dirs": str(tmp_path / data),
        "offsets.topic.replication.factor": 1,
    }
    settings.update(extra)
    return write_config(tmp_path / f"node{node_id}.properties", settings), port


class FileBroker(Broker):
    """`samsa server --config FILE` with nothing overridden: the file says
    where to listen and store."""

    def __init__(self, tmp_path, config_path, port):
        super().__init__(tmp_path / "unused", tmp_path / "broker.log")
        self.config_path, self.port, self.bootstrap = config_path, port, f"{HOST}:{port}"

    def command(self):
        overrides = [arg for key, value in self.overrides.items() for arg in ("--override", f"{key}={value}")]
        return [self.binary, "server", "--config", str(self.config_path), *overrides]


def start_refused(broker):
    """The server must exit with status 1 while starting; returns its log."""
    try:
        broker.start()
        pytest.fail("samsa server started instead of refusing")
    except BrokerError as error:
        assert "exited with status 1 while starting" in str(error), str(error)
    finally:
        broker.stop()
    return broker.log_tail()


def fmt(config, cluster_id, *flags, check=True):
    return samsa("storage", "format", "--cluster-id", cluster_id, "--config", config, *flags, check=check)


def meta(dir_path):
    lines = (dir_path / "meta.properties").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def test_random_uuid_prints_a_new_cluster_id_each_time():
    ids = {samsa("storage", "random-uuid").stdout.decode().strip() for _ in range(3)}
    assert len(ids) == 3
    assert all(UUID.fullmatch(i) for i in ids), ids


def test_format_writes_every_dir_once_then_refuses(tmp_path):
    cluster = samsa("storage", "random-uuid").stdout.decode().strip()
    config, _ = combined(tmp_path, **{"log.dirs": f"{tmp_path / 'a'},{tmp_path / 'b'}",
                                       "metadata.log.dir": str(tmp_path / "meta")})
    out = fmt(config, cluster).stdout.decode()
    assert out.splitlines() == [f"Formatting data directory {tmp_path / 'a'}",
                                f"Formatting data directory {tmp_path / 'b'}",
                                f"Formatting metadata directory {tmp_path / 'meta'}"], out
    ids = set()
    for d in ("a", "b", "meta"):
        m = meta(tmp_path / d)
        assert (m["version"], m["cluster.id"], m["node.id"]) == ("1", cluster, "1"), m
        ids.add(m["directory.id"])
    assert len(ids) == 3
    again = fmt(config, cluster, check=False)
    assert again.returncode == 1
    assert (f"Log directory {tmp_path / 'a'} is already formatted. Use --ignore-formatted to ignore this "
            "directory and format the others.") in again.stderr.decode()
    ignored = fmt(config, cluster, "--ignore-formatted")
    assert ignored.stdout.decode().strip() == "All of the log directories are already formatted."
    bad = fmt(config, "not-a-uuid", check=False)
    assert bad.returncode == 1
    assert "Cluster ID string not-a-uuid does not appear to be a valid UUID" in bad.stderr.decode()


def test_a_formatted_combined_node_starts_in_its_cluster(tmp_path):
    cluster = samsa("storage", "random-uuid").stdout.decode().strip()
    config, port = combined(tmp_path)
    fmt(config, cluster)
    broker = FileBroker(tmp_path, config, port)
    try:
        broker.start()
        assert f"started in cluster {cluster}" in broker.log_tail()
    finally:
        assert broker.stop() == 0, broker.log_tail()


def test_an_unformatted_quorum_node_is_refused_and_told_to_format(tmp_path):
    config, port = combined(tmp_path)
    log = start_refused(FileBroker(tmp_path, config, port))
    assert (f"No `meta.properties` found in {tmp_path / 'data'} (have you run `samsa storage format` to format "
            "the directory?)") in log, log


def test_another_nodes_dir_is_refused_with_what_to_do(tmp_path):
    cluster = samsa("storage", "random-uuid").stdout.decode().strip()
    config, _ = combined(tmp_path, node_id=1)
    fmt(config, cluster)
    config2, port2 = combined(tmp_path, node_id=2)  # same log.dirs, another node.id
    log = start_refused(FileBroker(tmp_path, config2, port2))
    assert (f"Stored node id 1 doesn't match previous node id 2 in {tmp_path / 'data' / 'meta.properties'}. "
            "If you moved your data, make sure your configured node id matches.") in log, log


def test_another_clusters_dir_is_refused_with_what_to_do(tmp_path):
    first, second = (samsa("storage", "random-uuid").stdout.decode().strip() for _ in range(2))
    config_a, _ = combined(tmp_path, data="a")
    fmt(config_a, first)
    config_b, _ = combined(tmp_path, data="b")
    fmt(config_b, second)
    both, port = combined(tmp_path, **{"log.dirs": f"{tmp_path / 'a'},{tmp_path / 'b'}"})
    log = start_refused(FileBroker(tmp_path, both, port))
    assert (f"Invalid cluster.id in: {tmp_path / 'b' / 'meta.properties'}. Expected {first}, but read "
            f"{second}. This directory belongs to another cluster") in log, log
    assert f"samsa storage format --cluster-id {first} --config FILE" in log, log


def test_a_node_of_a_quorum_of_several_voters_must_be_formatted_first(tmp_path):
    """A node naming other voters joins their cluster (test_cluster_boot.py),
    so it does not make up a cluster id of its own: unformatted, it is
    refused, saying how to format it, as Kafka's is."""
    config, port = combined(tmp_path, **{"controller.quorum.voters": f"1@{HOST}:19301,2@{HOST}:19302"})
    log = start_refused(FileBroker(tmp_path, config, port))
    assert "have you run `samsa storage format` to format the directory?" in log, log
    assert "every node of one cluster gets the same id" in log, log


@pytest.mark.parametrize("sample", ["controller", "broker"])
def test_the_role_samples_run_once_formatted(tmp_path, sample):
    """config/controller.properties and config/broker.properties are valid
    Kafka configs (no 'Invalid value' / rule error) with one role each, which
    Samsa runs (docs/cluster.md, "Split roles"); as nodes of a quorum they
    are formatted first, and unformatted are refused saying how. Their
    listener and log dir are moved to a free port and tmp_path."""
    port = free_port()
    listener = "CONTROLLER" if sample == "controller" else "PLAINTEXT"
    broker = FileBroker(tmp_path, REPO / "config" / f"{sample}.properties", port)
    broker.overrides = {"listeners": f"{listener}://{HOST}:{port}",
                        "advertised.listeners": f"{listener}://{HOST}:{port}", "log.dirs": str(tmp_path / "data")}
    log = start_refused(broker)
    assert "is not supported yet" not in log, log
    assert "have you run `samsa storage format` to format the directory?" in log, log


def metadata_has_offsets_topic(broker):
    # Metadata v1 for __consumer_offsets only (v1 does not auto-create).
    body = struct.pack(">i", 1) + kafka_wire.string("__consumer_offsets")
    r = kafka_wire.Reader(kafka_wire.roundtrip(broker, kafka_wire.request(3, 1, 8, body)))
    assert r.i32() == 8
    for _ in range(r.i32()):  # brokers: node, host, port, rack
        r.i32(), r.string(), r.i32(), r.string()
    r.i32()  # controller
    assert r.i32() == 1
    return r.i16() == 0


def produce_one(bootstrap, topic):
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, b"v")
    assert p.flush(30) == 0


def group_assignment(bootstrap, topic, group, timeout_s):
    """Partitions a confluent-kafka group member gets within timeout_s."""
    assigned = []
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "session.timeout.ms": 6000})
    c.subscribe([topic], on_assign=lambda consumer, parts: assigned.extend(parts))
    try:
        deadline = time.monotonic() + timeout_s
        while not assigned and time.monotonic() < deadline:
            c.poll(0.2)
    finally:
        c.close()
    return assigned


def test_offsets_replication_factor_3_on_one_broker_is_coordinator_not_available(make_broker):
    """Kafka's default (3) asked of one broker: __consumer_offsets cannot be
    created, FindCoordinator answers COORDINATOR_NOT_AVAILABLE, a group
    member is never assigned, and the topic is not made with fewer replicas."""
    broker = make_broker({"offsets.topic.replication.factor": 3, "group.initial.rebalance.delay.ms": 0})
    produce_one(broker.bootstrap, "t3")
    for _ in range(2):  # the first request tries to create the topic, the next again
        error, _, node = find_coordinator_v1(broker, "g3")
        assert (error, node) == (COORDINATOR_NOT_AVAILABLE, -1)
    # A bound on absence: 5 s is several FindCoordinator retries of librdkafka.
    assert group_assignment(broker.bootstrap, "t3", "g3", timeout_s=5) == []
    assert not metadata_has_offsets_topic(broker)
    assert "The target replication factor of 3 cannot be reached because only 1 broker(s) are registered" in \
        broker.log_tail()


def test_the_single_node_default_serves_groups(make_broker):
    """No config file (the harness passes overrides only, like `samsa server`
    bare): the quickstart's offsets.topic.replication.factor=1 applies."""
    broker = make_broker({"group.initial.rebalance.delay.ms": 0})
    produce_one(broker.bootstrap, "t1")
    error, _, node = find_coordinator_v1(broker, "g1")
    assert (error, node) == (0, 1)
    assigned = group_assignment(broker.bootstrap, "t1", "g1", timeout_s=30)
    assert [(p.topic, p.partition) for p in assigned] == [("t1", 0)]
    assert metadata_has_offsets_topic(broker)


def test_placement_refusals_reach_clients_in_kafkas_words(make_broker):
    """CreateTopics through confluent-kafka's AdminClient: a replication
    factor above the registered brokers, and a manual assignment naming an
    unknown broker, refused with Kafka's errors and messages; broker.rack is
    registered and shown in Metadata."""
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AdminClient, NewTopic

    broker = make_broker({"broker.rack": "rack-a"})
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})

    def refusal(topic):
        future = admin.create_topics([topic], operation_timeout=10)[topic.topic]
        with pytest.raises(Exception) as raised:
            future.result(timeout=30)
        return raised.value.args[0]

    error = refusal(NewTopic("rf3", num_partitions=1, replication_factor=3))
    assert error.code() == KafkaError.INVALID_REPLICATION_FACTOR, error
    assert error.str() == ("Unable to replicate the partition 3 time(s): The target replication factor of 3 "
                           "cannot be reached because only 1 broker(s) are registered."), error
    error = refusal(NewTopic("manual", num_partitions=1, replica_assignment=[[1, 7]]))
    assert error.code() == KafkaError.INVALID_REPLICA_ASSIGNMENT, error
    assert error.str() == "The manual partition assignment includes broker 7, but no such broker is registered.", error
    admin.create_topics([NewTopic("ok", num_partitions=3, replication_factor=1)])["ok"].result(timeout=30)

    body = struct.pack(">i", 1) + kafka_wire.string("ok")
    r = kafka_wire.Reader(kafka_wire.roundtrip(broker, kafka_wire.request(3, 1, 9, body)))
    assert r.i32() == 9
    assert r.i32() == 1
    assert (r.i32(), r.string(), r.i32(), r.string()) == (1, HOST, broker.port, "rack-a")
