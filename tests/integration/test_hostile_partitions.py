"""Hostile requests about partitions and topics (issue 10, items 1, 10, 11),
over raw sockets: one small request must not freeze the broker or eat its
memory. Each attack test checks the broker's answer (Kafka's error code and
a message), that a fresh client is answered within a bound, that the
broker's RSS stays under a bound, and that data produced before reads back
intact (the seeded fixture and check_intact of test_bad_input.py)."""

import socket
import struct
import time
from pathlib import Path

import pytest

import kafka_wire as wire
from clients import create_topic
from harness import Broker
from intact import check_intact, seeded  # noqa: F401  (seeded is a fixture)

API_METADATA = 3
API_CREATE_TOPICS = 19
API_CREATE_PARTITIONS = 37

NONE = 0
LEADER_NOT_AVAILABLE = 5
POLICY_VIOLATION = 44

INT32_MAX = 2**31 - 1
ANSWER_BOUND_S = 2.0           # a fresh ApiVersions after the attack
RSS_BOUND_KB = 200 * 1024      # the broker's VmRSS after the attack

# The 41-byte request of the issue: CreatePartitions v0, correlation id 7,
# client "fuzz", topic "grow" to 2^31-1 partitions, no assignments, timeout
# 5000 ms, validate_only true.
HUGE_CREATE_PARTITIONS = bytes.fromhex(
    "000000250025000000000007000466757a7a00000001000467726f777fffffffffffffff0000138801")


def create_partitions_v0(correlation_id, counts, validate_only):
    """counts: [(topic, new total)], no assignments."""
    body = struct.pack(">i", len(counts))
    for topic, count in counts:
        body += wire.string(topic) + struct.pack(">ii", count, -1)
    body += struct.pack(">i?", 5000, validate_only)
    return wire.request(API_CREATE_PARTITIONS, 0, correlation_id, body)


def parse_create_partitions_v0(payload):
    """(correlation_id, [(topic, error_code, error_message)])."""
    r = wire.Reader(payload)
    correlation_id = r.i32()
    r.i32()  # throttle_time_ms
    return correlation_id, [(r.string(), r.i16(), r.string()) for _ in range(r.i32())]


def create_topics_v4(correlation_id, topics, validate_only):
    """topics: [(name, num_partitions)], replication factor 1, no configs."""
    body = struct.pack(">i", len(topics))
    for name, partitions in topics:
        body += wire.string(name) + struct.pack(">ihii", partitions, 1, 0, 0)
    body += struct.pack(">i?", 5000, validate_only)
    return wire.request(API_CREATE_TOPICS, 4, correlation_id, body)


def parse_create_topics_v4(payload):
    """(correlation_id, {name: (error_code, error_message)})."""
    r = wire.Reader(payload)
    correlation_id = r.i32()
    r.i32()  # throttle_time_ms
    results = {}
    for _ in range(r.i32()):
        name = r.string()
        results[name] = (r.i16(), r.string())
    return correlation_id, results


def metadata_v4(correlation_id, topics, allow_auto_topic_creation=True):
    body = struct.pack(">i", len(topics)) + b"".join(wire.string(t) for t in topics)
    body += struct.pack(">?", allow_auto_topic_creation)
    return wire.request(API_METADATA, 4, correlation_id, body)


def parse_metadata_v4(payload):
    """(correlation_id, {topic: (error_code, partition count)})."""
    r = wire.Reader(payload)
    correlation_id = r.i32()
    r.i32()  # throttle_time_ms
    for _ in range(r.i32()):
        r.i32(), r.string(), r.i32(), r.string()  # node_id, host, port, rack
    r.string()  # cluster_id
    r.i32()     # controller_id
    topics = {}
    for _ in range(r.i32()):
        error, name, _internal = r.i16(), r.string(), r.i8()
        partitions = r.i32()
        for _ in range(partitions):
            r.i16(), r.i32(), r.i32()  # error_code, partition_index, leader_id
            for _ in range(2):         # replica_nodes, isr_nodes
                r.take(4 * r.i32())
        topics[name] = (error, partitions)
    return correlation_id, topics


