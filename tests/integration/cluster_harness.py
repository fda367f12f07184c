"""Three combined nodes (process.roles=broker,controller) as one cluster, for
the cluster tests (test_cluster_boot.py, test_failover.py): the node
(`ClusterNode`: its config, formatted with one cluster id), the `cluster`
fixture (three nodes started, each stopped with SIGTERM and expected to exit
0), one node's Metadata v4 and DescribeCluster over the wire (kafka_wire.py,
so each node's own image is what is read), and bounded waits on them. A
split cluster too (`running_split_cluster`: controller-only voters and
broker-only nodes, test_split_roles.py).
Every server listens on 127.0.0.1 and is stopped by PID.
"""

import signal
import contextlib
import socket
import struct
import subprocess
import time

import pytest

import kafka_wire
from clients import samsa
from harness import HOST, Broker, free_port

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"  # Kafka's example id (kafka-storage.sh docs)
OTHER_CLUSTER_ID = "q1Sh-9_ISia_zwGINzRvyQ"
TIMEOUT_S = 30
ELECTION_TIMEOUT_MS = 1000  # controller.quorum.election.timeout.ms (Kafka's default)
SESSION_TIMEOUT_MS = 3000   # broker.session.timeout.ms, shorter than Kafka's 9000 to keep the test quick
HEARTBEAT_MS = 500          # broker.heartbeat.interval.ms


