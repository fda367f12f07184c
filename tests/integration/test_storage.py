"""Storage behaviour seen by real clients (python3-confluent-kafka / librdkafka)
against a real broker (issue 3):

- retention.bytes / retention.ms delete whole segments; the low watermark
  (ListOffsets earliest) advances; an expired active segment is rolled too;
- a Fetch below the log start gets OFFSET_OUT_OF_RANGE, which the client
  resolves per auto.offset.reset (earliest / latest / error);
- a compacted topic is cleaned in the background and a consumer from the
  beginning sees every key's latest value, at its original offset;
- kill -9 and restart serve exactly the acknowledged prefix, also with
  garbage appended to the active segment; `samsa dump-log` prints it;
- a full disk (a small tmpfs as one of log.dirs) refuses writes to the
  partition there with KAFKA_STORAGE_ERROR (its reads go on) while
  partitions in the other dir keep serving (recovery once space is freed:
  test_hostile_resources.py).
"""

import os
import subprocess
import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness import samsa_bin

TIMEOUT_S = 30
FAST_HOUSEKEEPING = {"log.retention.check.interval.ms": "1000"}


def create(bootstrap, name, config=None, partitions=1):
    client = AdminClient({"bootstrap.servers": bootstrap})
    futures = client.create_topics([NewTopic(name, partitions, 1, config=config or {})],
                                   operation_timeout=TIMEOUT_S, request_timeout=TIMEOUT_S)
    futures[name].result(timeout=TIMEOUT_S)


def produce(bootstrap, topic, records, partition=0, config=None):
    """records: [(key, value, timestamp_ms or None)]; returns delivery errors."""
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, **(config or {})})

    def on_delivery(err, _msg):
        if err is not None:
            errors.append(err)

    for key, value, ts in records:
        kwargs = {"timestamp": ts} if ts is not None else {}
        producer.produce(topic, value=value, key=key, partition=partition, on_delivery=on_delivery, **kwargs)
        producer.poll(0)
    assert producer.flush(TIMEOUT_S) == 0
    return errors


def watermarks(bootstrap, topic, partition=0):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "storage-watermarks"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT_S, cached=False)
    finally:
        consumer.close()


def consume_from(bootstrap, topic, offset, reset="earliest", partition=0, until=None, max_s=TIMEOUT_S):
    """[(offset, key, value)] read from `offset` until the high watermark
    (or `until`); a consumer error is returned as ("error", code)."""
    high = until if until is not None else watermarks(bootstrap, topic, partition)[1]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"storage-{time.monotonic_ns()}",
                         "auto.offset.reset": reset, "enable.auto.commit": False,
                         "enable.partition.eof": True})
    out = []
    try:
        consumer.assign([TopicPartition(topic, partition, offset)])
        deadline = time.monotonic() + max_s
        while time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    if not out or out[-1][0] + 1 >= high:
                        return out
                    continue
                return ("error", msg.error().code())
            out.append((msg.offset(), msg.key(), msg.value()))
            if msg.offset() + 1 >= high:
                return out
        raise AssertionError(f"timed out reading {topic} from {offset}: got {len(out)} records")
    finally:
        consumer.close()


def segment_files(broker, topic, partition=0):
    d = broker.data_dir / f"{topic}-{partition}"
    return sorted(p for p in d.iterdir() if p.suffix == ".log")


