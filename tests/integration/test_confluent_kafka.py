"""python3-confluent-kafka (1.7.0 on librdkafka 2.0.2) with default client
settings: 100,000 records over 4 partitions round trip with per-partition
order, again after a restart; offsets_for_times (ListOffsets by timestamp)."""

import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from clients import create_topic

PARTITIONS = 4
RECORDS = 100000
PER_PARTITION = RECORDS // PARTITIONS


def value_of(p, i):
    return f"{p}:{i}:" + "v" * (i % 32)


def produce(bootstrap, topic, records, timestamp_of=None):
    """records: (partition, index) pairs; every one must be acknowledged."""
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap})

    def on_delivery(err, _msg):
        if err is not None:
            errors.append(err)

    for n, (p, i) in enumerate(records):
        extra = {"timestamp": timestamp_of(p, i)} if timestamp_of else {}
        while True:
            try:
                producer.produce(topic, value=value_of(p, i).encode(), key=f"k{i}".encode(),
                                 partition=p, on_delivery=on_delivery, **extra)
                break
            except BufferError:
                producer.poll(0.1)
        if n % 1000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0, "records still unacknowledged after 120 s"
    assert not errors, f"{len(errors)} records failed, first: {errors[0]}"


def consume_all(bootstrap, topic, idle_timeout_s=60):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "verify"})
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        got = {p: [] for p in range(PARTITIONS)}
        total, last_progress = 0, time.monotonic()
        while total < RECORDS:
            assert time.monotonic() - last_progress < idle_timeout_s, f"stuck at {total} records"
            for m in consumer.consume(num_messages=1000, timeout=1.0):
                assert m.error() is None, str(m.error())
                got[m.partition()].append((m.offset(), m.value().decode()))
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
    create_topic(broker.bootstrap, "ck", PARTITIONS)
    produce(broker.bootstrap, "ck", ((n % PARTITIONS, n // PARTITIONS) for n in range(RECORDS)))
    check(consume_all(broker.bootstrap, "ck"))
    broker.restart()
    check(consume_all(broker.bootstrap, "ck"))


def test_offsets_for_times(broker):
    create_topic(broker.bootstrap, "times", 2)
    base = int(time.time() * 1000) - 3600 * 1000
    produce(broker.bootstrap, "times", ((p, i) for p in range(2) for i in range(100)),
            timestamp_of=lambda p, i: base + i * 1000 + p)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "times"})
    try:
        def lookup(p, ts):
            (result,) = consumer.offsets_for_times([TopicPartition("times", p, ts)], timeout=30)
            assert result.error is None, str(result.error)
            return result.offset

        assert lookup(0, base - 5000) == 0
        assert lookup(0, base) == 0
        assert lookup(0, base + 50 * 1000) == 50
        assert lookup(0, base + 50 * 1000 + 1) == 51
        assert lookup(1, base + 50 * 1000) == 50      # partition 1 is 1 ms later
        assert lookup(1, base + 50 * 1000 + 1) == 50
        assert lookup(1, base + 99 * 1000 + 1) == 99
        assert lookup(0, base + 100 * 1000) == -1     # nothing that late: OFFSET_END
    finally:
        consumer.close()
