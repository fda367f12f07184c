"""Batches whose CRC is right but whose records are not (issue 10, items 3
and 9). Before, the broker acknowledged them and every consumer reading in
order stopped at that batch for ever. Each test seeds a topic through
librdkafka, sends one hostile Produce request over a raw socket, checks
Kafka's error code, that nothing was written (high watermark unchanged),
that the broker still answers, and that a consumer reads the seeded data
plus a record produced after the attack: no stall.

Also: legacy message sets (magic 0/1) on Produce v3 and later, which Kafka
refuses with INVALID_RECORD; CreateTime -5, which Kafka accepts under the
default message.timestamp.before.max.ms (Long.MAX_VALUE) and refuses with
INVALID_TIMESTAMP once the topic bounds it; and `samsa dump-log`, which
must exit non-zero on a segment holding such a batch."""

import gzip
import subprocess

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

import kafka_wire as wire
from clients import create_topic
from harness import samsa_bin
from intact import (SEEDED, TOPIC, check_intact, high_watermark, produce_raw, produce_values,
                    seeded)  # noqa: F401 (seeded is a fixture)

NOW_ISH_MS = 1_700_000_000_000
GZIP = 1


def rec(offset_delta, key=b"k", value=b"v", header_count=0, headers=b"", tail=b"", length=None):
    """One record, field by field, so that each field can be broken."""
    body = b"\x00" + wire.varint(0) + wire.varint(offset_delta)
    body += wire.varint(len(key)) + key + wire.varint(len(value)) + value
    body += wire.varint(header_count) + headers + tail
    return wire.varint(len(body) if length is None else length) + body


def good(n):
    return b"".join(rec(i, value=f"hostile-{i}".encode()) for i in range(n))


def key_beyond_record():
    r = bytearray(rec(0, key=b"kk"))
    r[4] = 40  # keyLength 20 in a 9-byte record
    return bytes(r)


# (name, records section, recordsCount in the header). The first six are
# the batches a fuzzer got acknowledged before this fix. The last one Kafka
# takes (it ignores inner offset deltas of uncompressed batches, so its
# consumers then see offsets the log never assigned); Samsa refuses it as it
# already did inside compressed batches.
MALFORMED = [
    ("count_above_records", good(3), 4),
    ("count_below_records", good(3), 2),
    ("record_length_2_pow_32_minus_1", b"\xff\xff\xff\xff\x0f" + good(1), 1),
    ("key_length_beyond_record", key_beyond_record(), 1),
    ("junk_after_last_record", good(2) + b"\x00\x01\x02", 2),
    ("header_count_2_pow_31_minus_1", rec(0, header_count=2**31 - 1), 1),
    ("bytes_left_inside_record", rec(0, tail=b"\xaa\xbb"), 1),
    ("offset_deltas_not_in_order", rec(0) + rec(5), 2),
]


