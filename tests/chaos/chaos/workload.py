"""The workload: producers writing unique values (acks=all and acks=1),
a consumer reading everything by assignment, and full reads of a
partition from offset 0, every step recorded in the History.

A value must name one record, as LogHistory assumes (a value at two
offsets is a duplicate). On one broker the producers do not retry
(retries=0, no idempotence): a value names one produce attempt, and a
failed attempt is recorded as an error (its outcome unknown: it may or may
not be in the log). In a cluster that is not enough: librdkafka resends a
batch answered NOT_LEADER_OR_FOLLOWER even with retries=0 (it counts no
retry for an error it takes as "not persisted", rdkafka_request.c
rd_kafka_handle_Produce_error), and a leader that loses its leadership
answers exactly that to an acks=all produce it appended and was waiting
to replicate (Kafka's DelayedProduce does the same): the record may
survive on the new leader, which then appends the resent batch again.
Cluster producers are therefore idempotent (`idempotent=True`: the new
leader recognizes the resent batch by producer id and sequence), and a
duplicate is then the broker's fault."""

import threading
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

# Client settings that keep every wait short and bounded.
CLIENT_TIMEOUTS = {
    "socket.timeout.ms": 5000,
    "reconnect.backoff.ms": 50,
    "reconnect.backoff.max.ms": 500,
}
MAX_OUTSTANDING = 50  # produce attempts without an outcome, per producer
MAX_VALUES = 200_000  # per producer and run: bounds a run's size


def partition_name(topic, partition):
    return f"{topic}-{partition}"