def wait_for(predicate, what, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.broker_overrides(FAST_HOUSEKEEPING)
def test_retention_bytes_deletes_segments_and_earliest_advances(broker):
    b = broker.bootstrap
    create(b, "sized", {"segment.bytes": "2048", "retention.bytes": "6144"})
    assert produce(b, "sized", [(None, b"v%04d" % i + b"x" * 100, None) for i in range(300)],
                   config={"batch.size": 1000}) == []
    assert len(segment_files(broker, "sized")) > 6
    low, high = wait_for(lambda: (lambda w: w if w[0] > 0 else None)(watermarks(b, "sized")),
                         "retention to advance the log start")
    assert high == 300
    wait_for(lambda: len(segment_files(broker, "sized")) <= 5, "segments to be deleted")
    # Reading from offset 0 (below the start) resets to the earliest offset.
    records = consume_from(b, "sized", 0, reset="earliest")
    low = watermarks(b, "sized")[0]
    assert records[0][0] == low and records[-1][0] == 299
    assert [r[2][:5] for r in records] == [b"v%04d" % i for i in range(low, 300)]
    # auto.offset.reset=error surfaces OFFSET_OUT_OF_RANGE to the application.
    assert consume_from(b, "sized", 0, reset="error") == ("error", KafkaError._AUTO_OFFSET_RESET)
    # latest: reset to the end, nothing to read.
    assert consume_from(b, "sized", 0, reset="latest") == []
    broker.restart()  # the log start offset is checkpointed
    assert watermarks(b, "sized")[0] >= low


@pytest.mark.broker_overrides(FAST_HOUSEKEEPING)
def test_retention_ms_expires_everything_including_the_active_segment(broker):
    b = broker.bootstrap
    create(b, "timed", {"retention.ms": "60000"})
    old = int(time.time() * 1000) - 3600_000
    assert produce(b, "timed", [(None, b"old%d" % i, old + i) for i in range(20)]) == []
    assert watermarks(b, "timed") == (0, 20)
    wait_for(lambda: watermarks(b, "timed") == (20, 20), "the expired active segment to go")
    assert produce(b, "timed", [(None, b"fresh", None)]) == []
    assert consume_from(b, "timed", 0) == [(20, None, b"fresh")]


def test_compacted_topic_consumer_sees_latest_values(broker):
    b = broker.bootstrap
    create(b, "table", {"cleanup.policy": "compact", "segment.bytes": "4096",
                        "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "100"})
    latest = {}
    records = []
    for rnd in range(20):
        for k in range(10):
            key, value = b"key-%d" % k, b"round-%02d-of-key-%d" % (rnd, k) + b"." * 50
            records.append((key, value, None))
            latest[key] = value
    records.append((b"key-3", None, None))  # a tombstone
    del latest[b"key-3"]
    records.append((b"key-4", b"final", None))
    latest[b"key-4"] = b"final"
    assert produce(b, "table", records, config={"batch.size": 1000}) == []
    total = len(records)
    assert watermarks(b, "table") == (0, total)

    def compacted():
        got = consume_from(b, "table", 0)
        return got if len(got) < total // 2 else None

    got = wait_for(compacted, "the cleaner to compact the topic", timeout_s=90)
    seen = {}
    offsets = [o for o, _, _ in got]
    assert offsets == sorted(set(offsets))  # offsets never reordered
    for offset, key, value in got:
        if value is None:
            seen.pop(key, None)
        else:
            seen[key] = value
    assert seen == latest
    assert got[-1][0] == total - 1  # the active segment's records are untouched
    # Offsets are stable: every surviving record is at its original offset.
    for offset, key, value in got:
        assert records[offset][0] == key and records[offset][1] == value
    broker.restart()
    assert consume_from(b, "table", 0) == got


@pytest.mark.broker_overrides({"log.flush.offset.checkpoint.interval.ms": "500"})
def test_rolled_segments_become_durable_off_the_request_path(broker):
    # Each roll's fsync runs on the broker's sync worker; the recovery point
    # (checkpointed every 500 ms) reaches the active segment only once the
    # worker has reported every rolled segment durable.
    b = broker.bootstrap
    create(b, "rolling", {"segment.bytes": "2048"})
    values = [b"r%04d" % i + b"x" * 100 for i in range(300)]
    assert produce(b, "rolling", [(None, v, None) for v in values], config={"batch.size": 1000}) == []
    segments = segment_files(broker, "rolling")
    assert len(segments) > 6
    active_base = int(segments[-1].stem)

    def checkpointed():
        path = broker.data_dir / "recovery-point-offset-checkpoint"
        lines = path.read_text().split("\n")[2:] if path.exists() else []
        return next((int(l.split()[2]) for l in lines if l.startswith("rolling 0 ")), -1)

    wait_for(lambda: checkpointed() >= active_base, "the rolled segments' recovery point")
    broker.kill9()
    broker.start()
    assert [v for _, _, v in consume_from(b, "rolling", 0)] == values


def test_kill9_restart_serves_the_valid_prefix(broker):
    b = broker.bootstrap
    create(b, "crashy")
    values = [b"value-%d" % i for i in range(500)]
    assert produce(b, "crashy", [(None, v, None) for v in values], config={"acks": "all"}) == []
    broker.kill9()
    # A torn write at the tail of the active segment (garbage after the data).
    active = segment_files(broker, "crashy")[-1]
    with open(active, "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00\x00\x01\xf4\x00\x00\x10\x00garbage-that-is-no-batch")
    broker.start()
    got = consume_from(b, "crashy", 0)
    assert [v for _, _, v in got] == values
    assert watermarks(b, "crashy") == (0, 500)
    assert produce(b, "crashy", [(None, b"after", None)]) == []
    assert consume_from(b, "crashy", 500) == [(500, None, b"after")]
    broker.stop()
    out = subprocess.run([samsa_bin(), "dump-log", "--print-data-log", str(active)],
                         capture_output=True, timeout=TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert "baseOffset: 0 " in text and "payload: value-0" in text and "payload: after" in text
    assert "isvalid: true" in text and "isvalid: false" not in text
    index = active.with_suffix(".index")
    out = subprocess.run([samsa_bin(), "dump-log", "--index-sanity-check", str(index)],
                         capture_output=True, timeout=TIMEOUT_S)
    assert out.returncode == 0 and b"index is sane" in out.stdout, out.stdout + out.stderr


def test_disk_full_refuses_writes_to_the_partition_and_others_keep_serving(make_broker, tmp_path):
    small = tmp_path / "small-disk"
    big = tmp_path / "big-disk"
    meta = tmp_path / "meta"
    for d in (small, big, meta):
        d.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(small)], check=True)
    try:
        broker = make_broker({"log.dirs": f"{small},{big}", "metadata.log.dir": str(meta)})
        b = broker.bootstrap
        create(b, "filler")  # the first partition goes to the first (small) dir
        create(b, "healthy")
        assert (small / "filler-0").is_dir() and (big / "healthy-0").is_dir()
        assert produce(b, "healthy", [(None, b"before", None)]) == []
        chunk = b"z" * 100_000
        errors = produce(b, "filler", [(None, chunk, None) for _ in range(60)],
                         config={"retries": 0, "acks": "all", "batch.size": 100_000, "linger.ms": 0})
        delivered = 60 - len(errors)
        codes = {e.code() for e in errors}
        assert KafkaError.KAFKA_STORAGE_ERROR in codes, codes
        # The full partition still serves what it acknowledged; the other
        # dir keeps serving reads and writes.
        got = consume_from(b, "filler", 0, until=delivered, max_s=60)
        assert len(got) == delivered and all(v == chunk for _, _, v in got)
        assert produce(b, "healthy", [(None, b"after", None)]) == []
        assert [v for _, _, v in consume_from(b, "healthy", 0)] == [b"before", b"after"]
        # Nothing acknowledged was damaged: after freeing space and a restart
        # the filler partition serves what it acknowledged.
        broker.stop()
        broker.start()
        low, high = watermarks(b, "filler")
        assert (low, high) == (0, delivered) and delivered > 0
        got = consume_from(b, "filler", 0, max_s=60)
        assert len(got) == high and all(v == chunk for _, _, v in got)
        broker.stop()
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)
