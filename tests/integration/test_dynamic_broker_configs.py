"""Dynamic broker configs (KIP-226) against a real broker, matched to Kafka 3.9
(core/src/main/scala/kafka/server/DynamicBrokerConfig.scala, ConfigAdminManager.scala,
ConfigHelper.scala; metadata/.../ConfigurationControlManager.java): issue 12, item 6.

Clients, and what each adds:
- python3-confluent-kafka 1.7.0 (librdkafka 2.0.2): AlterConfigs v0 and DescribeConfigs v1 on
  BROKER "0"; producers that meet the new message.max.bytes. librdkafka refuses a BROKER
  resource with an empty name locally ("Expected an int32 broker_id"), and neither it nor
  this confluent-kafka has IncrementalAlterConfigs (both predate it).
- python3-kafka 2.0.2 (KafkaAdminClient): AlterConfigs v1 on BROKER "" (the cluster-wide
  default), DescribeConfigs v2 with synonyms as raw tuples (every layer, duplicates kept).
- raw wire (kafka_wire.py, independent of Samsa's codec): IncrementalAlterConfigs v0
  (SET, DELETE, APPEND, SUBTRACT), DescribeConfigs v1 on BROKER "", and names no client sends.
"""

import struct

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

import kafka_wire
from kafka_wire import roundtrip

TIMEOUT_S = 30
NODE = "0"
ON_NODE_0 = {"node.id": NODE}
# DescribeConfigs ConfigSource ids.
DYNAMIC_TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 1, 2, 3, 4, 5
API_DESCRIBE_CONFIGS, API_INCREMENTAL_ALTER_CONFIGS = 32, 44
BROKER_TYPE = 4
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
INVALID_REQUEST, INVALID_CONFIG = 42, 40


# ---------------------------------------------------------------- helpers

def admin(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def create_topic(broker, name, config=None):
    client = admin(broker)
    futures = client.create_topics([NewTopic(name, 1, 1, config=config or {})], operation_timeout=TIMEOUT_S,
                                   request_timeout=TIMEOUT_S)
    futures[name].result(TIMEOUT_S)


def alter_legacy(broker, name, configs, validate_only=False):
    """confluent-kafka AlterConfigs on BROKER `name`; (error code, message), (None, None) on success."""
    client = admin(broker)
    resource = ConfigResource(ConfigResource.Type.BROKER, name, set_config=configs)
    future = client.alter_configs([resource], validate_only=validate_only, request_timeout=TIMEOUT_S)[resource]
    try:
        future.result(TIMEOUT_S)
    except KafkaException as e:
        return e.args[0].code(), e.args[0].str()
    return None, None


def describe_node(broker):
    """confluent-kafka DescribeConfigs on BROKER "0": {name: ConfigEntry}."""
    client = admin(broker)
    resource = ConfigResource(ConfigResource.Type.BROKER, NODE)
    return client.describe_configs([resource], request_timeout=TIMEOUT_S)[resource].result(TIMEOUT_S)


def describe_topic(broker, topic):
    client = admin(broker)
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    return client.describe_configs([resource], request_timeout=TIMEOUT_S)[resource].result(TIMEOUT_S)


def kafka_python_admin(broker):
    from kafka.admin import KafkaAdminClient
    return KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=TIMEOUT_S * 1000)


def kafka_python_entries(broker, resource_type, name):
    """kafka-python DescribeConfigs with synonyms on resource_type ("BROKER",
    "TOPIC") `name`: {key: (value, read_only, source, sensitive, [(name, value, source)])}."""
    from kafka.admin import ConfigResource as KResource
    client = kafka_python_admin(broker)
    try:
        [response] = client.describe_configs([KResource(resource_type, name)], include_synonyms=True)
        [(error, _message, _type, _name, entries)] = response.resources
        assert error == 0
        return {e[0]: tuple(e[1:5]) + ([tuple(s) for s in e[5]],) for e in entries}
    finally:
        client.close()


def produce_errors(broker, topic, value):
    """Produces one record (uncompressed); the delivery error codes (empty: delivered)."""
    errors = []
    producer = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": "none",
                         "message.max.bytes": 10_000_000})
    producer.produce(topic, value=value, partition=0,
                     on_delivery=lambda err, _msg: err is not None and errors.append(err.code()))
    assert producer.flush(TIMEOUT_S) == 0, "unacknowledged record"
    return errors


