"""A dataset produced before an attack, and the check that it reads back
intact afterwards: shared by the hostile-client suites (test_bad_input.py,
test_hostile_connections.py, ...). Import `seeded` into a test module to use
the fixture."""

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

import kafka_wire as wire
from clients import create_topic

TOPIC = "intact"
SEEDED = [f"record-{i}" for i in range(100)]


@pytest.fixture
def seeded(broker):
    create_topic(broker.bootstrap, TOPIC, 1)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for value in SEEDED:
        producer.produce(TOPIC, value=value.encode(), partition=0)
    assert producer.flush(60) == 0
    return broker


def read_back(broker, count):
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "check"})
    try:
        consumer.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])
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


def check_intact(broker, extra=()):
    assert broker.running(), "broker died"
    assert wire.probe_api_versions(broker.host, broker.port), "broker stopped answering"
    expected = SEEDED + list(extra)
    assert read_back(broker, len(expected)) == expected
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "hw"})
    try:
        _, hw = consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=30)
    finally:
        consumer.close()
    assert hw == len(expected), "unexpected records in the log"
