"""The admin APIs against a real broker, driven by real clients:

- python3-confluent-kafka 1.7.0 (librdkafka 2.0.2): CreateTopics v4, DeleteTopics
  v1, DescribeConfigs v1 (with synonyms), AlterConfigs v0, CreatePartitions v0;
- python3-kafka 2.0.2 (KafkaAdminClient): CreateTopics v3, DeleteTopics v3,
  DescribeConfigs v2, AlterConfigs v1, CreatePartitions v1;
- raw wire (kafka_wire.py, independent of Samsa's codec) for what neither
  Python client sends: DeleteRecords v1 and DescribeCluster v0.

Every change must show in the next describe/metadata, take effect on the
partitions (e.g. max.message.bytes refuses a larger record), and survive a
restart. Versions above these are covered in src/broker/admin_handlers_test.cc.
"""

import re
import struct

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer, TopicPartition, Consumer
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

import kafka_wire
from kafka_wire import roundtrip

TIMEOUT_S = 30
DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5


# ---------------------------------------------------------------- helpers

def admin(bootstrap):
    return AdminClient({"bootstrap.servers": bootstrap})


def error_code_of(future):
    """The KafkaError code a failed admin future carries (None if it succeeded)."""
    try:
        future.result(timeout=TIMEOUT_S)
    except KafkaException as e:
        return e.args[0].code()
    return None


def create(bootstrap, name, partitions, config=None, validate_only=False, replication_factor=1):
    """The error code of CreateTopics for one topic (None: created)."""
    client = admin(bootstrap)  # must outlive the future
    futures = client.create_topics(
        [NewTopic(name, partitions, replication_factor, config=config or {})],
        operation_timeout=TIMEOUT_S, request_timeout=TIMEOUT_S, validate_only=validate_only)
    return error_code_of(futures[name])


def delete(bootstrap, name):
    """The error code of DeleteTopics for one topic (None: deleted)."""
    client = admin(bootstrap)
    futures = client.delete_topics([name], operation_timeout=TIMEOUT_S, request_timeout=TIMEOUT_S)
    return error_code_of(futures[name])


def topics(bootstrap):
    """{name: partition count} from a fresh Metadata request."""
    client = admin(bootstrap)
    md = client.list_topics(timeout=TIMEOUT_S)
    return {name: len(t.partitions) for name, t in md.topics.items()}


def describe(bootstrap, kind, name):
    resource = ConfigResource(kind, name)
    client = admin(bootstrap)
    return client.describe_configs([resource], request_timeout=TIMEOUT_S)[resource].result(TIMEOUT_S)


def produce(bootstrap, topic, values, partition=0, config=None):
    """Produces values; returns the delivery errors (empty when all succeeded)."""
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap, **(config or {})})

    def on_delivery(err, _msg):
        if err is not None:
            errors.append(err)

    for v in values:
        producer.produce(topic, value=v, partition=partition, on_delivery=on_delivery)
    assert producer.flush(TIMEOUT_S) == 0, "unacknowledged records"
    return errors


def watermarks(bootstrap, topic, partition=0):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "admin-watermarks"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT_S)
    finally:
        consumer.close()


def partition_dirs(broker, topic):
    return sorted(p.name for p in broker.data_dir.iterdir() if p.name.startswith(f"{topic}-"))


def kafka_python_admin(bootstrap):
    from kafka.admin import KafkaAdminClient
    return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_S * 1000)


# ---------------------------------------------------------------- confluent-kafka (librdkafka)

@pytest.mark.broker_overrides({"log.retention.bytes": "123456789"})
def test_create_with_configs_then_describe_sources(broker):
    assert create(broker.bootstrap, "orders", 3, {"retention.ms": "3600000", "cleanup.policy": "compact"}) is None
    assert topics(broker.bootstrap)["orders"] == 3
    assert len(partition_dirs(broker, "orders")) == 3

    configs = describe(broker.bootstrap, "topic", "orders")
    retention = configs["retention.ms"]
    assert (retention.value, retention.source, retention.is_default) == ("3600000", DYNAMIC_TOPIC_CONFIG, False)
    assert not retention.is_read_only
    # Synonyms (v1): the topic override, then the broker layers of
    # log.retention.ms, which has no default of its own (the hours do): none,
    # as Kafka 3.9's ConfigHelper.configSynonyms lists them. The broker
    # layers in full: test_dynamic_broker_configs.py.
    assert list(retention.synonyms) == ["retention.ms"]
    assert configs["cleanup.policy"].value == "compact"
    # Set in the broker's config: STATIC_BROKER_CONFIG.
    assert (configs["retention.bytes"].value, configs["retention.bytes"].source) == ("123456789", STATIC_BROKER_CONFIG)
    # Set nowhere: Kafka's default.
    segment = configs["segment.bytes"]
    assert (segment.value, segment.source, segment.is_default) == ("1073741824", DEFAULT_CONFIG, True)


