"""Hostile use of the broker's resources (issue 10, items 5 and 7), against a
real broker over raw sockets (kafka_wire.py) and kcat:

- decompression bombs: compressed batches of a few KB that expand to 100 MiB.
  Each is refused with MESSAGE_TOO_LARGE after at most
  produce.request.decompressed.max.bytes of work, and while one attacker
  sends them in a loop another client keeps getting prompt answers and the
  data produced before reads back intact;
- a full disk (the log dir on a small tmpfs, filled by a filler file):
  produce gets KAFKA_STORAGE_ERROR, fetch keeps serving what is on disk, and
  once the filler is deleted produce succeeds again, at the next offset,
  without a restart; everything acknowledged reads back, also after kill -9.

Latency bounds here are generous liveness bounds, not performance claims
(bench/decompression_bomb_bench.cc measures the cost of a bomb).
"""

import errno
import os
import socket
import statistics
import struct
import subprocess
import threading
import time
import zlib

import lz4.frame
import pytest

import kafka_wire as wire
from clients import create_topic, kcat_consume

NONE = 0
MESSAGE_TOO_LARGE = 10
KAFKA_STORAGE_ERROR = 56
CODEC_ATTR = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
BOMB_RECORDS = 100                  # records of 1 MiB of zeros: 100 MiB decompressed
BOMB_RECORD_BYTES = 1 << 20
DECOMPRESSED_BUDGET = 64 << 20      # produce.request.decompressed.max.bytes default
TIMEOUT_S = 30


# --- Produce v7 on the wire (zstd needs v7; v4+ knows KAFKA_STORAGE_ERROR) ---

def produce_v7(correlation_id, topic, partition, batch, acks=-1, timeout_ms=10000):
    body = wire.string(None) + struct.pack(">hi", acks, timeout_ms)
    body += struct.pack(">i", 1) + wire.string(topic)
    body += struct.pack(">i", 1) + struct.pack(">i", partition)
    body += struct.pack(">i", len(batch)) + batch
    return wire.request(wire.API_PRODUCE, 7, correlation_id, body)


def parse_produce_v7(payload):
    """(correlation_id, error_code, base_offset) of a one-partition response."""
    r = wire.Reader(payload)
    correlation_id = r.i32()
    assert r.i32() == 1
    r.string()
    assert r.i32() == 1
    _partition, error, base_offset = r.i32(), r.i16(), r.i64()
    return correlation_id, error, base_offset


class Connection:
    """One raw connection; requests one at a time, each answer awaited."""

    def __init__(self, broker):
        self.sock = socket.create_connection((broker.host, broker.port), timeout=TIMEOUT_S)
        self.correlation_id = 0

    def close(self):
        self.sock.close()

    def round_trip(self, frame_for):
        self.correlation_id += 1
        self.sock.sendall(frame_for(self.correlation_id))
        payload = wire.recv_frame(self.sock, timeout_s=TIMEOUT_S)
        assert payload is not None, "the broker closed the connection"
        return payload

    def produce(self, topic, batch):
        """(error_code, base_offset) of producing one batch to partition 0."""
        payload = self.round_trip(lambda c: produce_v7(c, topic, 0, batch))
        correlation_id, error, base_offset = parse_produce_v7(payload)
        assert correlation_id == self.correlation_id
        return error, base_offset

    def api_versions(self):
        payload = self.round_trip(wire.api_versions_v0)
        assert wire.Reader(payload).i32() == self.correlation_id


# --- Batches ---

def v2_batch(records_blob, count, codec_attr, timestamp_ms):
    """A RecordBatch v2 whose records section is `records_blob` (compressed
    with the codec of `codec_attr`, or plain for 0)."""
    after_crc = struct.pack(">hiqqqhii", codec_attr, count - 1, timestamp_ms, timestamp_ms,
                            -1, -1, -1, count) + records_blob
    after_length = struct.pack(">ibI", 0, 2, wire.crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


def bomb_records():
    """The uncompressed records of a bomb, one record at a time."""
    zeros = bytes(BOMB_RECORD_BYTES)
    for i in range(BOMB_RECORDS):
        yield wire.record(None, zeros, i)


def compress_bomb(codec):
    if codec == "zstd":  # Debian has no Python zstd module: the zstd CLI
        proc = subprocess.Popen(["zstd", "-q", "-c", "-3"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        out = []
        reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))
        reader.start()
        for rec in bomb_records():
            proc.stdin.write(rec)
        proc.stdin.close()
        reader.join(timeout=120)
        assert proc.wait(timeout=120) == 0 and out
        return out[0]
    if codec == "gzip":
        z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return b"".join(z.compress(rec) for rec in bomb_records()) + z.flush()
    if codec == "lz4":
        c = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX64KB, content_checksum=False)
        return c.begin() + b"".join(c.compress(rec) for rec in bomb_records()) + c.flush()
    if codec == "snappy":
        # A raw snappy block states its length first: claim 1 GiB. Snappy
        # expands at most ~21:1, so within message.max.bytes (1 MiB) no
        # honest-looking snappy data reaches the bound anyway.
        return wire.uvarint(1 << 30) + b"\x00" * 64
    raise ValueError(codec)


def bomb(codec):
    return v2_batch(compress_bomb(codec), BOMB_RECORDS, CODEC_ATTR[codec], int(time.time() * 1000))


def plain_batch(values):
    return wire.record_batch([(None, v) for v in values], int(time.time() * 1000))


# --- Decompression bombs ---

@pytest.fixture
def seeded(broker):
    create_topic(broker.bootstrap, "seeded", 1)
    create_topic(broker.bootstrap, "target", 1)
    conn = Connection(broker)
    try:
        values = [f"seeded-{i}".encode() for i in range(50)]
        assert conn.produce("seeded", plain_batch(values)) == (NONE, 0)
    finally:
        conn.close()
    return broker, values


