"""The check every hostile-input test ends with: a dataset produced through a
real client before the attack reads back intact, in order, with nothing
added, and the broker still answers a fresh connection. Shared by
test_bad_input.py and test_hostile_records.py."""

import socket

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

import kafka_wire as wire
from clients import create_topic

TOPIC = "intact"
SEEDED = [f"record-{i}" for i in range(100)]


@pytest.fixture
def seeded(broker):
    """A broker whose TOPIC partition 0 holds SEEDED, written by librdkafka."""
    create_topic(broker.bootstrap, TOPIC, 1)
    produce_values(broker, SEEDED)
    return broker


def produce_values(broker, values, topic=TOPIC):
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for value in values:
        producer.produce(topic, value=value.encode(), partition=0)
    assert producer.flush(60) == 0


def read_back(broker, count, topic=TOPIC):
    """Up to `count` values of partition 0 from the beginning (bounded: gives
    up after about a minute without reaching `count`)."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "check"})
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        values = []
        for _ in range(60):
            for m in consumer.consume(num_messages=1000, timeout=1.0):
                assert m.error() is None, str(m.error())
                values.append(m.value().decode())
            if len(values) >= count:
                break
        return values
    finally:
        consumer.close()


def high_watermark(broker, topic=TOPIC):
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "hw"})
    try:
        _, hw = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
        return hw
    finally:
        consumer.close()


def check_intact(broker, extra=(), topic=TOPIC, seeded_values=SEEDED):
    assert broker.running(), "broker died"
    assert wire.probe_api_versions(broker.host, broker.port), "broker stopped answering"
    expected = list(seeded_values) + list(extra)
    assert read_back(broker, len(expected), topic) == expected
    assert high_watermark(broker, topic) == len(expected), "unexpected records in the log"


def connect(broker):
    return socket.create_connection((broker.host, broker.port), timeout=10)


def produce_raw(broker, records, version=3, topic=TOPIC):
    """Sends one Produce request holding `records` for partition 0; returns
    (error_code, error_message) of its one partition."""
    with connect(broker) as s:
        s.sendall(wire.produce(41, topic, 0, records, version=version))
        payload = wire.recv_frame(s, timeout_s=30)
    assert payload is not None, "connection closed instead of a Produce response"
    correlation_id, results = wire.parse_produce(payload, version)
    assert correlation_id == 41
    assert [(t, p) for t, p, _, _, _ in results] == [(topic, 0)]
    return results[0][2], results[0][4]