def incremental(broker, name, ops, validate_only=False, version=0):
    """Raw IncrementalAlterConfigs v0 on BROKER `name`, ops [(key, op, value)]: (error code, message)."""
    body = struct.pack(">i", 1) + struct.pack(">b", BROKER_TYPE) + kafka_wire.string(name)
    body += struct.pack(">i", len(ops))
    for key, op, value in ops:
        body += kafka_wire.string(key) + struct.pack(">b", op) + kafka_wire.string(value)
    body += struct.pack(">?", validate_only)
    r = kafka_wire.Reader(roundtrip(broker, kafka_wire.request(API_INCREMENTAL_ALTER_CONFIGS, version, 11, body)))
    assert r.i32() == 11
    r.i32()  # throttle
    assert r.i32() == 1
    error, message, resource_type, resource_name = r.i16(), r.string(), r.i8(), r.string()
    assert (resource_type, resource_name) == (BROKER_TYPE, name)
    assert r.pos == len(r.data)
    return error, message


def describe_raw(broker, name, keys=None):
    """Raw DescribeConfigs v1 (with synonyms) on BROKER `name`:
    (error, message, {key: (value, read_only, source, sensitive, [(name, value, source)])})."""
    body = struct.pack(">i", 1) + struct.pack(">b", BROKER_TYPE) + kafka_wire.string(name)
    if keys is None:
        body += struct.pack(">i", -1)
    else:
        body += struct.pack(">i", len(keys)) + b"".join(kafka_wire.string(k) for k in keys)
    body += struct.pack(">?", True)
    r = kafka_wire.Reader(roundtrip(broker, kafka_wire.request(API_DESCRIBE_CONFIGS, 1, 12, body)))
    assert r.i32() == 12
    r.i32()  # throttle
    assert r.i32() == 1
    error, message, resource_type, resource_name = r.i16(), r.string(), r.i8(), r.string()
    assert (resource_type, resource_name) == (BROKER_TYPE, name)
    entries = {}
    for _ in range(r.i32()):
        key, value, read_only, source, sensitive = r.string(), r.string(), r.i8() == 1, r.i8(), r.i8() == 1
        synonyms = [(r.string(), r.string(), r.i8()) for _ in range(r.i32())]
        entries[key] = (value, read_only, source, sensitive, synonyms)
    assert r.pos == len(r.data)
    return error, message, entries


# ---------------------------------------------------------------- applied at once

@pytest.mark.broker_overrides(ON_NODE_0)
def test_dynamic_message_max_bytes_refuses_a_bigger_record_at_once(broker):
    """A topic without its own max.message.bytes follows the broker's
    message.max.bytes: a record that fitted is refused with MESSAGE_TOO_LARGE
    right after AlterConfigs, without a restart; a topic override still wins
    (precedence: topic > per-broker > cluster default > static > default)."""
    create_topic(broker, "plain")
    create_topic(broker, "own", {"max.message.bytes": "1048588"})
    big = b"x" * 4000
    assert produce_errors(broker, "plain", big) == []

    assert alter_legacy(broker, NODE, {"message.max.bytes": "2000"}) == (None, None)
    assert produce_errors(broker, "plain", big) == [KafkaError.MSG_SIZE_TOO_LARGE]
    assert produce_errors(broker, "plain", b"y" * 100) == []
    assert produce_errors(broker, "own", big) == []

    described = describe_topic(broker, "plain")["max.message.bytes"]
    assert (described.value, described.source) == ("2000", DYNAMIC_BROKER)

    # Deleting the per-broker value gives the default back.
    assert incremental(broker, NODE, [("message.max.bytes", DELETE, None)]) == (0, None)
    assert produce_errors(broker, "plain", big) == []