def read_values(broker, topic):
    return [text.split(":", 1)[1].encode() for _, text in kcat_consume(broker.bootstrap, topic, 0)]


@pytest.mark.parametrize("codec", ["zstd", "gzip", "lz4", "snappy"])
def test_a_bomb_is_refused_with_message_too_large(seeded, codec):
    broker, seeded_values = seeded
    batch = bomb(codec)
    assert len(batch) < 1_048_588, "the bomb must pass the max.message.bytes check"
    conn = Connection(broker)
    try:
        error, base_offset = conn.produce("target", batch)
        assert (error, base_offset) == (MESSAGE_TOO_LARGE, -1)
        # Nothing was written, the connection still works, and so does the
        # partition.
        assert conn.produce("target", plain_batch([b"after"])) == (NONE, 0)
    finally:
        conn.close()
    assert read_values(broker, "target") == [b"after"]
    assert read_values(broker, "seeded") == seeded_values


def test_bombs_in_a_loop_do_not_stall_other_clients(seeded):
    broker, seeded_values = seeded
    batch = bomb("zstd")  # the cheapest bomb to send: ~10 KB for 100 MiB
    attacker_answers = []
    attack_errors = []
    stop = threading.Event()

    def attack():
        conn = Connection(broker)
        try:
            for _ in range(40):  # bounded: 40 bombs, each decompressing up to 64 MiB
                if stop.is_set():
                    break
                started = time.monotonic()
                error, _ = conn.produce("target", batch)
                attacker_answers.append(time.monotonic() - started)
                if error != MESSAGE_TOO_LARGE:
                    attack_errors.append(error)
        except Exception as e:  # reported below, in the test's thread
            attack_errors.append(repr(e))
        finally:
            conn.close()

    attacker = threading.Thread(target=attack)
    victim = Connection(broker)
    latencies = []
    produced = []
    try:
        attacker.start()
        deadline = time.monotonic() + 120
        i = 0
        while attacker.is_alive() and time.monotonic() < deadline and i < 2000:
            started = time.monotonic()
            if i % 2 == 0:
                victim.api_versions()
            else:
                value = f"during-{i}".encode()
                assert victim.produce("seeded", plain_batch([value]))[0] == NONE
                produced.append(value)
            latencies.append(time.monotonic() - started)
            i += 1
    finally:
        stop.set()
        attacker.join(timeout=300)
        victim.close()
    assert not attacker.is_alive()
    assert attack_errors == [], attack_errors
    assert len(attacker_answers) == 40
    assert len(latencies) >= 10, f"only {len(latencies)} answers during the attack"
    median = statistics.median(latencies)
    print(f"victim: {len(latencies)} answers, median {median * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms; "
          f"attacker: median answer {statistics.median(attacker_answers) * 1000:.1f} ms")
    assert median < 0.1, f"median latency {median * 1000:.0f} ms under attack"
    assert max(latencies) < 2.0, f"an answer took {max(latencies):.1f} s under attack"
    assert read_values(broker, "seeded") == seeded_values + produced
    assert read_values(broker, "target") == []


# --- A full disk ---

def fill(directory, name="filler"):
    """Writes a file until the file system is full; returns its path."""
    path = directory / name
    chunk = b"\xff" * 65536
    with open(path, "wb", buffering=0) as f:
        for _ in range(100_000):  # bounded: far more than any test disk holds
            try:
                f.write(chunk)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
                return path
    raise AssertionError("the disk never filled up")


def test_full_disk_refuses_writes_serves_reads_and_recovers_when_space_is_freed(make_broker, tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    # As root (CI runs as root): a failed mount fails the test.
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], check=True)
    try:
        broker = make_broker({"log.dirs": str(disk)})
        create_topic(broker.bootstrap, "full", 1)
        conn = Connection(broker)
        acked = []
        try:
            for i in range(20):
                values = [f"before-{i}-{j}".encode() for j in range(10)]
                assert conn.produce("full", plain_batch(values)) == (NONE, len(acked))
                acked += values
            filler = fill(disk)
            # Writes are refused with KAFKA_STORAGE_ERROR, and stay refused
            # while the disk is full; nothing of them is written.
            big = plain_batch([b"x" * 200_000])
            for _ in range(3):
                assert conn.produce("full", big) == (KAFKA_STORAGE_ERROR, -1)
            # Reads go on: everything acknowledged is served.
            assert read_values(broker, "full") == acked
            assert wire.probe_api_versions(broker.host, broker.port)
            # Space is back: produce succeeds again within a bound (the log
            # retries its writes about every second), at the next offset.
            os.unlink(filler)
            deadline = time.monotonic() + 20
            result = None
            while time.monotonic() < deadline:
                result = conn.produce("full", big)
                if result[0] != KAFKA_STORAGE_ERROR:
                    break
                time.sleep(0.1)
            assert result == (NONE, len(acked)), result
            acked.append(b"x" * 200_000)
            for i in range(5):
                values = [f"after-{i}-{j}".encode() for j in range(10)]
                assert conn.produce("full", plain_batch(values)) == (NONE, len(acked))
                acked += values
        finally:
            conn.close()
        offsets_and_values = kcat_consume(broker.bootstrap, "full", 0)
        assert [o for o, _ in offsets_and_values] == list(range(len(acked)))
        assert read_values(broker, "full") == acked
        # No torn bytes on disk either: recovery after kill -9 finds the same.
        broker.kill9_restart()
        assert read_values(broker, "full") == acked
        broker.stop()
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
