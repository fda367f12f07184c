"""python3-kafka (kafka-python 2.0.2) with default settings and NO
api_version (it probes the broker): 100,000 records over 4 partitions round
trip with per-partition order, again after a restart; offsets_for_times."""

import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

PARTITIONS = 4
RECORDS = 100000
PER_PARTITION = RECORDS // PARTITIONS


def value_of(p, i):
    return f"{p}:{i}:" + "w" * (i % 32)


def create_topic(bootstrap, topic, partitions):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)],
                            timeout_ms=30000)
    finally:
        admin.close()


def produce(bootstrap, topic, records, timestamp_of=None):
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        futures = []
        for p, i in records:
            ts = timestamp_of(p, i) if timestamp_of else None
            futures.append(producer.send(topic, value=value_of(p, i).encode(),
                                         key=f"k{i}".encode(), partition=p, timestamp_ms=ts))
        producer.flush(timeout=120)
        for f in futures:
            f.get(timeout=1)  # raises the delivery error, if any
    finally:
        producer.close(timeout=30)


def consume_all(bootstrap, topic, idle_timeout_s=60):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        got = {p: [] for p in range(PARTITIONS)}
        total, last_progress = 0, time.monotonic()
        while total < RECORDS:
            assert time.monotonic() - last_progress < idle_timeout_s, f"stuck at {total} records"
            for tp, messages in consumer.poll(timeout_ms=1000, max_records=5000).items():
                for m in messages:
                    got[tp.partition].append((m.offset, m.value.decode()))
                    total += 1
                    last_progress = time.monotonic()
        return got
    finally:
        consumer.close()


def check(got):
    for p in range(PARTITIONS):
        assert [o for o, _ in got[p]] == list(range(PER_PARTITION)), f"offsets of partition {p}"
        assert [v for _, v in got[p]] == [value_of(p, i) for i in range(PER_PARTITION)], \
            f"content of partition {p}"


def test_roundtrip_and_restart(broker):
    create_topic(broker.bootstrap, "kp", PARTITIONS)
    produce(broker.bootstrap, "kp", ((n % PARTITIONS, n // PARTITIONS) for n in range(RECORDS)))
    check(consume_all(broker.bootstrap, "kp"))
    broker.restart()
    check(consume_all(broker.bootstrap, "kp"))


def test_offsets_for_times(broker):
    create_topic(broker.bootstrap, "times", 2)
    base = int(time.time() * 1000) - 3600 * 1000
    produce(broker.bootstrap, "times", ((p, i) for p in range(2) for i in range(100)),
            timestamp_of=lambda p, i: base + i * 1000 + p)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    try:
        def lookup(p, ts):
            tp = TopicPartition("times", p)
            result = consumer.offsets_for_times({tp: ts})[tp]
            return None if result is None else result.offset

        assert lookup(0, base - 5000) == 0
        assert lookup(0, base + 50 * 1000) == 50
        assert lookup(0, base + 50 * 1000 + 1) == 51
        assert lookup(1, base + 50 * 1000 + 1) == 50
        assert lookup(1, base + 99 * 1000 + 1) == 99
        assert lookup(0, base + 100 * 1000) is None   # nothing that late
    finally:
        consumer.close()