def test_create_validate_only_and_errors(broker):
    b = broker.bootstrap
    assert create(b, "dry", 4, {"retention.ms": "1000"}, validate_only=True) is None
    assert "dry" not in topics(b)
    assert partition_dirs(broker, "dry") == []
    # validate_only still validates.
    assert create(b, "dry", 4, {"retention.ms": "soon"}, validate_only=True) == KafkaError.INVALID_CONFIG

    assert create(b, "real", 2) is None
    assert create(b, "real", 2) == KafkaError.TOPIC_ALREADY_EXISTS
    assert create(b, "badcfg", 1, {"retention.ms": "soon"}) == KafkaError.INVALID_CONFIG
    assert create(b, "badcfg", 1, {"no.such.config": "1"}) == KafkaError.INVALID_CONFIG
    assert create(b, "badcfg", 1, {"cleanup.policy": "shred"}) == KafkaError.INVALID_CONFIG
    assert create(b, "toomany", 1, replication_factor=3) == KafkaError.INVALID_REPLICATION_FACTOR
    assert create(b, "bad name!", 1) == KafkaError.TOPIC_EXCEPTION
    listed = topics(b)
    assert "real" in listed and not {"badcfg", "toomany", "bad name!"} & set(listed)


def test_describe_broker_configs(broker):
    configs = describe(broker.bootstrap, "broker", "1")
    log_dirs = configs["log.dirs"]
    assert (log_dirs.value, log_dirs.source) == (str(broker.data_dir), STATIC_BROKER_CONFIG)
    assert log_dirs.is_read_only  # static only (dynamic ones: test_dynamic_broker_configs.py)
    partitions = configs["num.partitions"]
    assert (partitions.value, partitions.source, partitions.is_default) == ("1", DEFAULT_CONFIG, True)
    assert configs["delete.topic.enable"].value == "true"


def test_alter_configs_replaces_overrides_takes_effect_and_persists(broker):
    b = broker.bootstrap
    assert create(b, "alt", 1, {"retention.ms": "1000", "segment.bytes": "1048576"}) is None
    client = admin(b)

    def alter(configs, validate_only=False, kind="topic", name="alt"):
        resource = ConfigResource(kind, name, set_config=configs)
        return client.alter_configs([resource], validate_only=validate_only,
                                    request_timeout=TIMEOUT_S)[resource]

    assert error_code_of(alter({"retention.ms": "5"}, validate_only=True)) is None
    assert describe(b, "topic", "alt")["retention.ms"].value == "1000"
    assert error_code_of(alter({"retention.ms": "later"})) == KafkaError.INVALID_CONFIG
    assert error_code_of(alter({"num.partitions": "3"}, kind="broker", name="1")) == KafkaError.INVALID_REQUEST

    assert error_code_of(alter({"retention.ms": "2000", "max.message.bytes": "1000"})) is None

    def check(configs):
        assert (configs["retention.ms"].value, configs["retention.ms"].source) == ("2000", DYNAMIC_TOPIC_CONFIG)
        assert configs["max.message.bytes"].value == "1000"
        # AlterConfigs replaces the whole set: segment.bytes is back to the default.
        assert (configs["segment.bytes"].value, configs["segment.bytes"].source) == ("1073741824", DEFAULT_CONFIG)

    check(describe(b, "topic", "alt"))
    # It takes effect on the partition: a 5000-byte record is now too large.
    errors = produce(b, "alt", [b"x" * 5000], config={"retries": 0})
    assert [e.code() for e in errors] == [KafkaError.MSG_SIZE_TOO_LARGE]
    assert produce(b, "alt", [b"small"]) == []

    broker.restart()
    check(describe(b, "topic", "alt"))
    errors = produce(b, "alt", [b"y" * 5000], config={"retries": 0})
    assert [e.code() for e in errors] == [KafkaError.MSG_SIZE_TOO_LARGE]


