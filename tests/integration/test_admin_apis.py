"""Authorized operations and the log-dir admin API against a real broker
(issue 12, items 5 and 8), matched against Kafka 4.x's behaviour:

- raw wire (kafka_wire.py, independent of Samsa's codec), decoded
  completely: no Debian client shows these. confluent-kafka 1.7.0 has no
  describe_consumer_groups/describe_topics/describe_cluster and no log-dir
  call; kafka-python 2.0.2's describe_consumer_groups(
  include_authorized_operations=True) sends DescribeGroups v3 but decodes
  the answer with the v2 schema (its DescribeGroupsRequest_v3.RESPONSE_TYPE
  is DescribeGroupsResponse_v2), so it always reports None; and it has no
  describe_log_dirs.
- Authorized operations: Metadata v8 (include_topic / include_cluster) and
  DescribeGroups v3: without an authorizer Kafka answers every operation
  AclEntry.supportedOperations(TOPIC / CLUSTER / GROUP) lists, and
  INT32_MIN when not asked.
- DescribeLogDirs v1 and v4 (flexible): ReplicaManager.describeLogDirs.
"""

import os
import socket
import struct

from confluent_kafka import Producer

import kafka_wire
from kafka_wire import roundtrip
from clients import create_topic

TIMEOUT_S = 30
API_METADATA, API_DESCRIBE_GROUPS, API_DESCRIBE_LOG_DIRS = 3, 15, 35
NOT_REQUESTED = -2147483648

# Kafka's AclOperation codes, one bit each (Utils.to32BitField).
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12


def bits(*ops):
    return sum(1 << op for op in set(ops))


# AclEntry.supportedOperations(ResourceType) of Kafka 4.x.
TOPIC_OPS = bits(READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS)
GROUP_OPS = bits(READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS)
CLUSTER_OPS = bits(CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER,
                   DESCRIBE)


from kafka_wire import FlexReader  # noqa: E402



def produce(bootstrap, topic, partition, values):
    producer = Producer({"bootstrap.servers": bootstrap})
    for v in values:
        producer.produce(topic, value=v, partition=partition)
    assert producer.flush(TIMEOUT_S) == 0, "unacknowledged records"


# ---------------------------------------------------------------- item 5: authorized operations

def metadata_v8(broker, topics, include_cluster, include_topic):
    """(cluster_authorized_operations, {topic: (error, topic_authorized_operations)})."""
    body = struct.pack(">i", len(topics)) + b"".join(kafka_wire.string(t) for t in topics)
    body += struct.pack(">???", False, include_cluster, include_topic)
    r = FlexReader(roundtrip(broker, kafka_wire.request(API_METADATA, 8, 3, body)))
    assert r.i32() == 3
    r.i32()  # throttle
    for _ in range(r.i32()):
        r.i32(), r.string(), r.i32(), r.string()  # node, host, port, rack
    r.string(), r.i32()  # cluster id, controller
    result = {}
    for _ in range(r.i32()):
        error, name, _internal = r.i16(), r.string(), r.boolean()
        for _ in range(r.i32()):
            r.i16(), r.i32(), r.i32(), r.i32()  # error, index, leader, epoch
            for _ in range(3):  # replicas, isr, offline
                for _ in range(r.i32()):
                    r.i32()
        result[name] = (error, r.i32())
    cluster_ops = r.i32()
    assert r.pos == len(r.data), "trailing bytes in the Metadata response"
    return cluster_ops, result


def test_metadata_authorized_operations_when_asked(broker):
    create_topic(broker.bootstrap, "ops", 1)
    cluster_ops, topics = metadata_v8(broker, ["ops", "missing"], include_cluster=True, include_topic=True)
    assert cluster_ops == CLUSTER_OPS
    assert topics["ops"] == (0, TOPIC_OPS)
    # Kafka sets the field on error topics too (UNKNOWN_TOPIC_OR_PARTITION 3).
    assert topics["missing"] == (3, TOPIC_OPS)


def test_metadata_authorized_operations_not_asked(broker):
    create_topic(broker.bootstrap, "ops", 1)
    cluster_ops, topics = metadata_v8(broker, ["ops"], include_cluster=False, include_topic=False)
    assert cluster_ops == NOT_REQUESTED
    assert topics["ops"] == (0, NOT_REQUESTED)


