"""The newest API versions (issue 12 item 7), matched to Kafka 4.1:
ApiVersions v4, ListOffsets v7-v10 (max timestamp -3 of KIP-734, earliest
local -4 of KIP-405, latest tiered -5 of KIP-1005), Metadata v13 (top-level
error code, KIP-1102), Produce v13 (topics by id, KIP-516) and Fetch v18
(tagged HighWatermark of KIP-1166). Each is sent as raw bytes (kafka_wire.py,
written from the protocol description, not from Samsa's codec), decoded
completely (every byte consumed) and checked; then the real clients still
round-trip against the same broker.
"""

import socket
import struct
import time


import kafka_wire as kw
from clients import create_topic, kcat_roundtrip

API_LIST_OFFSETS = 2
UNKNOWN_TOPIC_ID = 100
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
INT64_MAX = (1 << 63) - 1


# --- flexible-version encoding (KIP-482) -----------------------------------

def compact_array(items) -> bytes:
    return kw.uvarint(len(items) + 1) + b"".join(items)


def compact_nullable_string(s) -> bytes:
    return b"\x00" if s is None else kw.compact_string(s)


def compact_bytes(b: bytes) -> bytes:
    return kw.uvarint(len(b) + 1) + b


NO_TAGS = kw.uvarint(0)


from kafka_wire import FlexReader  # noqa: E402


def call(bootstrap, api_key, version, body, correlation_id=11):
    """One flexible request (header v2); the response body after its header
    (v1 with tags, except ApiVersions: v0)."""
    host, port = bootstrap.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(kw.request(api_key, version, correlation_id, body, flexible_header=True))
        payload = kw.recv_frame(s, timeout_s=10)
    assert payload is not None, f"api {api_key} v{version}: connection closed"
    r = FlexReader(payload)
    assert r.i32() == correlation_id
    if api_key != kw.API_API_VERSIONS:
        r.tags()
    return r


# --- ApiVersions v4 --------------------------------------------------------

def api_versions_v4(bootstrap):
    body = kw.compact_string("samsa-test") + kw.compact_string("1.0") + NO_TAGS
    r = call(bootstrap, kw.API_API_VERSIONS, 4, body)
    error = r.i16()

    def key():
        k, lo, hi = r.i16(), r.i16(), r.i16()
        r.tags()
        return k, (lo, hi)

    ranges = dict(r.compact_array(key))
    r.i32()  # throttle
    r.tags()
    r.done()
    return error, ranges


# Kafka 4.1's advertised ranges for these APIs, except the minimums Samsa
# keeps for old clients (docs/compatibility.md): Fetch 4-18, ListOffsets 1-10
# in Kafka; Produce and Metadata are advertised from 0 by Kafka 4.x too.
NEWEST = {kw.API_PRODUCE: (0, 13), kw.API_FETCH: (0, 18), API_LIST_OFFSETS: (0, 10),
          kw.API_METADATA: (0, 13), kw.API_API_VERSIONS: (0, 4)}


def test_api_versions_v4_advertises_the_newest_versions(broker):
    error, ranges = api_versions_v4(broker.bootstrap)
    assert error == kw.NONE
    for key, expected in NEWEST.items():
        assert ranges.get(key) == expected, f"api {key}"


# --- ListOffsets v7-v10 ----------------------------------------------------

def list_offsets(bootstrap, topic, timestamp, version):
    partition = struct.pack(">iiq", 0, -1, timestamp) + NO_TAGS
    body = struct.pack(">ib", -1, 0)
    body += compact_array([kw.compact_string(topic) + compact_array([partition]) + NO_TAGS])
    if version >= 10:
        body += struct.pack(">i", 5000)  # TimeoutMs
    body += NO_TAGS
    r = call(bootstrap, API_LIST_OFFSETS, version, body)
    r.i32()  # throttle

    def part():
        index, error, ts, offset, epoch = r.i32(), r.i16(), r.i64(), r.i64(), r.i32()
        r.tags()
        return {"partition": index, "error": error, "timestamp": ts, "offset": offset, "epoch": epoch}

    def topic_entry():
        name = r.compact_string()
        parts = r.compact_array(part)
        r.tags()
        return name, parts

    topics = r.compact_array(topic_entry)
    r.tags()
    r.done()
    assert [t[0] for t in topics] == [topic]
    (result,) = topics[0][1]
    return result