def exchange(broker, frame, timeout_s=30):
    """Sends one request, returns the response payload (None: closed)."""
    with socket.create_connection((broker.host, broker.port), timeout=10) as s:
        s.sendall(frame)
        return wire.recv_frame(s, timeout_s=timeout_s)


def rss_kb(broker):
    for line in Path(f"/proc/{broker.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/PID/status")


def check_unharmed(broker):
    """A fresh client is answered within the bound, memory stayed bounded."""
    started = time.monotonic()
    assert wire.probe_api_versions(broker.host, broker.port, timeout_s=ANSWER_BOUND_S), \
        f"a fresh ApiVersions was not answered within {ANSWER_BOUND_S}s"
    assert time.monotonic() - started < ANSWER_BOUND_S
    assert rss_kb(broker) < RSS_BOUND_KB, f"broker RSS {rss_kb(broker)} kB"


def partition_counts(broker, topics):
    payload = exchange(broker, metadata_v4(9, topics, allow_auto_topic_creation=False))
    assert payload is not None
    _, described = parse_metadata_v4(payload)
    return {name: count for name, (_, count) in described.items()}


# --- item 1: partition counts are bounded before any work -------------------

@pytest.mark.parametrize("validate_only", [True, False])
def test_huge_create_partitions_is_refused(seeded, validate_only):
    create_topic(seeded.bootstrap, "grow", 1)
    frame = HUGE_CREATE_PARTITIONS if validate_only else HUGE_CREATE_PARTITIONS[:-1] + b"\x00"
    assert len(frame) == 41
    payload = exchange(seeded, frame)
    assert payload is not None, "connection closed instead of a CreatePartitions response"
    correlation_id, results = parse_create_partitions_v0(payload)
    assert correlation_id == 7
    assert len(results) == 1
    topic, error, message = results[0]
    assert (topic, error) == ("grow", POLICY_VIOLATION), results
    assert "Excessively large number of partitions per request" in message
    assert "max.partitions.per.request" in message
    check_unharmed(seeded)
    assert partition_counts(seeded, ["grow"]) == {"grow": 1}
    check_intact(seeded)


@pytest.mark.parametrize("validate_only", [True, False])
def test_huge_create_topics_is_refused(seeded, validate_only):
    frame = create_topics_v4(11, [("huge", INT32_MAX)], validate_only)
    payload = exchange(seeded, frame)
    assert payload is not None, "connection closed instead of a CreateTopics response"
    correlation_id, results = parse_create_topics_v4(payload)
    assert correlation_id == 11
    error, message = results["huge"]
    assert error == POLICY_VIOLATION, results
    assert "max.partitions.per.request" in message
    check_unharmed(seeded)
    assert partition_counts(seeded, ["huge"]) == {"huge": 0}
    check_intact(seeded)


@pytest.mark.broker_overrides({"max.partitions.per.request": "10"})
def test_partitions_per_request_count_the_whole_request(seeded):
    # Each topic alone is under the bound; together they are over it, so
    # nothing is created or grown (Kafka refuses the whole request too).
    create_topic(seeded.bootstrap, "g1", 1)
    create_topic(seeded.bootstrap, "g2", 1)
    _, results = parse_create_topics_v4(
        exchange(seeded, create_topics_v4(12, [("a", 6), ("b", 5)], False)))
    assert {name: code for name, (code, _) in results.items()} == {"a": POLICY_VIOLATION, "b": POLICY_VIOLATION}
    _, grown = parse_create_partitions_v0(
        exchange(seeded, create_partitions_v0(13, [("g1", 7), ("g2", 6)], False)))
    assert sorted((name, code) for name, code, _ in grown) == [("g1", POLICY_VIOLATION), ("g2", POLICY_VIOLATION)]
    assert partition_counts(seeded, ["a", "b", "g1", "g2"]) == {"a": 0, "b": 0, "g1": 1, "g2": 1}
    # Within the bound, both succeed.
    _, grown = parse_create_partitions_v0(
        exchange(seeded, create_partitions_v0(14, [("g1", 6), ("g2", 6)], False)))
    assert sorted((name, code) for name, code, _ in grown) == [("g1", NONE), ("g2", NONE)]
    check_intact(seeded)