def consumer_times(broker, topic):
    """(timestamp type, timestamp) of every record of partition 0."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "times"})
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        out = []
        for _ in range(30):
            for m in consumer.consume(num_messages=100, timeout=1.0):
                assert m.error() is None, str(m.error())
                out.append(m.timestamp())
            if out:
                break
        return out
    finally:
        consumer.close()


def attack_then_check(broker, records, expected_error, version=3):
    """Sends `records`, expects `expected_error`, then proves nothing was
    written and nothing stalls: a record produced afterwards reads back
    right after the seeded ones."""
    error, message = produce_raw(broker, records, version=version)
    assert error == expected_error, f"error {error} ({message})"
    assert high_watermark(broker) == len(SEEDED), "the refused batch was written"
    produce_values(broker, ["after-the-attack"])
    check_intact(broker, extra=["after-the-attack"])
    return message


@pytest.mark.parametrize("name,section,count", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_uncompressed_broken_records_are_refused(seeded, name, section, count):
    attack_then_check(seeded, wire.batch_around(section, count, NOW_ISH_MS), wire.INVALID_RECORD)


@pytest.mark.parametrize("name,section,count", MALFORMED[:5], ids=[m[0] for m in MALFORMED[:5]])
def test_compressed_broken_records_are_refused_the_same_way(seeded, name, section, count):
    batch = wire.batch_around(gzip.compress(section), count, NOW_ISH_MS, attributes=GZIP)
    attack_then_check(seeded, batch, wire.INVALID_RECORD)


def test_error_message_says_what_is_wrong(seeded):
    batch = wire.batch_around(rec(0, header_count=2**31 - 1), 1, NOW_ISH_MS)
    message = attack_then_check(seeded, batch, wire.INVALID_RECORD, version=8)
    assert message and "header count" in message, message


def test_broken_batch_after_a_good_one_writes_neither(seeded):
    records = (wire.batch_around(good(2), 2, NOW_ISH_MS) +
               wire.batch_around(good(2) + b"\x00", 2, NOW_ISH_MS))
    attack_then_check(seeded, records, wire.INVALID_RECORD)


def test_sound_raw_batch_with_headers_is_accepted(seeded):
    """The positive control for the encoder above: a header, a null-valued header."""
    headers = wire.varint(1) + b"h" + wire.varint(2) + b"hv" + wire.varint(1) + b"n" + wire.varint(-1)
    batch = wire.batch_around(rec(0, value=b"raw-ok", header_count=2, headers=headers), 1, NOW_ISH_MS)
    assert produce_raw(seeded, batch)[0] == wire.NONE
    check_intact(seeded, extra=["raw-ok"])


# ---- item 9: legacy magic on Produce v3+, timestamps ----

@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("version", [3, 8])
def test_legacy_magic_on_produce_v3_and_later_is_invalid_record(seeded, magic, version):
    legacy = wire.legacy_message_set([(b"k", b"legacy")], magic)
    message = attack_then_check(seeded, legacy, wire.INVALID_RECORD, version=version)
    if version >= 8:
        assert "magic version 2" in message, message


def test_negative_create_time_is_accepted_under_default_bounds(broker):
    """Kafka's LogValidator checks CreateTime only against
    message.timestamp.before/after.max.ms, whose defaults accept any value:
    a Kafka broker stores -5 as it is, and so does Samsa."""
    create_topic(broker.bootstrap, "minus-five", 1)
    batch = wire.batch_around(rec(0, value=b"early"), 1, -5)
    assert produce_raw(broker, batch, topic="minus-five")[0] == wire.NONE
    assert consumer_times(broker, "minus-five") == [(1, -5)]  # TIMESTAMP_CREATE_TIME


def test_create_time_outside_the_topic_bounds_is_invalid_timestamp(broker):
    create_topic(broker.bootstrap, TOPIC, 1, config={"message.timestamp.before.max.ms": "3600000"})
    produce_values(broker, SEEDED)
    message = attack_then_check(broker, wire.batch_around(rec(0), 1, -5), wire.INVALID_TIMESTAMP, version=8)
    assert "Timestamp -5" in message, message


@pytest.mark.broker_overrides({"log.message.timestamp.after.max.ms": "60000"})
def test_broker_wide_after_max_applies_to_topics(seeded):
    future = wire.batch_around(rec(0), 1, 4_000_000_000_000)  # the year 2096
    attack_then_check(seeded, future, wire.INVALID_TIMESTAMP)


# ---- samsa dump-log ----

def dump_log(path):
    return subprocess.run([samsa_bin(), "dump-log", str(path)], capture_output=True, timeout=60)


def test_dump_log_exits_non_zero_on_broken_records(tmp_path):
    sound = tmp_path / "00000000000000000000.log"
    sound.write_bytes(wire.batch_around(good(2), 2, NOW_ISH_MS))
    ok = dump_log(sound)
    assert ok.returncode == 0, ok.stdout.decode()

    broken = tmp_path / "00000000000000000002.log"
    broken.write_bytes(wire.batch_around(good(2), 2, NOW_ISH_MS) +
                       wire.batch_around(rec(0, header_count=2**31 - 1), 1, NOW_ISH_MS) +
                       wire.batch_around(good(1), 1, NOW_ISH_MS))
    bad = dump_log(broken)
    out = bad.stdout.decode()
    assert bad.returncode == 1, out
    assert "malformed batch at position" in out and "header count" in out, out
    assert out.count("baseOffset:") == 3, "the dump stopped at the broken batch"
