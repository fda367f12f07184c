"""Producer-state snapshots (`<20-digit offset>.snapshot`, Kafka's names)
with a real broker and real idempotent producers (confluent-kafka with
enable.idempotence=True, and a hand-made one on the wire whose batches the
test can send again): the partition's producer state survives a clean
restart, read from the snapshot at the log end with no batch replayed, and a
kill -9, read from the snapshot of the last roll with only the batches after
it replayed. Each time DescribeProducers shows the same state as before, a
retry of one of the last five batches is answered with its original offset
and nothing is appended, and the confluent-kafka producer, alive across both
restarts, ends with every record once and in order."""

import re
import struct
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from clients import create_topic
from kafka_wire import (NO_TAGS, compact_array, compact_string, flexible_call, init_producer_id, parse_produce,
                        produce, record_batch, roundtrip)

TOPIC = "snap"
API_DESCRIBE_PRODUCERS = 61
BATCH = 10  # records per hand-made batch


def send_batch(broker, producer_id, epoch, seq):
    """Produce v3, acks=all, of one batch with sequences seq..seq+BATCH-1;
    its base offset."""
    values = [(None, f"raw-{seq + i}".encode()) for i in range(BATCH)]
    batch = record_batch(values, int(time.time() * 1000), producer=(producer_id, epoch, seq))
    _, results = parse_produce(roundtrip(broker, produce(7, TOPIC, 0, batch)), 3)
    [(_topic, _partition, error, base_offset, _message)] = results
    assert error == 0, f"produce error {error} for sequence {seq}"
    return base_offset


def describe_producers(broker):
    """DescribeProducers v0 of partition 0: {producer id: (epoch, last sequence)}."""
    body = compact_array([compact_string(TOPIC) + compact_array([struct.pack(">i", 0)]) + NO_TAGS]) + NO_TAGS
    r = flexible_call(broker.host, broker.port, API_DESCRIBE_PRODUCERS, 0, body)
    assert r is not None, "broker closed the connection"

    def producer():
        producer_id, epoch, last_seq = r.i64(), r.i32(), r.i32()
        r.i64(), r.i32(), r.i64()  # last timestamp, coordinator epoch, txn start offset
        r.no_tags()
        return producer_id, (epoch, last_seq)

    def partition():
        _index, error, message = r.i32(), r.i16(), r.compact_string()
        producers = r.compact_array(producer)
        r.no_tags()
        assert error == 0, f"DescribeProducers error {error}: {message}"
        return dict(producers)

    def topic():
        r.compact_string()
        partitions = r.compact_array(partition)
        r.no_tags()
        return partitions

    r.i32()  # throttle
    topics = r.compact_array(topic)
    r.no_tags()
    r.done()
    return topics[0][0]


def produce_keyed(producer, start, count):
    """`count` records key b"c", values start.. ; every one acknowledged."""
    errors = []
    for i in range(start, start + count):
        while True:
            try:
                producer.produce(TOPIC, key=b"c", value=str(i).encode() + b"-" + b"x" * 100, partition=0,
                                 on_delivery=lambda err, _m: err and errors.append(err))
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0, "records still unacknowledged after 60 s"
    assert not errors, f"{len(errors)} records failed, first: {errors[0]}"


def snapshot_offsets(broker):
    names = [p.name for p in (broker.data_dir / f"{TOPIC}-0").iterdir() if p.name.endswith(".snapshot")]
    for name in names:
        assert re.fullmatch(r"\d{20}\.snapshot", name), name
    return sorted(int(name[:20]) for name in names)


def producer_state_loads(broker):
    """(snapshot offset, batches replayed) of every load of partition 0 in the log."""
    pattern = rf"{TOPIC}-0: producer state: \d+ producers, from snapshot (-?\d+) and (\d+) batches after it"
    return [(int(a), int(b)) for a, b in re.findall(pattern, broker.log_path.read_text(errors="replace"))]


def consume_keyed(bootstrap, expected, timeout_s=30):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "verify", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        got, deadline = [], time.monotonic() + timeout_s
        while len(got) < expected and time.monotonic() < deadline:
            for m in consumer.consume(num_messages=1000, timeout=0.5):
                assert m.error() is None, str(m.error())
                if m.key() == b"c":
                    got.append(int(m.value().split(b"-")[0]))
        return got
    finally:
        consumer.close()


def test_producer_state_survives_clean_restart_and_kill9(broker):
    create_topic(broker.bootstrap, TOPIC, partitions=1, config={"segment.bytes": "16384"})
    client = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "linger.ms": 5,
                       "message.timeout.ms": 60000, "retry.backoff.ms": 50,
                       "batch.size": 8000})  # whole batches below segment.bytes
    produce_keyed(client, 0, 3000)  # about 20 segments, so snapshots at rolls
    producer_id, epoch = init_producer_id(broker)
    bases = [send_batch(broker, producer_id, epoch, i * BATCH) for i in range(8)]
    end = bases[-1] + BATCH
    state = describe_producers(broker)
    assert state[producer_id] == (epoch, 8 * BATCH - 1)
    assert len(state) == 2

    broker.restart()  # clean: the snapshot written at close, at the log end
    offsets = snapshot_offsets(broker)
    assert offsets[-1] == end and len(offsets) == 3, offsets
    assert producer_state_loads(broker)[-1] == (end, 0)
    assert describe_producers(broker) == state
    assert send_batch(broker, producer_id, epoch, 4 * BATCH) == bases[4]  # a retry of the fifth-newest
    assert send_batch(broker, producer_id, epoch, 7 * BATCH) == bases[7]
    assert send_batch(broker, producer_id, epoch, 8 * BATCH) == end  # nothing was appended

    produce_keyed(client, 3000, 3000)  # the same producer, on: more rolls
    last = send_batch(broker, producer_id, epoch, 9 * BATCH)
    state = describe_producers(broker)
    broker.kill9_restart()  # a crash: the newest roll's snapshot, then the batches after it
    snapshot, replayed = producer_state_loads(broker)[-1]
    assert end < snapshot <= last and 0 < replayed < 200, (snapshot, replayed)
    assert describe_producers(broker) == state
    assert send_batch(broker, producer_id, epoch, 9 * BATCH) == last
    assert send_batch(broker, producer_id, epoch, 10 * BATCH) == last + BATCH

    produce_keyed(client, 6000, 1000)
    client.flush(10)
    assert consume_keyed(broker.bootstrap, 7000) == list(range(7000))