def produce_with_timestamps(bootstrap, topic, batches):
    """confluent-kafka producer, explicit CreateTime timestamps; one flush per
    batch, so each list becomes its own record batch."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1000})
    for batch in batches:
        for i, ts in enumerate(batch):
            producer.produce(topic, key=b"k%d" % i, value=b"v%d" % ts, partition=0, timestamp=ts)
        assert producer.flush(30) == 0


def test_list_offsets_max_timestamp_is_the_record_with_the_largest_timestamp(broker):
    create_topic(broker.bootstrap, "max-ts", 1)
    empty = list_offsets(broker.bootstrap, "max-ts", MAX_TIMESTAMP, 7)
    assert (empty["error"], empty["offset"], empty["timestamp"]) == (kw.NONE, -1, -1)

    base = int(time.time() * 1000) - 60_000
    # Offsets 0-2, 3-5, 6-7. The largest timestamp is at offset 4, in the
    # middle of the second batch (not its first or last record), and it is
    # repeated at offset 5 and 7: Kafka answers the first record holding it.
    produce_with_timestamps(broker.bootstrap, "max-ts", [
        [base + 100, base + 900, base + 300],
        [base + 200, base + 5000, base + 5000],
        [base + 50, base + 5000],
    ])
    for version in (7, 8, 9, 10):
        got = list_offsets(broker.bootstrap, "max-ts", MAX_TIMESTAMP, version)
        assert got["error"] == kw.NONE, version
        assert (got["offset"], got["timestamp"]) == (4, base + 5000), version
        assert got["epoch"] >= 0
    # Before v7 the client cannot ask for it (Kafka's clients never do).
    old = list_offsets(broker.bootstrap, "max-ts", MAX_TIMESTAMP, 6)
    assert old["error"] == kw.UNSUPPORTED_VERSION


def test_list_offsets_earliest_local_and_latest_tiered_without_tiered_storage(broker):
    create_topic(broker.bootstrap, "local", 1)
    produce_with_timestamps(broker.bootstrap, "local", [[int(time.time() * 1000)] * 3])
    # -4 (v8+): no remote storage, so the local log start is the log start.
    for version in (8, 9, 10):
        got = list_offsets(broker.bootstrap, "local", EARLIEST_LOCAL, version)
        assert (got["error"], got["offset"], got["timestamp"]) == (kw.NONE, 0, -1)
    assert list_offsets(broker.bootstrap, "local", EARLIEST_LOCAL, 7)["error"] == kw.UNSUPPORTED_VERSION
    # -5 (v9+, KIP-1005): nothing tiered, Kafka answers offset -1.
    got = list_offsets(broker.bootstrap, "local", LATEST_TIERED, 9)
    assert (got["error"], got["offset"], got["timestamp"]) == (kw.NONE, -1, -1)
    assert list_offsets(broker.bootstrap, "local", LATEST_TIERED, 8)["error"] == kw.UNSUPPORTED_VERSION
    latest = list_offsets(broker.bootstrap, "local", -1, 10)
    assert (latest["error"], latest["offset"]) == (kw.NONE, 3)


# --- Metadata v13 ----------------------------------------------------------

def metadata_v13(bootstrap, topic):
    body = compact_array([b"\x00" * 16 + kw.compact_string(topic) + NO_TAGS])
    body += b"\x00\x00" + NO_TAGS  # no auto-creation, no authorized operations
    r = call(bootstrap, kw.API_METADATA, 13, body)
    r.i32()  # throttle

    def broker_entry():
        node, host, port, rack = r.i32(), r.compact_string(), r.i32(), r.compact_string()
        r.tags()
        return node, host, port, rack

    def partition():
        error, index, leader, epoch = r.i16(), r.i32(), r.i32(), r.i32()
        replicas = r.compact_array(r.i32)
        isr = r.compact_array(r.i32)
        offline = r.compact_array(r.i32)
        r.tags()
        return {"error": error, "index": index, "leader": leader, "replicas": replicas, "isr": isr,
                "offline": offline}

    def topic_entry():
        error, name, topic_id, internal = r.i16(), r.compact_string(), r.uuid(), r.i8()
        parts = r.compact_array(partition)
        r.i32()  # authorized operations
        r.tags()
        return {"error": error, "name": name, "id": topic_id, "internal": internal, "partitions": parts}

    brokers = r.compact_array(broker_entry)
    r.compact_string()  # cluster id
    r.i32()  # controller
    topics = r.compact_array(topic_entry)
    top_level_error = r.i16()  # v13+ (KIP-1102)
    r.tags()
    r.done()
    return brokers, topics, top_level_error


def topic_id_of(bootstrap, topic):
    _, topics, _ = metadata_v13(bootstrap, topic)
    assert topics[0]["error"] == kw.NONE
    return topics[0]["id"]


def test_metadata_v13_has_the_top_level_error_code(broker):
    create_topic(broker.bootstrap, "meta13", 2)
    brokers, topics, error = metadata_v13(broker.bootstrap, "meta13")
    assert error == kw.NONE
    assert [b[2] for b in brokers] == [broker.port]
    (topic,) = topics
    assert (topic["error"], topic["name"]) == (kw.NONE, "meta13")
    assert topic["id"] != b"\x00" * 16
    assert sorted(p["index"] for p in topic["partitions"]) == [0, 1]


# --- Produce v13 (by topic id) and Fetch v18 -------------------------------

def produce_v13(bootstrap, topic_id, batch):
    partition = struct.pack(">i", 0) + compact_bytes(batch) + NO_TAGS
    body = b"\x00" + struct.pack(">hi", -1, 10000)  # no transactional id, acks -1
    body += compact_array([topic_id + compact_array([partition]) + NO_TAGS]) + NO_TAGS
    r = call(bootstrap, kw.API_PRODUCE, 13, body)

    def part():
        index, error, base, append_time, log_start = r.i32(), r.i16(), r.i64(), r.i64(), r.i64()
        r.compact_array(lambda: (r.i32(), r.compact_string(), r.tags()))
        message = r.compact_string()
        r.tags()
        return {"index": index, "error": error, "base_offset": base, "message": message,
                "log_start": log_start}

    def topic_entry():
        tid = r.uuid()
        parts = r.compact_array(part)
        r.tags()
        return tid, parts

    topics = r.compact_array(topic_entry)
    r.i32()  # throttle
    r.tags()
    r.done()
    ((tid, (result,)),) = topics
    assert tid == topic_id
    return result


def fetch_v18(bootstrap, topic_id, offset):
    # The partition carries the v18 tag 1 (HighWatermark, KIP-1166) as a
    # follower would; a consumer leaves it out, the broker must accept both.
    hw_tag = kw.uvarint(1) + kw.uvarint(1) + kw.uvarint(8) + struct.pack(">q", INT64_MAX)
    partition = struct.pack(">iiqiqi", 0, -1, offset, -1, -1, 1 << 20) + hw_tag
    body = struct.pack(">iiibii", 100, 1, 1 << 20, 0, 0, -1)
    body += compact_array([topic_id + compact_array([partition]) + NO_TAGS])
    body += compact_array([]) + kw.compact_string("") + NO_TAGS
    r = call(bootstrap, kw.API_FETCH, 18, body)
    r.i32()  # throttle
    top_error, _session = r.i16(), r.i32()

    def part():
        index, error, hw, lso, log_start = r.i32(), r.i16(), r.i64(), r.i64(), r.i64()
        r.compact_array(lambda: (r.i64(), r.i64(), r.tags()))
        r.i32()  # preferred read replica
        records = r.compact_bytes()
        r.tags()
        return {"index": index, "error": error, "hw": hw, "records": records or b""}

    def topic_entry():
        tid = r.uuid()
        parts = r.compact_array(part)
        r.tags()
        return tid, parts

    topics = r.compact_array(topic_entry)
    r.tags()
    r.done()
    assert top_error == kw.NONE
    ((tid, (result,)),) = topics
    assert tid == topic_id
    return result


def batch_values(records: bytes):
    """(base offset, [values]) of the uncompressed batches in a fetch answer."""
    out, first, pos = [], None, 0
    while pos + 61 <= len(records):
        base, length = struct.unpack(">qi", records[pos:pos + 12])
        batch = records[pos:pos + 12 + length]
        first = base if first is None else first
        count = struct.unpack(">i", batch[57:61])[0]
        r = FlexReader(batch[61:])
        for _ in range(count):
            size = zigzag(r)
            record = FlexReader(r.take(size))
            record.i8()
            zigzag(record), zigzag(record)  # timestamp and offset deltas
            key_len = zigzag(record)
            record.take(max(key_len, 0))
            value_len = zigzag(record)
            out.append(record.take(value_len))
        pos += 12 + length
    return first, out


def zigzag(r):
    n = r.uvarint()
    return (n >> 1) ^ -(n & 1)


def test_produce_v13_by_topic_id_and_fetch_v18(broker):
    create_topic(broker.bootstrap, "by-id", 1)
    topic_id = topic_id_of(broker.bootstrap, "by-id")
    batch = kw.record_batch([(b"a", b"one"), (b"b", b"two")], int(time.time() * 1000))
    first = produce_v13(broker.bootstrap, topic_id, batch)
    assert (first["error"], first["base_offset"]) == (kw.NONE, 0)
    second = produce_v13(broker.bootstrap, topic_id, kw.record_batch([(b"c", b"three")], int(time.time() * 1000)))
    assert (second["error"], second["base_offset"]) == (kw.NONE, 2)

    fetched = fetch_v18(broker.bootstrap, topic_id, 0)
    assert (fetched["error"], fetched["hw"]) == (kw.NONE, 3)
    assert batch_values(fetched["records"]) == (0, [b"one", b"two", b"three"])

    unknown = produce_v13(broker.bootstrap, b"\x42" * 16, batch)
    assert unknown["error"] == UNKNOWN_TOPIC_ID
    assert fetch_v18(broker.bootstrap, topic_id, 3)["records"] == b""


# --- real clients against the same broker ----------------------------------

def test_real_clients_still_round_trip(broker):
    create_topic(broker.bootstrap, "kcat-newest", 2)
    kcat_roundtrip(broker.bootstrap, "kcat-newest", 2, "lz4", per_partition=50)

    create_topic(broker.bootstrap, "py-newest", 1)
    from kafka import KafkaConsumer, KafkaProducer
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    for i in range(20):
        producer.send("py-newest", b"kp-%d" % i, partition=0)
    producer.flush(30)
    producer.close(10)
    from confluent_kafka import Consumer
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "newest",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(["py-newest"])
    got, deadline = [], time.monotonic() + 30
    try:
        while len(got) < 20 and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is not None and not msg.error():
                got.append(msg.value())
    finally:
        consumer.close()
    assert got == [b"kp-%d" % i for i in range(20)]

    kp = KafkaConsumer("py-newest", bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                       consumer_timeout_ms=10000)
    try:
        values = [m.value for _, m in zip(range(20), kp)]
    finally:
        kp.close()
    assert values == [b"kp-%d" % i for i in range(20)]
