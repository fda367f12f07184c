"""Raw-wire pieces for the partition side of transactions: an idempotent
producer id (InitProducerId), transactional batches (attributes bit 4), the
markers a transaction coordinator would send (WriteTxnMarkers v1), and
ListOffsets with an isolation level. Shared by test_txn_partition.py and
test_txn_partition_cluster.py."""

import struct
import time

from kafka_wire import (NO_TAGS, Reader, compact_array, compact_string, flexible_call,
                        parse_produce, produce, record_batch, request, roundtrip, string)

API_LIST_OFFSETS = 2
API_WRITE_TXN_MARKERS = 27
TRANSACTIONAL = 0x10
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


def send(broker, topic, partition, values, producer=(-1, -1, -1), transactional=False):
    """Produce v3 acks=all of one batch; its base offset."""
    batch = record_batch([(None, v.encode()) for v in values], int(time.time() * 1000), producer=producer,
                         attributes=TRANSACTIONAL if transactional else 0)
    _, results = parse_produce(roundtrip(broker, produce(7, topic, partition, batch)), 3)
    [(_topic, _partition, error, base_offset, _message)] = results
    assert error == 0, f"produce error {error}"
    return base_offset


def write_markers(broker, producer_id, epoch, commit, topic, partitions, coordinator_epoch=0):
    """WriteTxnMarkers v1 with one marker: {partition: error code}."""
    topics = compact_array([compact_string(topic) +
                            compact_array([struct.pack(">i", p) for p in partitions]) + NO_TAGS])
    marker = struct.pack(">qhb", producer_id, epoch, 1 if commit else 0) + topics + \
        struct.pack(">i", coordinator_epoch) + NO_TAGS
    r = flexible_call(broker.host, broker.port, API_WRITE_TXN_MARKERS, 1, compact_array([marker]) + NO_TAGS,
                      timeout_s=40)
    assert r is not None, "broker closed the connection"
    errors = {}

    def partition_result():
        index, error = r.i32(), r.i16()
        r.no_tags()
        errors[index] = error

    def topic_result():
        r.compact_string()
        r.compact_array(partition_result)
        r.no_tags()

    def marker_result():
        assert r.i64() == producer_id
        r.compact_array(topic_result)
        r.no_tags()

    r.compact_array(marker_result)
    r.no_tags()
    r.done()
    return errors


def latest_offset(broker, topic, partition, isolation_level):
    """ListOffsets v2 latest (-1) with the isolation level."""
    body = struct.pack(">ib", -1, isolation_level) + struct.pack(">i", 1) + string(topic)
    body += struct.pack(">i", 1) + struct.pack(">iq", partition, -1)
    r = Reader(roundtrip(broker, request(API_LIST_OFFSETS, 2, 9, body)))
    assert r.i32() == 9
    r.i32()  # throttle
    assert r.i32() == 1
    r.string()
    assert r.i32() == 1
    _partition, error, _timestamp, offset = r.i32(), r.i16(), r.i64(), r.i64()
    assert error == 0, f"ListOffsets error {error}"
    return offset


def consume_confluent(bootstrap, topic, partitions, isolation, expected, idle_s=3.0, timeout_s=30.0):
    """Every value confluent-kafka reads from the start of `partitions` with
    isolation.level `isolation`: {partition: [value]}. Reads until
    `expected` values arrived and then idle_s more, or timeout_s."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"txn-{isolation}", "enable.auto.commit": False,
                         "isolation.level": isolation, "enable.partition.eof": False})
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        got = {p: [] for p in partitions}
        total, start, last = 0, time.monotonic(), time.monotonic()
        while time.monotonic() - start < timeout_s and (total < expected or time.monotonic() - last < idle_s):
            for m in consumer.consume(num_messages=1000, timeout=0.3):
                assert m.error() is None, str(m.error())
                got[m.partition()].append(m.value().decode())
                total += 1
                last = time.monotonic()
        return got
    finally:
        consumer.close()
