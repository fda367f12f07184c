"""kill -9 at bad moments (issue 10, items 4 and 8), against a real broker
with python3-confluent-kafka:

- a crash during DeleteTopics: partition directories the metadata no longer
  assigns are put back on disk after the deletion (as a crash between the
  metadata commit and the removal of the directories leaves them), the
  broker is killed and restarted, and the topic re-created with the same
  name: the old topic's records are never served (high watermarks 0), the
  directories are gone;
- a kill -9 right after DeleteTopics returns, then re-creation: the same;
- a flipped byte in a batch below the recovery point of the active segment,
  then kill -9: recovery ends the log at the bad batch, a consumer with
  check.crcs=true reads everything before it, new writes land right after
  and are readable.
"""

import shutil
import struct
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

TIMEOUT_S = 30


def admin(bootstrap):
    return AdminClient({"bootstrap.servers": bootstrap})


# The client must outlive its futures (a collected AdminClient fails them).
def create(bootstrap, name, partitions, config=None):
    client = admin(bootstrap)
    futures = client.create_topics([NewTopic(name, partitions, 1, config=config or {})],
                                   operation_timeout=TIMEOUT_S, request_timeout=TIMEOUT_S)
    futures[name].result(timeout=TIMEOUT_S)


def delete(bootstrap, name):
    client = admin(bootstrap)
    futures = client.delete_topics([name], operation_timeout=TIMEOUT_S, request_timeout=TIMEOUT_S)
    futures[name].result(timeout=TIMEOUT_S)


def grow(bootstrap, name, total):
    client = admin(bootstrap)
    futures = client.create_partitions([NewPartitions(name, total)], operation_timeout=TIMEOUT_S,
                                       request_timeout=TIMEOUT_S)
    futures[name].result(timeout=TIMEOUT_S)


def topic_names(bootstrap):
    return set(admin(bootstrap).list_topics(timeout=TIMEOUT_S).topics)


def produce(bootstrap, topic, records, flush_each=False):
    """records: [(partition, value)]. Every record must be acknowledged."""
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all"})

    def on_delivery(err, _msg):
        if err is not None:
            errors.append(err)

    for partition, value in records:
        producer.produce(topic, value=value, partition=partition, on_delivery=on_delivery)
        producer.poll(0)
        if flush_each:
            assert producer.flush(TIMEOUT_S) == 0
    assert producer.flush(TIMEOUT_S) == 0
    assert errors == []


def watermarks(bootstrap, topic, partition):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "crash-watermarks"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT_S, cached=False)
    finally:
        consumer.close()


def consume_all(bootstrap, topic, partition, high, max_s=TIMEOUT_S):
    """[(offset, value)] from offset 0 to `high`, with check.crcs=true; a
    consumer error fails the test."""
    out = []
    if high == 0:
        return out
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"crash-{time.monotonic_ns()}",
                         "auto.offset.reset": "error", "enable.auto.commit": False,
                         "enable.partition.eof": True, "check.crcs": True})
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        deadline = time.monotonic() + max_s
        while time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                assert msg.error().code() == KafkaError._PARTITION_EOF, msg.error()
                if out and out[-1][0] + 1 >= high:
                    return out
                continue
            out.append((msg.offset(), msg.value()))
            if msg.offset() + 1 >= high:
                return out
        raise AssertionError(f"timed out reading {topic}-{partition}: {len(out)} of {high} records")
    finally:
        consumer.close()


def partition_dirs(broker, topic):
    return sorted(p for p in broker.data_dir.iterdir() if p.is_dir() and p.name.rsplit("-", 1)[0] == topic)


def assert_reborn_empty(broker, topic, partitions):
    """The topic re-created under its old name holds nothing of the old one."""
    b = broker.bootstrap
    for p in range(partitions):
        assert watermarks(b, topic, p) == (0, 0), f"{topic}-{p} serves records of the deleted topic"
    produce(b, topic, [(p, b"new-%d" % p) for p in range(partitions)])
    for p in range(partitions):
        assert consume_all(b, topic, p, 1) == [(0, b"new-%d" % p)]


def produce_5000_over_8(bootstrap, topic):
    produce(bootstrap, topic, [(i % 8, b"old-%05d" % i) for i in range(5000)])
    assert sum(watermarks(bootstrap, topic, p)[1] for p in range(8)) == 5000