def describe_groups_v3(broker, group, include):
    """(error, state, authorized_operations) of DescribeGroups v3."""
    body = struct.pack(">i", 1) + kafka_wire.string(group) + struct.pack(">?", include)
    r = FlexReader(roundtrip(broker, kafka_wire.request(API_DESCRIBE_GROUPS, 3, 6, body)))
    assert r.i32() == 6
    r.i32()  # throttle
    assert r.i32() == 1
    error, group_id, state, _ptype, _proto = r.i16(), r.string(), r.string(), r.string(), r.string()
    assert group_id == group
    assert r.i32() == 0  # no members
    ops = r.i32()
    assert r.pos == len(r.data), "trailing bytes in the DescribeGroups response"
    return error, state, ops


def test_describe_groups_authorized_operations(broker):
    # An unknown group is described as Dead without error, so it gets the field.
    assert describe_groups_v3(broker, "no-such-group", True) == (0, "Dead", GROUP_OPS)
    assert describe_groups_v3(broker, "no-such-group", False) == (0, "Dead", NOT_REQUESTED)


# ---------------------------------------------------------------- item 8: DescribeLogDirs

def describe_log_dirs_v1(broker, topics):
    """topics: None (all) or {topic: [partitions]}.
    [(error, log_dir, {topic: {partition: (size, lag, is_future)}})]"""
    if topics is None:
        body = struct.pack(">i", -1)
    else:
        body = struct.pack(">i", len(topics))
        for name, partitions in topics.items():
            body += kafka_wire.string(name) + struct.pack(">i", len(partitions))
            body += b"".join(struct.pack(">i", p) for p in partitions)
    r = FlexReader(roundtrip(broker, kafka_wire.request(API_DESCRIBE_LOG_DIRS, 1, 4, body)))
    assert r.i32() == 4
    assert r.i32() == 0  # throttle
    results = []
    for _ in range(r.i32()):
        error, log_dir, by_topic = r.i16(), r.string(), {}
        for _ in range(r.i32()):
            name, partitions = r.string(), {}
            for _ in range(r.i32()):
                index, size, lag, future = r.i32(), r.i64(), r.i64(), r.boolean()
                partitions[index] = (size, lag, future)
            by_topic[name] = partitions
        results.append((error, log_dir, by_topic))
    assert r.pos == len(r.data), "trailing bytes in the DescribeLogDirs v1 response"
    return results


def describe_log_dirs_v4(broker, topics):
    """As describe_log_dirs_v1 (topics a dict), with the v4 fields:
    (top error, [(error, log_dir, by_topic, total_bytes, usable_bytes)])."""
    body = kafka_wire.uvarint(len(topics) + 1)
    for name, partitions in topics.items():
        body += kafka_wire.compact_string(name) + kafka_wire.uvarint(len(partitions) + 1)
        body += b"".join(struct.pack(">i", p) for p in partitions) + kafka_wire.uvarint(0)
    body += kafka_wire.uvarint(0)
    payload = kafka_wire.request(API_DESCRIBE_LOG_DIRS, 4, 5, body, flexible_header=True)
    r = FlexReader(roundtrip(broker, payload))
    assert r.i32() == 5
    r.no_tags()  # response header v1
    assert r.i32() == 0  # throttle
    top_error = r.i16()
    results = []
    for _ in range(r.compact_count()):
        error, log_dir, by_topic = r.i16(), r.compact_string(), {}
        for _ in range(r.compact_count()):
            name, partitions = r.compact_string(), {}
            for _ in range(r.compact_count()):
                index, size, lag, future = r.i32(), r.i64(), r.i64(), r.boolean()
                r.no_tags()
                partitions[index] = (size, lag, future)
            r.no_tags()
            by_topic[name] = partitions
        total, usable = r.i64(), r.i64()
        r.no_tags()
        results.append((error, log_dir, by_topic, total, usable))
    r.no_tags()
    assert r.pos == len(r.data), "trailing bytes in the DescribeLogDirs v4 response"
    return top_error, results


def segment_bytes(data_dir, topic, partition):
    d = os.path.join(data_dir, f"{topic}-{partition}")
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".log"))


def test_describe_log_dirs_all_partitions_v1(broker):
    create_topic(broker.bootstrap, "dirs", 2)
    produce(broker.bootstrap, "dirs", 0, [b"x" * 100] * 20)
    [(error, log_dir, by_topic)] = describe_log_dirs_v1(broker, None)
    assert error == 0
    assert log_dir == os.path.abspath(broker.data_dir)
    size0 = segment_bytes(broker.data_dir, "dirs", 0)
    assert size0 > 2000
    assert by_topic["dirs"] == {0: (size0, 0, False), 1: (0, 0, False)}
    assert "__cluster_metadata" not in by_topic


