"""Old message formats with a real client: kafka-python told it talks to an
old broker (api_version 0.9 / 0.10.1) produces legacy MessageSets (magic 0 /
magic 1, Produce v0-v2) and fetches with Fetch v0-v3, which the broker must
answer with down-converted message sets. Records written by a modern client
(librdkafka, RecordBatch v2) must read back through the old path too, and
the old client's records through a modern one."""

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from clients import create_topic, kcat_consume, kcat_produce

COUNT = 2000


def produce_old(bootstrap, topic, api_version, values, compression=None):
    producer = KafkaProducer(bootstrap_servers=bootstrap, api_version=api_version,
                             compression_type=compression)
    try:
        futures = [producer.send(topic, key=f"k{i}".encode(), value=v.encode(), partition=0)
                   for i, v in enumerate(values)]
        producer.flush(timeout=60)
        return [f.get(timeout=1).offset for f in futures]
    finally:
        producer.close(timeout=10)


def consume_old(bootstrap, topic, api_version, count):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, api_version=api_version,
                             consumer_timeout_ms=15000)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got = []
        for message in consumer:
            got.append((message.offset, message.key.decode(), message.value.decode()))
            if len(got) == count:
                break
        return got
    finally:
        consumer.close()


@pytest.mark.parametrize("api_version,compression", [
    ((0, 9), None), ((0, 9), "gzip"), ((0, 10, 1), None), ((0, 10, 1), "snappy"), ((0, 10, 1), "lz4")])
def test_old_client_round_trip(broker, api_version, compression):
    topic = f"legacy-{'-'.join(map(str, api_version))}-{compression or 'none'}"
    create_topic(broker.bootstrap, topic, 1)
    values = [f"old-{i}-" + "y" * (i % 40) for i in range(COUNT)]
    offsets = produce_old(broker.bootstrap, topic, api_version, values, compression)
    assert offsets == list(range(COUNT))
    # Read back through the old path (down-converted) ...
    got = consume_old(broker.bootstrap, topic, api_version, COUNT)
    assert got == [(i, f"k{i}", v) for i, v in enumerate(values)]
    # ... and through a modern client (stored as RecordBatch v2).
    modern = kcat_consume(broker.bootstrap, topic, 0)
    assert modern == [(i, f"k{i}:{v}") for i, v in enumerate(values)]


def test_modern_records_read_by_old_client(broker):
    create_topic(broker.bootstrap, "modern", 1)
    lines = [f"m{i}:modern-{i}" for i in range(COUNT)]
    kcat_produce(broker.bootstrap, "modern", 0, lines, "zstd")  # zstd: old readers get it uncompressed
    for api_version in [(0, 9), (0, 10, 1)]:
        got = consume_old(broker.bootstrap, "modern", api_version, COUNT)
        assert got == [(i, f"m{i}", f"modern-{i}") for i in range(COUNT)], api_version