class ClusterNode(Broker):
    """One node: `samsa server --config FILE`, formatted first. `roles` is
    process.roles: combined by default; a controller-only node's `port` is
    its controller listener (what the harness probes: it has no other), a
    broker-only node has no controller listener."""

    def __init__(self, tmp_path, node_id, voters_ref, cluster_id=CLUSTER_ID, roles="broker,controller"):
        super().__init__(tmp_path / f"data{node_id}", tmp_path / f"node{node_id}.log")
        self.node_id = node_id
        self.roles = roles
        self.controller_port = self.port if roles == "controller" else free_port()
        self.voters_ref = voters_ref  # the shared list, filled once every node has its ports
        self.config_path = tmp_path / f"node{node_id}.properties"
        self.cluster_id = cluster_id

    def _listeners(self):
        if self.roles == "controller":
            return {"listeners": f"CONTROLLER://{HOST}:{self.controller_port}",
                    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT"}
        broker = {"advertised.listeners": f"PLAINTEXT://{HOST}:{self.port}",
                  "inter.broker.listener.name": "PLAINTEXT",
                  "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                  "broker.rack": f"rack{self.node_id}"}
        if self.roles == "broker":
            return {"listeners": f"PLAINTEXT://{HOST}:{self.port}", **broker}
        return {"listeners": f"PLAINTEXT://{HOST}:{self.port},CONTROLLER://{HOST}:{self.controller_port}", **broker}

    def write_config(self, voters):
        settings = {
            "process.roles": self.roles,
            "node.id": self.node_id,
            "controller.quorum.voters": voters,
            **self._listeners(),
            "controller.listener.names": "CONTROLLER",
            "log.dirs": str(self.data_dir / "logs"),
            "metadata.log.dir": str(self.data_dir / "meta"),
            "controller.quorum.election.timeout.ms": ELECTION_TIMEOUT_MS,
            "broker.session.timeout.ms": SESSION_TIMEOUT_MS,
            "broker.heartbeat.interval.ms": HEARTBEAT_MS,
            "default.replication.factor": 3,
            "offsets.topic.replication.factor": 3,
            "num.partitions": 3,
        }
        self.config_path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        samsa("storage", "format", "--cluster-id", self.cluster_id, "--config", self.config_path)

    def command(self):
        return [self.binary, "server", "--config", str(self.config_path)]


def voters_of(nodes):
    return ",".join(f"{n.node_id}@{HOST}:{n.controller_port}" for n in nodes)


@contextlib.contextmanager
def running_cluster(request, tmp_path, extra=None, size=3):
    """`size` nodes (ids 1..size) started, with `extra` settings appended to
    each config; every node stopped at the end, also on failure."""
    nodes = [ClusterNode(tmp_path, i, None) for i in range(1, size + 1)]
    with _running(request, nodes, voters_of(nodes), extra, [nodes]):
        yield nodes


@contextlib.contextmanager
def running_split_cluster(request, tmp_path, controllers=3, brokers=2, extra=None):
    """A split cluster: `controllers` controller-only voters (ids 1..) and
    `brokers` broker-only nodes (the next ids), with `extra` settings
    appended to each config. Yields (controllers, brokers); every node
    stopped at the end, also on failure: the brokers first (their
    controlled shutdown needs a controller), then the controllers."""
    voters = [ClusterNode(tmp_path, i, None, roles="controller") for i in range(1, controllers + 1)]
    observers = [ClusterNode(tmp_path, controllers + i, None, roles="broker") for i in range(1, brokers + 1)]
    with _running(request, voters + observers, voters_of(voters), extra, [observers, voters]):
        yield voters, observers


@contextlib.contextmanager
def _running(request, nodes, voters, extra, stop_order):
    request.node._samsa_brokers = nodes  # their logs in a failure report (conftest)
    for n in nodes:
        n.write_config(voters)
        if extra:
            with open(n.config_path, "a") as f:
                f.write("".join(f"{k}={v}\n" for k, v in extra.items()))
    statuses = {}
    try:
        for n in nodes:
            n.start()
        yield
    finally:
        for group in stop_order:
            statuses.update(stop_all(group))
    # SIGTERM: every node shuts down cleanly (exit code 0).
    assert all(status == 0 for status in statuses.values()), statuses


@pytest.fixture
def cluster(request, tmp_path):
    with running_cluster(request, tmp_path) as nodes:
        yield nodes


def stop_all(nodes, term_timeout_s=15):
    """SIGTERM to every running node at once, then each waited for: their
    controlled shutdowns overlap (one after another, the last would wait
    for a controller it can no longer reach). {node id: exit status}."""
    running = [n for n in nodes if n.proc is not None and n.proc.poll() is None]
    for n in running:
        n.proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + term_timeout_s
    for n in running:
        try:  # not n.stop(): a second SIGTERM would cut the controlled shutdown short
            n.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            n.proc.kill()
            n.proc.wait(timeout=30)
    return {n.node_id: (n.proc.returncode if n.proc else None) for n in nodes}


# ------------------------------------------------------------ Metadata v4

def metadata_v4(node, topics=None, auto_create=False, timeout_s=10.0):
    """One node's Metadata: {"brokers": {id: (host, port, rack)}, "controller": id,
    "topics": {name: (error, {partition: (error, leader, replicas, isr)})}}."""
    if topics is None:
        body = struct.pack(">i", -1)
    else:
        body = struct.pack(">i", len(topics)) + b"".join(kafka_wire.string(t) for t in topics)
    body += struct.pack(">b", 1 if auto_create else 0)
    payload = kafka_wire.request(kafka_wire.API_METADATA, 4, 7, body)
    with socket.create_connection((node.host, node.port), timeout=timeout_s) as s:
        s.sendall(payload)
        response = kafka_wire.recv_frame(s, timeout_s)
    assert response is not None, f"node {node.node_id} closed the connection"
    r = kafka_wire.Reader(response)
    assert r.i32() == 7
    r.i32()  # throttle_time_ms
    brokers = {}
    for _ in range(r.i32()):
        node_id, host, port, rack = r.i32(), r.string(), r.i32(), r.string()
        brokers[node_id] = (host, port, rack)
    r.string()  # cluster_id
    controller = r.i32()
    topics_out = {}
    for _ in range(r.i32()):
        error, name, _internal = r.i16(), r.string(), r.i8()
        partitions = {}
        for _ in range(r.i32()):
            perror, index, leader = r.i16(), r.i32(), r.i32()
            replicas = [r.i32() for _ in range(r.i32())]
            isr = [r.i32() for _ in range(r.i32())]
            partitions[index] = (perror, leader, replicas, isr)
        topics_out[name] = (error, partitions)
    return {"brokers": brokers, "controller": controller, "topics": topics_out}


def describe_cluster_v0(node, timeout_s=10.0):
    """One node's DescribeCluster (API 60, flexible): (controller_id, {id: (host, port, rack)})."""
    payload = kafka_wire.request(60, 0, 8, b"\x00" + kafka_wire.uvarint(0), flexible_header=True)
    with socket.create_connection((node.host, node.port), timeout=timeout_s) as s:
        s.sendall(payload)
        response = kafka_wire.recv_frame(s, timeout_s)
    assert response is not None, f"node {node.node_id} closed the connection"
    r = kafka_wire.FlexReader(response)
    assert r.i32() == 8
    r.tags()  # response header v1
    r.i32()  # throttle_time_ms
    assert r.i16() == 0
    r.compact_string(), r.compact_string()  # error_message, cluster_id
    controller = r.i32()
    brokers = {}
    for _ in range(r.compact_count()):
        node_id, host, port, rack = r.i32(), r.compact_string(), r.i32(), r.compact_string()
        r.tags()
        brokers[node_id] = (host, port, rack)
    return controller, brokers


def try_metadata(node, topics=None):
    try:
        return metadata_v4(node, topics, timeout_s=2.0)
    except (OSError, AssertionError):
        return None


def wait_until(what, condition, timeout_s=TIMEOUT_S, interval_s=0.05):
    """Polls `condition` until it returns something truthy; that value."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"not within {timeout_s}s: {what}")


def brokers_seen(node):
    m = try_metadata(node)
    return set(m["brokers"]) if m else set()


def wait_for_brokers(nodes, ids, timeout_s=TIMEOUT_S):
    for n in nodes:
        wait_until(f"node {n.node_id} lists brokers {sorted(ids)}", lambda n=n: brokers_seen(n) == set(ids),
                   timeout_s)


def controller_of(nodes):
    """The active controller every live node names (None while they disagree or none is known)."""
    ids = set()
    for n in nodes:
        m = try_metadata(n)
        if m is None:
            return None
        ids.add(m["controller"])
    return ids.pop() if len(ids) == 1 and -1 not in ids else None


def topic_view(node, name):
    m = try_metadata(node, [name])
    if not m or name not in m["topics"]:
        return None
    error, partitions = m["topics"][name]
    return partitions if error == 0 and partitions else None


def same_everywhere(nodes, name):
    views = [topic_view(n, name) for n in nodes]
    if any(v is None for v in views):
        return None
    return views[0] if all(v == views[0] for v in views) else None


def admin_for(nodes):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": ",".join(n.bootstrap for n in nodes)})


def create_with_admin(admin, name, partitions=3, rf=3, timeout_s=TIMEOUT_S, config=None, assignment=None):
    """CreateTopics through confluent-kafka; `assignment` (one replica list
    per partition) instead of a replication factor when given."""
    from confluent_kafka.admin import NewTopic
    if assignment:
        topic = NewTopic(name, num_partitions=len(assignment), replica_assignment=assignment, config=config or {})
    else:
        topic = NewTopic(name, partitions, rf, config=config or {})
    futures = admin.create_topics([topic], operation_timeout=timeout_s, request_timeout=timeout_s)
    futures[name].result(timeout=timeout_s + 5)


def start_creations(admin, names, partitions=2, rf=2, timeout_s=TIMEOUT_S):
    """CreateTopics for `names` in one request, not waited for: the futures."""
    from confluent_kafka.admin import NewTopic
    return admin.create_topics([NewTopic(name, partitions, rf) for name in names],
                               operation_timeout=timeout_s, request_timeout=timeout_s)


def acknowledged_creations(futures, timeout_s=TIMEOUT_S + 5):
    """The names whose creation was acknowledged; a failed one (NOT_CONTROLLER,
    timed out) may or may not have committed, so it is left out."""
    acknowledged = []
    for name, future in futures.items():
        try:
            future.result(timeout=timeout_s)
            acknowledged.append(name)
        except Exception:
            pass
    return acknowledged


# ------------------------------------------------------------ a producer that keeps count

class AckedProducer:
    """confluent-kafka with acks=all writing "record-N" round-robin over
    `partitions` partitions of `topic`, at most `max_unacked` unanswered at
    once: acknowledged (value -> time.monotonic() of its acknowledgement) and
    failed (value -> error). `config`: producer settings on top (e.g.
    max.in.flight.requests.per.connection)."""

    def __init__(self, nodes, topic, partitions=1, max_unacked=20, message_timeout_ms=120000, config=None):
        from confluent_kafka import Producer
        self.producer = Producer({
            "bootstrap.servers": ",".join(n.bootstrap for n in nodes),
            "acks": "all",
            "linger.ms": 0,
            "message.timeout.ms": message_timeout_ms,
            "request.timeout.ms": 5000,
            # librdkafka's own bound on a request (default 60 s). A
            # SIGSTOPped node keeps its sockets open and answers nothing:
            # produce requests to it, and a Metadata request sent there
            # (which holds back every refresh of its topics: "already
            # being requested"), wait this long before the producer looks
            # for a new leader (test_paused_broker, issue 15).
            "socket.timeout.ms": 10000,
            "retry.backoff.ms": 50,
            "topic.metadata.refresh.interval.ms": 1000,
            **(config or {}),
        })
        self.topic, self.partitions, self.max_unacked = topic, partitions, max_unacked
        self.sent = 0
        self.acked = {}
        self.failed = {}

    def unacked(self):
        return self.sent - len(self.acked) - len(self.failed)

    def _report(self, err, msg):
        value = msg.value().decode()
        if err is None:
            self.acked[value] = time.monotonic()
        else:
            self.failed[value] = err

    def step(self):
        """Produces one record if few are unanswered, and serves callbacks."""
        if self.unacked() < self.max_unacked:
            self.producer.produce(self.topic, value=f"record-{self.sent}".encode(),
                                  partition=self.sent % self.partitions, on_delivery=self._report)
            self.sent += 1
        self.producer.poll(0.005)

    def run_until(self, what, condition, timeout_s=90):
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert time.monotonic() < deadline, f"not within {timeout_s}s: {what}"
            self.step()

    def flush(self, timeout_s=TIMEOUT_S):
        remaining = self.producer.flush(timeout_s)
        assert remaining == 0, f"{remaining} records still unacknowledged after {timeout_s}s"

    def longest_gap_after(self, start):
        """The longest time without an acknowledgement from `start` on."""
        times = sorted(t for t in self.acked.values() if t >= start)
        return max((b - a for a, b in zip([start] + times, times)), default=float("inf"))


def read_partition(nodes, topic, partition=0, timeout_s=TIMEOUT_S):
    """Every record of one partition from offset 0 to its high watermark as
    the leader reports it now: [(offset, value)] in offset order."""
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": ",".join(n.bootstrap for n in nodes), "group.id": "read-partition",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    records = []
    try:
        high = wait_until(f"{topic}-{partition}'s high watermark from its leader",
                          lambda: _high_watermark(consumer, TopicPartition(topic, partition)), timeout_s) - 1
        consumer.assign([TopicPartition(topic, partition, 0)])
        deadline = time.monotonic() + timeout_s
        while (not records or records[-1][0] < high - 1) and high > 0:
            assert time.monotonic() < deadline, f"{topic}-{partition}: read {len(records)} of {high} in {timeout_s}s"
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            records.append((msg.offset(), msg.value().decode()))
    finally:
        consumer.close()
    return records


API_FIND_COORDINATOR = 10


def find_coordinator_v1(broker, group):
    """FindCoordinator v1 for a group: (error, message, node id)."""
    body = kafka_wire.string(group) + struct.pack(">b", 0)
    r = kafka_wire.Reader(kafka_wire.roundtrip(broker, kafka_wire.request(API_FIND_COORDINATOR, 1, 7, body)))
    assert r.i32() == 7
    r.i32()  # throttle_time_ms
    error, message, node = r.i16(), r.string(), r.i32()
    return error, message, node


def _high_watermark(consumer, tp):
    """The leader's high watermark + 1 (so that 0 is truthy), or None while
    no leader answers (a partition that just got one)."""
    from confluent_kafka import KafkaException
    try:
        return consumer.get_watermark_offsets(tp, timeout=5)[1] + 1
    except KafkaException:
        return None