def test_create_partitions(broker):
    b = broker.bootstrap
    assert create(b, "grow", 1) is None
    client = admin(b)

    def grow(count, validate_only=False, assignment=None):
        extra = {"replica_assignment": assignment} if assignment else {}
        return client.create_partitions([NewPartitions("grow", count, **extra)],
                                        validate_only=validate_only, request_timeout=TIMEOUT_S)["grow"]

    assert error_code_of(grow(3, validate_only=True)) is None
    assert topics(b)["grow"] == 1
    assert error_code_of(grow(3)) is None
    assert topics(b)["grow"] == 3
    assert partition_dirs(broker, "grow") == ["grow-0", "grow-1", "grow-2"]
    assert produce(b, "grow", [b"to the new partition"], partition=2) == []
    assert watermarks(b, "grow", 2) == (0, 1)

    assert error_code_of(grow(2)) == KafkaError.INVALID_PARTITIONS
    assert error_code_of(grow(4, assignment=[[1]])) is None
    assert topics(b)["grow"] == 4


def test_delete_topic_then_recreate(broker):
    b = broker.bootstrap
    assert create(b, "gone", 2) is None
    assert produce(b, "gone", [b"v%d" % i for i in range(10)]) == []
    assert watermarks(b, "gone") == (0, 10)

    assert delete(b, "gone") is None
    assert "gone" not in topics(b)
    # The partition logs are gone from disk (renamed *-delete, then removed).
    assert partition_dirs(broker, "gone") == []
    assert not [p for p in broker.data_dir.iterdir() if p.name.endswith("-delete")]

    assert delete(b, "gone") == KafkaError.UNKNOWN_TOPIC_OR_PART
    # The group coordinator's topic is not the client's to delete.
    assert delete(b, "__consumer_offsets") == KafkaError.INVALID_REQUEST
    assert "__consumer_offsets" in topics(b)

    # Same name again: a new, empty topic; still there after a restart.
    assert create(b, "gone", 1) is None
    assert topics(b)["gone"] == 1
    assert watermarks(b, "gone") == (0, 0)
    broker.restart()
    assert topics(b)["gone"] == 1
    assert partition_dirs(broker, "gone") == ["gone-0"]


@pytest.mark.broker_overrides({"delete.topic.enable": "false"})
def test_delete_disabled(broker):
    b = broker.bootstrap
    assert create(b, "kept", 1) is None
    # DeleteTopics v1 predates TOPIC_DELETION_DISABLED: Kafka answers INVALID_REQUEST.
    assert delete(b, "kept") == KafkaError.INVALID_REQUEST
    client = kafka_python_admin(b)
    try:
        with pytest.raises(Exception) as raised:  # kafka-python 2.0.2 has no class for code 73
            client.delete_topics(["kept"], timeout_ms=TIMEOUT_S * 1000)
        assert "error_code=73" in str(raised.value)
    finally:
        client.close()
    assert "kept" in topics(b)


# ---------------------------------------------------------------- kafka-python

def test_kafka_python_admin_round_trip(broker):
    from kafka.admin import ConfigResource as KConfigResource, ConfigResourceType, NewPartitions as KNewPartitions
    from kafka.admin import NewTopic as KNewTopic
    from kafka.errors import InvalidPartitionsError, InvalidConfigurationError, TopicAlreadyExistsError

    b = broker.bootstrap
    client = kafka_python_admin(b)
    try:
        new = KNewTopic("kp", num_partitions=2, replication_factor=1, topic_configs={"retention.ms": "7000"})
        client.create_topics([new], timeout_ms=TIMEOUT_S * 1000, validate_only=True)
        assert "kp" not in client.list_topics()
        client.create_topics([new], timeout_ms=TIMEOUT_S * 1000)
        assert "kp" in client.list_topics()
        with pytest.raises(TopicAlreadyExistsError):
            client.create_topics([new], timeout_ms=TIMEOUT_S * 1000)
        with pytest.raises(InvalidPartitionsError):
            client.create_topics([KNewTopic("kp0", 0, 1)], timeout_ms=TIMEOUT_S * 1000)
        with pytest.raises(InvalidConfigurationError):
            client.create_topics([KNewTopic("kp1", 1, 1, topic_configs={"segment.bytes": "1"})],
                                 timeout_ms=TIMEOUT_S * 1000)

        def topic_entries():
            [response] = client.describe_configs([KConfigResource(ConfigResourceType.TOPIC, "kp")],
                                                 include_synonyms=True)
            [(error, _message, _type, name, entries)] = response.resources
            assert (error, name) == (0, "kp")
            return {e[0]: e for e in entries}  # name -> (name, value, read_only, source, sensitive, synonyms)

        entries = topic_entries()
        assert entries["retention.ms"][1:4] == ("7000", False, DYNAMIC_TOPIC_CONFIG)
        assert [s[0] for s in entries["retention.ms"][5]] == ["retention.ms"]  # see test_create_with_configs...
        assert entries["segment.ms"][3] == DEFAULT_CONFIG

        [response] = client.describe_configs([KConfigResource(ConfigResourceType.BROKER, "1")])
        broker_entries = {e[0]: e for e in response.resources[0][4]}
        assert broker_entries["log.dirs"][1:4] == (str(broker.data_dir), True, STATIC_BROKER_CONFIG)

        response = client.alter_configs([KConfigResource(ConfigResourceType.TOPIC, "kp",
                                                         configs={"retention.ms": "9000"})])
        assert [(r[0], r[3]) for r in response.resources] == [(0, "kp")]
        assert topic_entries()["retention.ms"][1] == "9000"
        response = client.alter_configs([KConfigResource(ConfigResourceType.TOPIC, "kp",
                                                         configs={"retention.ms": "-5"})])
        assert response.resources[0][0] == 40  # INVALID_CONFIG
        assert topic_entries()["retention.ms"][1] == "9000"

        client.create_partitions({"kp": KNewPartitions(total_count=5)}, timeout_ms=TIMEOUT_S * 1000)
        assert topics(b)["kp"] == 5
        with pytest.raises(InvalidPartitionsError):
            client.create_partitions({"kp": KNewPartitions(total_count=5)}, timeout_ms=TIMEOUT_S * 1000)

        client.delete_topics(["kp"], timeout_ms=TIMEOUT_S * 1000)
        assert "kp" not in client.list_topics()
        assert partition_dirs(broker, "kp") == []
    finally:
        client.close()


