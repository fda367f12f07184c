"""Idempotent producers (InitProducerId, per-partition producer state) with
python3-confluent-kafka (librdkafka) and enable.idempotence=True on the
single node: every record once, in order; through a CutProxy whose
connections are cut while produce requests are in flight, so librdkafka
retries batches the broker may already have appended, and the producer
state must answer those retries with the original offsets instead of
appending them again; after a kill -9 and restart (the state rebuilt from
the log) the same producer's retries are still deduplicated."""

import threading
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from clients import create_topic
from cut_proxy import CutProxy

PARTITIONS = 2


def produce_idempotent(bootstrap, topic, count, on_acked=None):
    """Produces `count` records (value = index) round-robin over the
    partitions; `on_acked(n)` is called after the n-th acknowledgement (from
    the delivery callback, while later requests are in flight). Every record
    must be acknowledged."""
    errors = []
    acked = [0]
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5,
                         "batch.num.messages": 200, "message.timeout.ms": 120000, "retry.backoff.ms": 50})

    def on_delivery(err, _msg):
        if err is not None:
            errors.append(err)
            return
        acked[0] += 1
        if on_acked:
            on_acked(acked[0])

    for i in range(count):
        while True:
            try:
                producer.produce(topic, value=str(i).encode(), partition=i % PARTITIONS, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 100 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0, "records still unacknowledged after 120 s"
    assert not errors, f"{len(errors)} records failed, first: {errors[0]}"


def consume_values(bootstrap, topic, expected, idle_timeout_s=30):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "verify", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        got = {p: [] for p in range(PARTITIONS)}
        total, last = 0, time.monotonic()
        while time.monotonic() - last < (idle_timeout_s if total < expected else 2):
            for m in consumer.consume(num_messages=1000, timeout=0.5):
                assert m.error() is None, str(m.error())
                got[m.partition()].append(int(m.value()))
                total += 1
                last = time.monotonic()
        return got
    finally:
        consumer.close()


def assert_exactly_once_in_order(got, count):
    for p in range(PARTITIONS):
        want = list(range(p, count, PARTITIONS))
        dups = len(got[p]) - len(set(got[p]))
        assert dups == 0, f"partition {p}: {dups} duplicates"
        assert got[p] == want, f"partition {p}: {len(got[p])} records, want {len(want)} in order"


def test_idempotent_producer_every_record_once_in_order(broker):
    create_topic(broker.bootstrap, "idem", partitions=PARTITIONS)
    produce_idempotent(broker.bootstrap, "idem", 20000)
    assert_exactly_once_in_order(consume_values(broker.bootstrap, "idem", 20000), 20000)


def test_retries_after_cut_connections_are_deduplicated(make_broker):
    broker = make_broker(start=False)
    proxy = CutProxy(broker.port)
    try:
        broker.overrides["advertised.listeners"] = f"PLAINTEXT://127.0.0.1:{proxy.port}"
        broker.start()
        create_topic(broker.bootstrap, "cut", partitions=PARTITIONS)
        cuts = []

        def cut_now(n):
            if n % 4000 == 0:  # answers of the requests in flight are lost; librdkafka retries them
                proxy.cut()
                cuts.append(n)
                threading.Timer(0.2, proxy.heal).start()

        produce_idempotent(f"127.0.0.1:{proxy.port}", "cut", 40000, on_acked=cut_now)
        assert len(cuts) >= 5
        assert_exactly_once_in_order(consume_values(broker.bootstrap, "cut", 40000), 40000)
    finally:
        proxy.close()


def test_state_rebuilt_after_kill9(broker):
    create_topic(broker.bootstrap, "crash", partitions=PARTITIONS)
    produce_idempotent(broker.bootstrap, "crash", 5000)
    broker.kill9_restart()
    produce_idempotent(broker.bootstrap, "crash", 5000)  # a new producer id: appended after
    got = consume_values(broker.bootstrap, "crash", 10000)
    for p in range(PARTITIONS):
        want = list(range(p, 5000, PARTITIONS))
        assert got[p] == want + want