class ProducerWorker(threading.Thread):
    """Produces `name-<seq>` values round robin over the partitions until
    stopped; pause() stops new attempts (those in flight carry on).
    `idempotent`: enable.idempotence (acks=all, librdkafka's retries until
    message.timeout.ms); else no retries at all (see the module's doc)."""

    def __init__(self, history, bootstrap, topic, partitions, acks, name, idempotent=False):
        super().__init__(name=name, daemon=True)
        self.history = history
        self.topic = topic
        self.partitions = partitions
        self.acks = acks
        self.value_prefix = name
        # An idempotent producer gets a long message.timeout.ms, as librdkafka
        # advises: when a message times out it bumps its producer epoch and
        # sends again, under new sequence numbers, the messages whose earlier
        # attempt failed in flight (possibly written): the broker cannot tell
        # those from new ones (chaos run 1008 of session 10: 434 duplicates,
        # each a value written in epoch 1 and again in epoch 5 at sequence 0).
        delivery = ({"enable.idempotence": True, "message.timeout.ms": 60000} if idempotent
                    else {"enable.idempotence": False, "retries": 0, "message.timeout.ms": 10000})
        self.producer = Producer({
            "bootstrap.servers": bootstrap, "acks": acks, **delivery,
            "linger.ms": 2, "request.timeout.ms": 5000, **CLIENT_TIMEOUTS,
        })
        self.seq = 0
        self.outstanding = 0
        self.acked = 0
        self.errors = 0
        self._lock = threading.Lock()
        self._halt = threading.Event()
        self._running = threading.Event()
        self._running.set()

    def _delivered(self, err, msg, partition, value):
        with self._lock:
            self.outstanding -= 1
            if err is None:
                self.acked += 1
            else:
                self.errors += 1
        if err is None:
            # offset() is None when librdkafka knows the message was written
            # but not where (its own answer was lost, a later one's proved
            # it): recorded as null, judged by LogHistory::acknowledged_somewhere.
            self.history.ack(partition, msg.offset(), value, self.acks)
        else:
            self.history.error(partition, value, err.str())

    def _produce_one(self):
        p = self.seq % self.partitions
        value = f"{self.value_prefix}-{self.seq}"
        self.seq += 1
        partition = partition_name(self.topic, p)
        self.history.sent(partition, value, self.acks)
        with self._lock:
            self.outstanding += 1
        try:
            self.producer.produce(self.topic, value=value.encode(), partition=p,
                                  on_delivery=lambda err, msg: self._delivered(err, msg, partition, value))
        except (BufferError, KafkaException) as e:  # a full queue (never, with MAX_OUTSTANDING), a fatal error
            with self._lock:
                self.outstanding -= 1
            self.history.error(partition, value, f"not queued: {e}")

    def run(self):
        while not self._halt.is_set():
            if self._running.is_set() and self.outstanding < MAX_OUTSTANDING and self.seq < MAX_VALUES:
                self._produce_one()
            self.producer.poll(0.002)

    def pause(self):
        self._running.clear()

    def unpause(self):
        self._running.set()

    def drain(self, timeout_s):
        """Waits (bounded) until every attempt has an outcome; True if so."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.outstanding == 0:
                return True
            time.sleep(0.01)  # the worker thread polls the callbacks
        return self.outstanding == 0

    def stop(self, timeout_s=30):
        self.pause()
        drained = self.drain(timeout_s)
        self._halt.set()
        self.join(timeout=10)
        return drained


def _high_watermark(consumer, tp, cached, timeout_s=5):
    try:
        low, high = consumer.get_watermark_offsets(tp, cached=cached, timeout=timeout_s)
    except Exception:  # a broker down or cut: unknown
        return None
    return high if high is not None and high >= 0 else None


class ConsumerWorker(threading.Thread):
    """Reads every partition from offset 0 by assignment (no group
    membership), recording each record as a read from the offset the
    consumer had reached: a skipped offset is a gap the checker sees. The
    high watermark is librdkafka's cached one from the latest fetch
    response (at least the one that delivered the record), or null."""

    def __init__(self, history, bootstrap, topic, partitions, name="consumer"):
        super().__init__(name=name, daemon=True)
        self.history = history
        self.topic = topic
        self.partitions = partitions
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"chaos-{name}", "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100, **CLIENT_TIMEOUTS,
        })
        self.position = {p: 0 for p in range(partitions)}
        self.reads = 0
        self._halt = threading.Event()

    def run(self):
        self.consumer.assign([TopicPartition(self.topic, p, 0) for p in range(self.partitions)])
        while not self._halt.is_set():
            msg = self.consumer.poll(0.1)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() != KafkaError._PARTITION_EOF:
                    self.history.note("consumer error", error=msg.error().str())
                continue
            self._record(msg)
        self.consumer.close()

    def _record(self, msg):
        p, offset = msg.partition(), msg.offset()
        hw = _high_watermark(self.consumer, TopicPartition(self.topic, p), cached=True)
        self.history.fetch(partition_name(self.topic, p), self.position[p], hw,
                           [(offset, msg.value().decode())])
        if offset >= self.position[p]:
            self.position[p] = offset + 1
        self.reads += 1

    def stop(self):
        self._halt.set()
        self.join(timeout=15)


def read_partition(bootstrap, topic, partition, timeout_s=60):
    """The whole log of one partition, offset 0 to the high watermark, read
    by a fresh consumer: [(offset, value)]. Raises TimeoutError if it cannot
    get there within timeout_s."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": "chaos-full-read", "enable.auto.commit": False,
        "auto.offset.reset": "earliest", "enable.partition.eof": True, **CLIENT_TIMEOUTS,
    })
    try:
        tp = TopicPartition(topic, partition)
        deadline = time.monotonic() + timeout_s
        end = None
        while end is None and time.monotonic() < deadline:
            end = _high_watermark(consumer, tp, cached=False)
        if end is None:
            raise TimeoutError(f"no high watermark for {topic}-{partition} within {timeout_s}s")
        records = []
        if end == 0:
            return records
        consumer.assign([TopicPartition(topic, partition, 0)])
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    if msg.offset() >= end:
                        return records
                    continue
                continue
            records.append((msg.offset(), msg.value().decode()))
            if msg.offset() + 1 >= end:
                return records
        raise TimeoutError(f"{topic}-{partition}: read {len(records)} records of {end} in {timeout_s}s")
    finally:
        consumer.close()