@pytest.mark.broker_overrides({"max.partitions.per.topic": "8", "max.partitions": "20"})
def test_partitions_per_topic_and_per_cluster(broker):
    _, results = parse_create_topics_v4(exchange(broker, create_topics_v4(15, [("wide", 9), ("t1", 8)], False)))
    assert results["wide"][0] == POLICY_VIOLATION and "max.partitions.per.topic" in results["wide"][1]
    assert results["t1"] == (NONE, None)
    _, grown = parse_create_partitions_v0(exchange(broker, create_partitions_v0(16, [("t1", 9)], True)))
    assert grown[0][1] == POLICY_VIOLATION and "max.partitions.per.topic" in grown[0][2]
    _, results = parse_create_topics_v4(exchange(broker, create_topics_v4(17, [("t2", 8), ("t3", 5)], False)))
    assert results["t2"] == (NONE, None)
    assert results["t3"][0] == POLICY_VIOLATION and "(max.partitions), which has 16" in results["t3"][1]
    assert partition_counts(broker, ["wide", "t1", "t2", "t3"]) == {"wide": 0, "t1": 8, "t2": 8, "t3": 0}


# --- item 10: auto-creation per request, and running out of descriptors -----

class LowFdBroker(Broker):
    """A broker whose RLIMIT_NOFILE is `nofile` (prlimit execs the server,
    so the PID is the broker's)."""

    def __init__(self, *args, nofile, **kwargs):
        super().__init__(*args, **kwargs)
        self.nofile = nofile

    def command(self):
        return ["prlimit", f"--nofile={self.nofile}:{self.nofile}", "--"] + super().command()


@pytest.fixture
def low_fd_broker(request, tmp_path):
    broker = LowFdBroker(tmp_path / "data", tmp_path / "broker.log", nofile=256)
    request.node._samsa_brokers = [broker]  # its log is attached on failure
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()


def metadata_topics(broker, topics, correlation_id):
    payload = exchange(broker, metadata_v4(correlation_id, topics), timeout_s=60)
    assert payload is not None, "connection closed instead of a Metadata response"
    got_id, described = parse_metadata_v4(payload)
    assert got_id == correlation_id
    return described


def test_auto_creation_is_capped_per_request(broker):
    names = [f"auto-{i:03d}" for i in range(150)]
    # The creating call answers LEADER_NOT_AVAILABLE for every topic, as
    # Kafka's does (test_compat_tail.py): the first 100 are created by it,
    # the rest are not, so the next call shows the 100 and creates the rest.
    described = metadata_topics(broker, names, 21)
    assert [described[n][0] for n in names] == [LEADER_NOT_AVAILABLE] * 150
    described = metadata_topics(broker, names, 22)
    assert [described[n] for n in names[:100]] == [(NONE, 1)] * 100
    assert [described[n][0] for n in names[100:]] == [LEADER_NOT_AVAILABLE] * 50
    # The client asks again (LEADER_NOT_AVAILABLE is retriable): now the rest.
    described = metadata_topics(broker, names, 23)
    assert [described[n] for n in names] == [(NONE, 1)] * 150


def test_running_out_of_descriptors_fails_no_metadata_commit(low_fd_broker):
    broker = low_fd_broker
    names = [f"many-{i:03d}" for i in range(300)]
    for attempt in range(10):  # bounded: 100 creations per request
        described = metadata_topics(broker, names, 30 + attempt)
        if all(error != LEADER_NOT_AVAILABLE for error, _ in described.values()):
            break
    log = broker.log_path.read_text(errors="replace")
    assert "metadata commit failed" not in log
    assert broker.running(), "broker died"
    check_unharmed(broker)
    # Every topic exists in the metadata, whether or not its log could be
    # opened with the descriptors left.
    assert partition_counts(broker, names) == {n: 1 for n in names}


# --- item 11: a warning for a listener beyond loopback ----------------------
# The decision is unit-tested (src/server/listener_exposure_test.cc) without
# binding a non-loopback address; here: loopback, the default, stays quiet.

def test_loopback_listener_gets_no_exposure_warning(broker):
    log = broker.log_path.read_text(errors="replace")
    assert "listening on 127.0.0.1" in log
    assert "unauthenticated" not in log
