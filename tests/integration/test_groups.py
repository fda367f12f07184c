"""Consumer groups against a real broker, with real clients (issue 4).

librdkafka (through confluent_kafka and its worker processes, group_worker.py)
and kafka-python: rebalances, exactly-once delivery across members in a
stable group, clean leave and kill -9 reassignment without skipped records,
durable offsets across restarts and kill -9, cooperative-sticky, static
membership, and `samsa group describe` lag.
"""

import collections
import os
import signal
import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from clients import samsa

HERE = os.path.dirname(os.path.abspath(__file__))
FAST = {"group.initial.rebalance.delay.ms": "300", "num.partitions": "6"}
PARTITIONS = 6


def produce(bootstrap, topic, per_partition, start=0):
    """Value "p:i" at offset i of partition p (fresh topic: offsets from 0)."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000,
                  "queue.buffering.max.messages": 1000000})
    for i in range(start, start + per_partition):
        for part in range(PARTITIONS):
            while True:
                try:
                    p.produce(topic, value=f"{part}:{i}".encode(), partition=part)
                    break
                except BufferError:
                    p.poll(0.1)
    assert p.flush(60) == 0


def wait_until(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class Worker:
    def __init__(self, bootstrap, topic, group, path, *settings):
        self.path = path
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "group_worker.py"), bootstrap, topic,
                                      group, str(path), *settings], start_new_session=True)

    def lines(self):
        try:
            with open(self.path) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def records(self):
        out = []
        for line in self.lines():
            if line and not line.startswith("#"):
                p, o, v = line.split(" ")
                out.append((int(p), int(o), v))
        return out

    def assignments(self):
        return [line for line in self.lines() if line.startswith("# assigned")]

    def owned(self):
        owned = set()
        for line in self.lines():
            if line.startswith("# assigned ") or line.startswith("# revoked "):
                parts = {int(x) for x in line.split(" ", 2)[2].split(",") if x}
                owned = owned | parts if line.startswith("# assigned") else owned - parts
        return owned

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)

    def kill9(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


@pytest.fixture
def workers():
    started = []
    yield started
    for w in started:
        w.kill9()


def check_values(records):
    for p, o, v in records:
        assert v == f"{p}:{o}", f"record at {p}/{o} has value {v}"


def check_order(worker):
    last = {}
    for p, o, _ in worker.records():
        assert o > last.get(p, -1), f"partition {p} went back from {last.get(p)} to {o}"
        last[p] = o


def all_offsets(per_partition):
    return {(p, o) for p in range(PARTITIONS) for o in range(per_partition)}


@pytest.mark.broker_overrides(FAST)
def test_librdkafka_group_exactly_once_then_leave_and_kill9(broker, tmp_path, workers):
    topic, group = "orders", "g-three"
    produce(broker.bootstrap, topic, 1)  # creates the topic
    for i in range(3):
        workers.append(Worker(broker.bootstrap, topic, group, tmp_path / f"w{i}.txt"))
    wait_until(lambda: sorted(p for w in workers for p in w.owned()) == list(range(PARTITIONS)) and
               all(len(w.owned()) == 2 for w in workers), 60, "3 members with 2 partitions each")

    per = 50000  # 300,000 records
    produce(broker.bootstrap, topic, per - 1, start=1)
    wait_until(lambda: sum(len(w.records()) for w in workers) >= per * PARTITIONS, 120, "300,000 records")
    time.sleep(1)
    records = [r for w in workers for r in w.records()]
    assert len(records) == per * PARTITIONS, "duplicates in a stable group"
    assert {(p, o) for p, o, _ in records} == all_offsets(per)
    check_values(records)
    for w in workers:
        check_order(w)

    # A clean leave: the other two take over its partitions, nothing skipped.
    workers[0].stop()
    wait_until(lambda: sorted(p for w in workers[1:] for p in w.owned()) == list(range(PARTITIONS)), 60,
               "reassignment after a clean leave")
    produce(broker.bootstrap, topic, 1000, start=per)
    per += 1000
    wait_until(lambda: {(p, o) for w in workers for p, o, _ in w.records()} == all_offsets(per), 60,
               "records after the leave")

    # kill -9: after its session timeout the last member owns everything.
    killed_at = time.monotonic()
    workers[1].kill9()
    produce(broker.bootstrap, topic, 1000, start=per)
    per += 1000
    wait_until(lambda: workers[2].owned() == set(range(PARTITIONS)), 60, "reassignment after kill -9")
    assert time.monotonic() - killed_at >= 5.0, "reassigned before the session timeout"
    wait_until(lambda: {(p, o) for w in workers for p, o, _ in w.records()} == all_offsets(per), 60,
               "records after kill -9")
    for w in workers:
        check_order(w)
    check_values([r for w in workers for r in w.records()])

    out = samsa("group", "describe", group, "--bootstrap-server", broker.bootstrap).stdout.decode()
    assert "orders" in out


def committed(bootstrap, group, topic):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        return {tp.partition: tp.offset
                for tp in c.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=20)}
    finally:
        c.close()


@pytest.mark.broker_overrides(FAST)
def test_offsets_survive_restart_and_kill9(broker):
    topic, group = "durable", "g-durable"
    produce(broker.bootstrap, topic, 100)
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "session.timeout.ms": 6000})
    c.subscribe([topic])
    got = 0
    deadline = time.monotonic() + 60
    while got < 600 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got += 1
    c.commit(asynchronous=False)
    expected = committed(broker.bootstrap, group, topic)
    c.close()
    assert expected == {p: 100 for p in range(PARTITIONS)}
    broker.restart()
    assert committed(broker.bootstrap, group, topic) == expected
    # Commit more (a simple commit), then kill -9 right away.
    simple = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    simple.commit(offsets=[TopicPartition(topic, 0, 77)], asynchronous=False)
    simple.close()
    expected[0] = 77
    broker.kill9_restart()
    assert committed(broker.bootstrap, group, topic) == expected
    # A consumer resumes from the committed offsets.
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "session.timeout.ms": 6000})
    c.subscribe([topic])
    seen = []
    deadline = time.monotonic() + 60
    while len(seen) < 600 - sum(expected.values()) and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            seen.append((m.partition(), m.offset()))
    c.close()
    assert min(o for p, o in seen if p == 0) == 77
    assert len(seen) == 600 - sum(expected.values())


@pytest.mark.broker_overrides(FAST)
def test_cooperative_sticky(broker, tmp_path, workers):
    topic, group = "coop", "g-coop"
    produce(broker.bootstrap, topic, 200)
    strategy = "partition.assignment.strategy=cooperative-sticky"
    workers.append(Worker(broker.bootstrap, topic, group, tmp_path / "c0.txt", strategy))
    wait_until(lambda: workers[0].owned() == set(range(PARTITIONS)), 60, "first member owns all")
    workers.append(Worker(broker.bootstrap, topic, group, tmp_path / "c1.txt", strategy))
    wait_until(lambda: len(workers[0].owned()) == 3 and len(workers[1].owned()) == 3, 60, "3 + 3")
    # Incremental: the first member only ever gave partitions up.
    assert not any(line.startswith("# revoked 0,1,2,3,4,5") for line in workers[0].lines())
    produce(broker.bootstrap, topic, 100, start=200)
    wait_until(lambda: {(p, o) for w in workers for p, o, _ in w.records()} == all_offsets(300), 60,
               "all records")


@pytest.mark.broker_overrides(FAST)
def test_static_membership_rejoins_without_rebalance(broker, tmp_path, workers):
    topic, group = "static", "g-static"
    produce(broker.bootstrap, topic, 10)
    settings = ["session.timeout.ms=20000"]
    a = Worker(broker.bootstrap, topic, group, tmp_path / "a.txt", "group.instance.id=a", *settings)
    b = Worker(broker.bootstrap, topic, group, tmp_path / "b.txt", "group.instance.id=b", *settings)
    workers += [a, b]
    wait_until(lambda: len(a.owned()) == 3 and len(b.owned()) == 3, 60, "two static members")
    b_assignments = len(b.assignments())
    a.stop()  # a static member does not leave the group on close
    a2 = Worker(broker.bootstrap, topic, group, tmp_path / "a2.txt", "group.instance.id=a", *settings)
    workers.append(a2)
    wait_until(lambda: len(a2.owned()) == 3, 60, "the static member back")
    time.sleep(2)
    assert len(b.assignments()) == b_assignments, "the other member saw a rebalance"
    assert a2.owned() | b.owned() == set(range(PARTITIONS))


@pytest.mark.broker_overrides(FAST)
def test_kafka_python_group(broker):
    import threading
    from kafka import KafkaConsumer, TopicPartition as KTP
    topic, group = "kp", "g-kafka-python"
    produce(broker.bootstrap, topic, 1)
    seen = collections.Counter()
    owned = {}
    stop = threading.Event()
    lock = threading.Lock()

    def member(i):
        c = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group, auto_offset_reset="earliest",
                          enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=1000)
        while not stop.is_set():
            for tp, msgs in c.poll(timeout_ms=200).items():
                with lock:
                    for m in msgs:
                        seen[(m.partition, m.offset)] += 1
            c.commit()
            owned[i] = {tp.partition for tp in c.assignment()}
        c.close()

    threads = [threading.Thread(target=member, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    try:
        wait_until(lambda: len(owned) == 2 and all(len(a) == 3 for a in owned.values()) and
                   owned[0] | owned[1] == set(range(PARTITIONS)), 60, "two kafka-python members with 3 each")
        produce(broker.bootstrap, topic, 49, start=1)
        wait_until(lambda: len(seen) == 300, 60, "300 records")
        time.sleep(1)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert len(seen) == 300
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group)
    assert [c.committed(KTP(topic, p)) for p in range(PARTITIONS)] == [50] * PARTITIONS
    c.close()


@pytest.mark.broker_overrides(FAST)
def test_confluent_kafka_admin_and_cli_lag(broker):
    topic, group = "lag", "g-lag"
    produce(broker.bootstrap, topic, 20)
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    c.commit(offsets=[TopicPartition(topic, p, 5 + p) for p in range(PARTITIONS)], asynchronous=False)
    c.close()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    listed = admin.list_groups(timeout=10)
    assert group in [g.id for g in listed]
    out = samsa("group", "describe", group, "--bootstrap-server", broker.bootstrap).stdout.decode()
    rows = [line.split() for line in out.splitlines() if line.startswith(group)]
    assert len(rows) == PARTITIONS, out
    for row in rows:
        p = int(row[2])
        assert row[1] == topic and int(row[3]) == 5 + p and int(row[4]) == 20 and int(row[5]) == 15 - p, out
    out = samsa("group", "list", "--bootstrap-server", broker.bootstrap).stdout.decode()
    assert group in out.split()
    # Reset to earliest: dry run changes nothing, --execute does.
    samsa("group", "reset-offsets", group, "--topic", topic, "--to-earliest", "--bootstrap-server",
          broker.bootstrap)
    assert committed(broker.bootstrap, group, topic)[0] == 5
    samsa("group", "reset-offsets", group, "--topic", topic, "--shift-by", "3", "--execute",
          "--bootstrap-server", broker.bootstrap)
    assert committed(broker.bootstrap, group, topic) == {p: 8 + p for p in range(PARTITIONS)}
    samsa("group", "delete", group, "--bootstrap-server", broker.bootstrap)
    assert committed(broker.bootstrap, group, topic) == {p: -1001 for p in range(PARTITIONS)}


# ---------------------------------------------------------------- raw wire: versions no client here sends

def _flex_roundtrip(broker, api_key, version, body):
    import socket
    import kafka_wire
    with socket.create_connection((broker.host, broker.port), timeout=10) as s:
        s.sendall(kafka_wire.request(api_key, version, 7, body, flexible_header=True))
        payload = kafka_wire.recv_frame(s, 10)
    assert payload is not None, "broker closed the connection"
    r = kafka_wire.Reader(payload)
    assert r.i32() == 7 and _uvarint(r) == 0  # response header v1
    return r


def _uvarint(r):
    shift = value = 0
    while True:
        b = r.i8() & 0xFF
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value
        shift += 7


def _cstr(r):
    n = _uvarint(r)
    return None if n == 0 else r.take(n - 1).decode()


def _carray(items):
    import kafka_wire
    return kafka_wire.uvarint(len(items) + 1) + b"".join(items)


@pytest.mark.broker_overrides(FAST)
def test_batched_and_flexible_group_apis(broker):
    import struct
    import kafka_wire
    topic = "wire"
    produce(broker.bootstrap, topic, 3)
    for group, offset in (("wire-a", 1), ("wire-b", 2)):
        c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
        c.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
        c.close()
    cs = kafka_wire.compact_string
    tags = kafka_wire.uvarint(0)

    # FindCoordinator v4: a batch of keys, each answered.
    r = _flex_roundtrip(broker, 10, 4, b"\x00" + _carray([cs("wire-a"), cs("wire-b")]) + tags)
    r.i32()
    found = []
    for _ in range(_uvarint(r) - 1):
        key, node, host, port, err = _cstr(r), r.i32(), _cstr(r), r.i32(), r.i16()
        _cstr(r)
        assert _uvarint(r) == 0
        found.append((key, node, host, port, err))
    assert found == [("wire-a", 1, broker.host, broker.port, 0), ("wire-b", 1, broker.host, broker.port, 0)]

    # ListGroups v4 with a state filter (case-insensitive, as Kafka).
    def listed(states):
        r = _flex_roundtrip(broker, 16, 4, _carray([cs(s) for s in states]) + tags)
        r.i32()
        assert r.i16() == 0
        out = []
        for _ in range(_uvarint(r) - 1):
            out.append((_cstr(r), _cstr(r), _cstr(r)))
            assert _uvarint(r) == 0
        return sorted(out)
    assert listed(["empty"]) == [("wire-a", "", "Empty"), ("wire-b", "", "Empty")]
    assert listed(["Stable"]) == []

    # OffsetFetch v8: two groups in one request, one with all topics (null).
    def group_req(group, topics):
        t = kafka_wire.uvarint(0) if topics is None else _carray(
            [cs(name) + _carray([struct.pack(">i", p) for p in parts]) + tags for name, parts in topics])
        return cs(group) + t + tags
    body = _carray([group_req("wire-a", [(topic, [0, 1])]), group_req("wire-b", None)]) + b"\x00" + tags
    r = _flex_roundtrip(broker, 9, 8, body)
    r.i32()
    groups = {}
    for _ in range(_uvarint(r) - 1):
        gid = _cstr(r)
        parts = {}
        for _ in range(_uvarint(r) - 1):
            name = _cstr(r)
            for _ in range(_uvarint(r) - 1):
                p, off, _epoch, _meta, err = r.i32(), r.i64(), r.i32(), _cstr(r), r.i16()
                assert _uvarint(r) == 0 and err == 0
                parts[(name, p)] = off
            assert _uvarint(r) == 0
        assert r.i16() == 0 and _uvarint(r) == 0
        groups[gid] = parts
    assert groups == {"wire-a": {(topic, 0): 1, (topic, 1): -1}, "wire-b": {(topic, 0): 2}}