def test_describe_log_dirs_listed_partitions_v4(broker):
    create_topic(broker.bootstrap, "dirs", 2)
    create_topic(broker.bootstrap, "other", 1)
    produce(broker.bootstrap, "dirs", 1, [b"y" * 50] * 10)
    top_error, [(error, log_dir, by_topic, total, usable)] = describe_log_dirs_v4(
        broker, {"dirs": [1], "missing": [0]})
    assert (top_error, error) == (0, 0)
    assert log_dir == os.path.abspath(broker.data_dir)
    # Only the listed partition; a topic with a log here but none listed
    # ("other") still appears, empty, as in Kafka; an unknown one does not.
    assert by_topic == {"dirs": {1: (segment_bytes(broker.data_dir, "dirs", 1), 0, False)}, "other": {}}
    fs = os.statvfs(broker.data_dir)
    assert total == fs.f_blocks * fs.f_frsize
    assert 0 < usable <= total


def test_describe_log_dirs_advertised_v1_to_v4(broker):
    with socket.create_connection((broker.host, broker.port), timeout=TIMEOUT_S) as s:
        s.sendall(kafka_wire.api_versions_v0(1))
        _, error, versions = kafka_wire.parse_api_versions_v0(kafka_wire.recv_frame(s, TIMEOUT_S))
    assert error == 0
    assert versions[API_DESCRIBE_LOG_DIRS] == (1, 4)


# ---------------------------------------------------------------- item 8: DescribeTopicPartitions

API_DESCRIBE_TOPIC_PARTITIONS = 75


def describe_topic_partitions_v0(broker, topics, limit, cursor=None):
    """([(error, name, is_internal, [partition indexes], authorized_ops)], next_cursor)."""
    body = kafka_wire.uvarint(len(topics) + 1)
    body += b"".join(kafka_wire.compact_string(t) + kafka_wire.uvarint(0) for t in topics)
    body += struct.pack(">i", limit)
    if cursor is None:
        body += struct.pack(">b", -1)
    else:
        body += struct.pack(">b", 1) + kafka_wire.compact_string(cursor[0]) + struct.pack(">i", cursor[1])
        body += kafka_wire.uvarint(0)
    body += kafka_wire.uvarint(0)
    payload = kafka_wire.request(API_DESCRIBE_TOPIC_PARTITIONS, 0, 8, body, flexible_header=True)
    r = FlexReader(roundtrip(broker, payload))
    assert r.i32() == 8
    r.no_tags()
    assert r.i32() == 0  # throttle
    topics_out = []
    for _ in range(r.compact_count()):
        error, name = r.i16(), r.compact_string()
        r.take(16)  # topic id
        internal, indexes = r.boolean(), []
        for _ in range(r.compact_count()):
            p_error, index, _leader, _epoch = r.i16(), r.i32(), r.i32(), r.i32()
            assert p_error == 0
            for nullable in (False, False, True, True, False):  # replicas, isr, elr, last elr, offline
                n = r.compact_count()
                assert n is not None or nullable
                for _ in range(n or 0):
                    r.i32()
            r.no_tags()
            indexes.append(index)
        ops = r.i32()
        r.no_tags()
        topics_out.append((error, name, internal, indexes, ops))
    marker = r.i8()
    next_cursor = None
    if marker >= 0:
        next_cursor = (r.compact_string(), r.i32())
        r.no_tags()
    r.no_tags()
    assert r.pos == len(r.data), "trailing bytes in the DescribeTopicPartitions response"
    return topics_out, next_cursor


def test_describe_topic_partitions_pages(broker):
    create_topic(broker.bootstrap, "pa", 3)
    create_topic(broker.bootstrap, "pb", 2)
    page, cursor = describe_topic_partitions_v0(broker, ["pb", "pa", "zz-missing"], 4)
    assert page == [(0, "pa", False, [0, 1, 2], TOPIC_OPS), (0, "pb", False, [0], TOPIC_OPS)]
    assert cursor == ("pb", 1)
    page, cursor = describe_topic_partitions_v0(broker, ["pb", "pa", "zz-missing"], 4, cursor)
    assert page == [(0, "pb", False, [1], TOPIC_OPS), (3, "zz-missing", False, [], TOPIC_OPS)]
    assert cursor is None
    # No topics listed: every topic, sorted by name.
    page, cursor = describe_topic_partitions_v0(broker, [], 2000)
    assert [(name, indexes) for _, name, _, indexes, _ in page] == [("pa", [0, 1, 2]), ("pb", [0, 1])]
    assert cursor is None
