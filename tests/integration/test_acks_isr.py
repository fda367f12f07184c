"""acks and min.insync.replicas on the single node (issue 15 item 4), with
real clients: a topic with min.insync.replicas=2 on one replica (ISR = {the
leader}) refuses acks=all with NOT_ENOUGH_REPLICAS and writes nothing, as
Kafka 3.9 does (Partition.appendRecordsToLeader), while acks=1 works; a
topic without it takes acks=all at once (the HW moves with the append);
a multi-partition acks=-1 Produce answers each partition."""

import struct
import time

import kafka_wire as wire
from clients import create_topic

NOT_ENOUGH_REPLICAS = 19


def end_offset(bootstrap, topic, partition=0):
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "acks-isr-probe"})
    try:
        _low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
        return high
    finally:
        consumer.close()


def confluent_produce(bootstrap, topic, acks, count):
    """The delivery error codes of `count` records (0: acknowledged)."""
    from confluent_kafka import Producer
    outcomes = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "retries": 0,
                         "message.timeout.ms": 10000})

    def on_delivery(err, _msg):
        outcomes.append(0 if err is None else err.code())

    for i in range(count):
        producer.produce(topic, value=f"{acks}-{i}".encode(), partition=0, on_delivery=on_delivery)
    assert producer.flush(30) == 0, "records still undelivered after 30 s"
    return outcomes


def test_confluent_kafka_acks_all_below_min_insync_replicas(broker):
    create_topic(broker.bootstrap, "strict", 1, config={"min.insync.replicas": "2"})
    create_topic(broker.bootstrap, "plain", 1)

    assert confluent_produce(broker.bootstrap, "strict", "all", 5) == [NOT_ENOUGH_REPLICAS] * 5
    assert end_offset(broker.bootstrap, "strict") == 0, "a refused acks=all record was written"
    assert confluent_produce(broker.bootstrap, "strict", "1", 5) == [0] * 5
    assert end_offset(broker.bootstrap, "strict") == 5

    # One replica, min.insync.replicas=1: acks=all is answered as before.
    assert confluent_produce(broker.bootstrap, "plain", "all", 50) == [0] * 50
    assert end_offset(broker.bootstrap, "plain") == 50


def test_kafka_python_acks_all_below_min_insync_replicas(broker):
    from kafka import KafkaProducer
    from kafka.errors import NotEnoughReplicasError
    create_topic(broker.bootstrap, "strict", 1, config={"min.insync.replicas": "2"})

    strict = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", retries=0)
    try:
        future = strict.send("strict", value=b"refused", partition=0)
        try:
            future.get(timeout=30)
            raise AssertionError("acks=all was acknowledged below min.insync.replicas")
        except NotEnoughReplicasError:
            pass
    finally:
        strict.close(timeout=10)

    loose = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1)
    try:
        metadata = loose.send("strict", value=b"taken", partition=0).get(timeout=30)
        assert metadata.offset == 0, "the refused record took an offset"
    finally:
        loose.close(timeout=10)


def produce_two_topics(correlation_id, first, second, batch, acks, timeout_ms):
    """A Produce v3 to partition 0 of two topics."""
    body = wire.string(None) + struct.pack(">hi", acks, timeout_ms) + struct.pack(">i", 2)
    for topic in (first, second):
        body += wire.string(topic) + struct.pack(">i", 1) + struct.pack(">i", 0)
        body += struct.pack(">i", len(batch)) + batch
    return wire.request(wire.API_PRODUCE, 3, correlation_id, body)


def test_one_acks_all_request_answers_every_partition(broker):
    create_topic(broker.bootstrap, "strict", 1, config={"min.insync.replicas": "2"})
    create_topic(broker.bootstrap, "plain", 1)
    batch = wire.record_batch([(b"k", b"v")], int(time.time() * 1000))
    # timeout_ms=0: nothing may wait; the single replica's HW covers the
    # append at once, so it is answered NONE, not REQUEST_TIMED_OUT.
    response = wire.roundtrip(broker, produce_two_topics(7, "plain", "strict", batch, -1, 0))
    correlation_id, results = wire.parse_produce_v3(response)
    assert correlation_id == 7
    by_topic = {t: (error, base) for t, _p, error, base in results}
    assert by_topic["plain"] == (0, 0)
    assert by_topic["strict"][0] == NOT_ENOUGH_REPLICAS
    assert end_offset(broker.bootstrap, "strict") == 0