@pytest.mark.broker_overrides({**ON_NODE_0, "message.max.bytes": "100000"})
def test_cluster_default_beats_static_and_per_broker_beats_both_and_all_survive_a_restart(broker):
    create_topic(broker, "t")
    big = b"z" * 6000
    client = kafka_python_admin(broker)
    try:
        from kafka.admin import ConfigResource as KResource, ConfigResourceType
        # kafka-python sends AlterConfigs v1 for the cluster-wide default ("").
        response = client.alter_configs([KResource(ConfigResourceType.BROKER, "",
                                                   configs={"message.max.bytes": "5000",
                                                            "log.retention.bytes": "1000000"})])
        assert [(r[0], r[3]) for r in response.resources] == [(0, "")]
    finally:
        client.close()
    assert produce_errors(broker, "t", big) == [KafkaError.MSG_SIZE_TOO_LARGE]
    assert incremental(broker, NODE, [("message.max.bytes", SET, "8000")]) == (0, None)
    assert produce_errors(broker, "t", big) == []

    def check():
        entries = describe_node(broker)
        assert (entries["message.max.bytes"].value, entries["message.max.bytes"].source) == ("8000", DYNAMIC_BROKER)
        assert not entries["message.max.bytes"].is_read_only
        assert (entries["log.retention.bytes"].value, entries["log.retention.bytes"].source) == \
            ("1000000", DYNAMIC_DEFAULT)
        # kafka-python keeps every layer of the synonym list, in Kafka's order.
        raw = kafka_python_entries(broker, "BROKER", NODE)
        assert raw["message.max.bytes"][4] == [("message.max.bytes", "8000", DYNAMIC_BROKER),
                                               ("message.max.bytes", "5000", DYNAMIC_DEFAULT),
                                               ("message.max.bytes", "100000", STATIC),
                                               ("message.max.bytes", "1048588", DEFAULT)]
        # The cluster-wide resource lists what is set there, with only that layer.
        error, _message, cluster = describe_raw(broker, "")
        assert error == 0
        assert set(cluster) == {"message.max.bytes", "log.retention.bytes"}
        assert cluster["message.max.bytes"] == ("5000", False, DYNAMIC_DEFAULT, False,
                                                [("message.max.bytes", "5000", DYNAMIC_DEFAULT)])
        topic = describe_topic(broker, "t")
        assert (topic["retention.bytes"].value, topic["retention.bytes"].source) == ("1000000", DYNAMIC_DEFAULT)

    check()
    broker.restart()
    check()  # stored in the metadata log (ConfigRecord, resource type BROKER)
    assert produce_errors(broker, "t", big) == []
    assert produce_errors(broker, "t", b"z" * 9000) == [KafkaError.MSG_SIZE_TOO_LARGE]


@pytest.mark.broker_overrides(ON_NODE_0)
def test_legacy_alter_configs_replaces_the_whole_set_and_validate_only_changes_nothing(broker):
    assert incremental(broker, NODE, [("log.retention.bytes", SET, "123"), ("log.segment.bytes", SET, "2000000")]) \
        == (0, None)
    assert alter_legacy(broker, NODE, {"log.retention.bytes": "456"}, validate_only=True) == (None, None)
    assert describe_node(broker)["log.segment.bytes"].value == "2000000"
    assert alter_legacy(broker, NODE, {"log.retention.bytes": "456"}) == (None, None)
    entries = describe_node(broker)
    assert (entries["log.retention.bytes"].value, entries["log.retention.bytes"].source) == ("456", DYNAMIC_BROKER)
    assert (entries["log.segment.bytes"].value, entries["log.segment.bytes"].source) == ("1073741824", DEFAULT)
    assert incremental(broker, NODE, [("log.retention.bytes", SET, "789")], validate_only=True) == (0, None)
    assert describe_node(broker)["log.retention.bytes"].value == "456"


@pytest.mark.broker_overrides(ON_NODE_0)
def test_incremental_list_operations(broker):
    """APPEND / SUBTRACT start from the stored value, else from Kafka's
    default of the key (ConfigurationControlManager.getParts)."""
    assert incremental(broker, NODE, [("log.cleanup.policy", APPEND, "compact")]) == (0, None)
    assert describe_node(broker)["log.cleanup.policy"].value == "delete,compact"
    assert incremental(broker, NODE, [("log.cleanup.policy", SUBTRACT, "delete")]) == (0, None)
    assert describe_node(broker)["log.cleanup.policy"].value == "compact"
    create_topic(broker, "compacted-by-default")
    assert describe_topic(broker, "compacted-by-default")["cleanup.policy"].value == "compact"
    assert incremental(broker, NODE, [("message.max.bytes", APPEND, "1")]) == \
        (INVALID_CONFIG, "Config value append is not allowed for config key: message.max.bytes")
    assert incremental(broker, NODE, [("log.cleanup.policy", SET, "shred")])[0] == INVALID_REQUEST


# ---------------------------------------------------------------- refusals