def test_crash_during_delete_topics_never_resurrects_the_old_records(make_broker, tmp_path):
    broker = make_broker()
    b = broker.bootstrap
    create(b, "doomed", 8)
    produce_5000_over_8(b, "doomed")
    # The directories as a crash between the metadata commit and their
    # removal would leave them: copied aside (broker stopped, so the copy is
    # consistent and its index files trimmed), put back after the deletion,
    # with a kill -9 in between.
    broker.stop()
    aside = tmp_path / "aside"
    aside.mkdir()
    dirs = partition_dirs(broker, "doomed")
    assert len(dirs) == 8
    for d in dirs:
        assert (d / "partition.metadata").exists()
        shutil.copytree(d, aside / d.name)
    broker.start()
    delete(b, "doomed")
    assert partition_dirs(broker, "doomed") == []
    broker.kill9()
    for d in dirs:
        shutil.copytree(aside / d.name, d)
    broker.start()
    assert "doomed" not in topic_names(b)
    # The restart finished the deletion.
    assert partition_dirs(broker, "doomed") == []
    # Re-created smaller and grown to 8, as in the report.
    create(b, "doomed", 2)
    grow(b, "doomed", 8)
    assert_reborn_empty(broker, "doomed", 8)
    # And nothing comes back at the next (clean) restart either.
    broker.restart()
    for p in range(8):
        assert watermarks(b, "doomed", p) == (0, 1)


def test_kill9_right_after_delete_topics_returns(make_broker):
    broker = make_broker()
    b = broker.bootstrap
    create(b, "gone", 8)
    produce_5000_over_8(b, "gone")
    delete(b, "gone")
    broker.kill9()
    broker.start()
    assert "gone" not in topic_names(b)
    assert partition_dirs(broker, "gone") == []
    create(b, "gone", 8)
    assert_reborn_empty(broker, "gone", 8)


# --- item 8: a bad batch below the recovery point of the active segment ---

BATCH_HEADER_BYTES = 61


def batch_positions(log_file):
    """(position, base offset, size) of each batch in a segment file."""
    data = log_file.read_bytes()
    out = []
    at = 0
    while at + BATCH_HEADER_BYTES <= len(data):
        base, length = struct.unpack_from(">qi", data, at)
        if length < 49 or at + 12 + length > len(data):
            break
        out.append((at, base, 12 + length))
        at += 12 + length
    return out


def checkpointed_recovery_point(broker, topic, partition):
    path = broker.data_dir / "recovery-point-offset-checkpoint"
    if not path.exists():
        return None
    for line in path.read_text().splitlines()[2:]:
        fields = line.split(" ")
        if len(fields) == 3 and fields[0] == topic and fields[1] == str(partition):
            return int(fields[2])
    return None


def wait_for(predicate, what, timeout_s=TIMEOUT_S):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_corrupt_batch_below_the_recovery_point_is_cut_at_restart(make_broker):
    # Checkpoints every second, so the recovery point on disk reaches the end.
    broker = make_broker({"log.flush.offset.checkpoint.interval.ms": "1000"})
    b = broker.bootstrap
    # One batch per record (flushed one by one), each fsynced at once.
    create(b, "bitrot", 1, {"flush.messages": "1"})
    records = 60
    produce(b, "bitrot", [(0, b"%04d-" % i + b"x" * 1000) for i in range(records)], flush_each=True)
    assert watermarks(b, "bitrot", 0) == (0, records)
    wait_for(lambda: checkpointed_recovery_point(broker, "bitrot", 0) == records,
             "the recovery point checkpoint to reach the log end")
    broker.kill9()
    segment = broker.data_dir / "bitrot-0" / "00000000000000000000.log"
    batches = batch_positions(segment)
    assert len(batches) == records
    # Batch 10 (offset 10): ~10 KB into the segment, several index entries
    # (index.interval.bytes 4096) below the recovery point (60).
    position, bad_offset, size = batches[10]
    assert bad_offset == 10
    with open(segment, "r+b") as f:
        f.seek(position + BATCH_HEADER_BYTES + size // 2 - BATCH_HEADER_BYTES // 2)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0x01]))
    broker.start()
    # The log ends at the bad batch; what precedes it reads back CRC-checked.
    assert watermarks(b, "bitrot", 0) == (0, bad_offset)
    got = consume_all(b, "bitrot", 0, bad_offset)
    assert [o for o, _ in got] == list(range(bad_offset))
    assert all(v.startswith(b"%04d-" % o) for o, v in got)
    # New writes land right after the last good batch and read back.
    produce(b, "bitrot", [(0, b"after-restart")])
    assert watermarks(b, "bitrot", 0) == (0, bad_offset + 1)
    got = consume_all(b, "bitrot", 0, bad_offset + 1)
    assert got[-1] == (bad_offset, b"after-restart")
    assert len(got) == bad_offset + 1