# ---------------------------------------------------------------- raw wire: DeleteRecords, DescribeCluster

API_DELETE_RECORDS = 21
API_DESCRIBE_CLUSTER = 60



def delete_records_v1(broker, topic, offsets):
    """{partition: (low_watermark, error_code)} for DeleteRecords v1."""
    body = struct.pack(">i", 1) + kafka_wire.string(topic) + struct.pack(">i", len(offsets))
    for partition, offset in offsets.items():
        body += struct.pack(">iq", partition, offset)
    body += struct.pack(">i", 10000)
    r = kafka_wire.Reader(roundtrip(broker, kafka_wire.request(API_DELETE_RECORDS, 1, 5, body)))
    assert r.i32() == 5
    r.i32()  # throttle
    assert r.i32() == 1 and r.string() == topic
    out = {}
    for _ in range(r.i32()):
        partition, low, error = r.i32(), r.i64(), r.i16()
        out[partition] = (low, error)
    assert r.pos == len(r.data)
    return out


def test_delete_records(broker):
    b = broker.bootstrap
    assert create(b, "trim", 1) is None
    assert produce(b, "trim", [b"r%d" % i for i in range(10)]) == []
    assert delete_records_v1(broker, "trim", {0: 4, 9: 0}) == {0: (4, 0), 9: (-1, 3)}  # 3: UNKNOWN_TOPIC_OR_PARTITION
    assert watermarks(b, "trim") == (4, 10)
    assert delete_records_v1(broker, "trim", {0: 11}) == {0: (-1, 1)}  # 1: OFFSET_OUT_OF_RANGE
    assert delete_records_v1(broker, "trim", {0: -1}) == {0: (10, 0)}  # -1: the high watermark
    assert watermarks(b, "trim") == (10, 10)
    broker.restart()  # the log start offset is checkpointed
    assert watermarks(b, "trim") == (10, 10)
    assert produce(b, "trim", [b"after"]) == []
    assert watermarks(b, "trim") == (10, 11)


def read_uvarint(r):
    shift = value = 0
    while True:
        byte = r.take(1)[0]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value
        shift += 7


def read_compact_string(r):
    n = read_uvarint(r)
    return None if n == 0 else r.take(n - 1).decode()


def test_describe_cluster(broker):
    body = b"\x01" + kafka_wire.uvarint(0)  # include authorized operations; no tagged fields
    r = kafka_wire.Reader(roundtrip(broker, kafka_wire.request(API_DESCRIBE_CLUSTER, 0, 9, body,
                                                               flexible_header=True)))
    assert r.i32() == 9 and read_uvarint(r) == 0  # response header v1
    r.i32()  # throttle
    assert r.i16() == 0 and read_compact_string(r) is None
    cluster_id = read_compact_string(r)
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cluster_id)
    assert (broker.data_dir / "meta.properties").read_text().count(cluster_id) == 1
    assert r.i32() == 1  # controller
    brokers = []
    for _ in range(read_uvarint(r) - 1):
        brokers.append((r.i32(), read_compact_string(r), r.i32(), read_compact_string(r)))
        assert read_uvarint(r) == 0
    assert brokers == [(1, broker.host, broker.port, None)]
    assert r.i32() != -2**31  # authorized operations were asked for
    assert read_uvarint(r) == 0 and r.pos == len(r.data)