@pytest.mark.broker_overrides(ON_NODE_0)
def test_static_keys_and_other_names_are_refused_with_kafkas_errors(broker):
    """Kafka 3.9 (ConfigAdminManager.validateBrokerConfigChange, KAFKA-13609):
    a read-only key is INVALID_REQUEST "Cannot update these configs
    dynamically: Set(...)"; a bad value is INVALID_REQUEST with the ConfigDef
    message; a resource name other than "" or this node's id is
    INVALID_REQUEST (validateResourceNameIsCurrentNodeId)."""
    for key, value in (("log.dirs", "/elsewhere"), ("node.id", "5"), ("process.roles", "broker"),
                       ("listeners", "PLAINTEXT://127.0.0.1:1"), ("log.retention.hours", "1")):
        assert alter_legacy(broker, NODE, {key: value}) == \
            (KafkaError.INVALID_REQUEST, f"Cannot update these configs dynamically: Set({key})")
    assert incremental(broker, "", [("log.dirs", SET, "/x")]) == \
        (INVALID_REQUEST, "Cannot update these configs dynamically: Set(log.dirs)")
    assert alter_legacy(broker, NODE, {"message.max.bytes": "big"}) == \
        (KafkaError.INVALID_REQUEST,
         "Invalid value big for configuration message.max.bytes: Not a number of type INT")
    assert incremental(broker, "5", [("message.max.bytes", SET, "1")]) == \
        (INVALID_REQUEST, "Unexpected broker id, expected 0, but received 5")
    assert incremental(broker, "x", [("message.max.bytes", SET, "1")]) == \
        (INVALID_REQUEST, "Node id must be an integer, but it is: x")
    entries = describe_node(broker)
    assert entries["log.dirs"].is_read_only and entries["log.dirs"].source == STATIC
    assert entries["message.max.bytes"].source == DEFAULT
    error, message, _ = describe_raw(broker, "5")
    assert (error, message) == (INVALID_REQUEST, "Unexpected broker id, expected 0 or empty string, but received 5")
    # An empty key list asks for every key, as a null one does (ConfigHelper.createResponseConfig).
    assert set(describe_raw(broker, NODE, [])[2]) == set(describe_raw(broker, NODE)[2])


# ---------------------------------------------------------------- sources and synonyms

@pytest.mark.broker_overrides({**ON_NODE_0, "log.retention.hours": "100"})
def test_retention_synonyms_as_kafka_lists_them(broker):
    """ConfigHelper.configSynonyms lists each layer's log.retention.ms /
    .minutes / .hours and drops what ranks above the described name itself;
    log.retention.ms has no default, so with only the hours set the topic's
    retention.ms (360000000, from the hours) shows DEFAULT_CONFIG and no
    synonyms, exactly as Kafka 3.9 answers."""
    create_topic(broker, "r")
    retention = describe_topic(broker, "r")["retention.ms"]
    assert (retention.value, retention.source, list(retention.synonyms)) == ("360000000", DEFAULT, [])
    hours = kafka_python_entries(broker, "BROKER", NODE)["log.retention.hours"]
    assert hours[:3] == ("100", True, STATIC)
    assert hours[4] == [("log.retention.hours", "100", STATIC), ("log.retention.hours", "168", DEFAULT)]

    assert incremental(broker, "", [("log.retention.ms", SET, "5000")]) == (0, None)
    topic = kafka_python_entries(broker, "TOPIC", "r")["retention.ms"]
    assert topic[:3] == ("5000", False, DYNAMIC_DEFAULT)
    assert topic[4] == [("log.retention.ms", "5000", DYNAMIC_DEFAULT), ("log.retention.hours", "100", STATIC),
                        ("log.retention.hours", "168", DEFAULT)]
    # A topic override comes first.
    assert incremental_topic_override(broker, "r", "retention.ms", "7000") == 0
    topic = kafka_python_entries(broker, "TOPIC", "r")["retention.ms"]
    assert topic[:3] == ("7000", False, DYNAMIC_TOPIC)
    assert [s[2] for s in topic[4]] == [DYNAMIC_TOPIC, DYNAMIC_DEFAULT, STATIC, DEFAULT]


def incremental_topic_override(broker, topic, key, value):
    body = struct.pack(">i", 1) + struct.pack(">b", 2) + kafka_wire.string(topic) + struct.pack(">i", 1)
    body += kafka_wire.string(key) + struct.pack(">b", SET) + kafka_wire.string(value) + struct.pack(">?", False)
    r = kafka_wire.Reader(roundtrip(broker, kafka_wire.request(API_INCREMENTAL_ALTER_CONFIGS, 0, 13, body)))
    assert r.i32() == 13
    r.i32()
    assert r.i32() == 1
    return r.i16()


@pytest.mark.broker_overrides(ON_NODE_0)
def test_custom_and_quota_keys_are_accepted_as_kafka_does(broker):
    """Kafka accepts keys it does not know (plugin settings) and describes
    them as sensitive; the broker quota keys (leader/follower replication
    throttled rates) are dynamic-only and typed (LONG)."""
    assert incremental(broker, NODE, [("my.plugin.setting", SET, "on"),
                                      ("leader.replication.throttled.rate", SET, "1000")]) == (0, None)
    assert incremental(broker, NODE, [("follower.replication.throttled.rate", SET, "-1")])[0] == INVALID_REQUEST
    error, _message, entries = describe_raw(broker, NODE, ["my.plugin.setting", "leader.replication.throttled.rate"])
    assert error == 0
    assert entries["my.plugin.setting"][:4] == (None, True, DYNAMIC_BROKER, True)
    assert entries["leader.replication.throttled.rate"][:4] == ("1000", True, DYNAMIC_BROKER, False)
