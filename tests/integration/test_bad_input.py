"""Bad input over raw sockets never takes the broker down or damages data:
each test seeds a topic through a real client, sends something malformed,
checks the broker's answer (Kafka's error code or a closed connection),
then checks the broker still answers and the seeded data reads back intact."""

import struct

import kafka_wire as wire
from intact import check_intact, connect, produce_raw, seeded  # noqa: F401 (seeded is a fixture)

ABOVE_SOCKET_REQUEST_MAX = 2**31 - 1   # default socket.request.max.bytes is 100 MiB
ABOVE_MESSAGE_MAX = 1_200_000          # default message.max.bytes is 1048588


def test_truncated_frame_then_close(seeded):
    with connect(seeded) as s:
        s.sendall(struct.pack(">i", 100) + b"\x00\x12\x00\x00\x00\x00")
    check_intact(seeded)


def test_absurd_length_closes_connection(seeded):
    with connect(seeded) as s:
        s.sendall(struct.pack(">i", ABOVE_SOCKET_REQUEST_MAX) + b"\x00" * 64)
        assert wire.closed_by_peer(s), "connection left open after an oversized frame"
    check_intact(seeded)


def test_negative_length_closes_connection(seeded):
    with connect(seeded) as s:
        s.sendall(struct.pack(">i", -5) + b"\x00" * 8)
        assert wire.closed_by_peer(s), "connection left open after a negative length"
    check_intact(seeded)


def test_unknown_api_key(seeded):
    with connect(seeded) as s:
        s.sendall(wire.request(9999, 0, 77, b""))
        payload = wire.recv_frame(s, timeout_s=10)   # None = closed, as Kafka does
        if payload is not None:
            assert wire.Reader(payload).i32() == 77
    check_intact(seeded)


def test_unsupported_api_versions_version(seeded):
    body = wire.compact_string("samsa-test") + wire.compact_string("1.0") + wire.uvarint(0)
    with connect(seeded) as s:
        s.sendall(wire.request(wire.API_API_VERSIONS, 999, 55, body, flexible_header=True))
        payload = wire.recv_frame(s, timeout_s=10)
    assert payload is not None, "expected a v0 ApiVersions error response"
    correlation_id, error, versions = wire.parse_api_versions_v0(payload)
    assert correlation_id == 55
    assert error == wire.UNSUPPORTED_VERSION
    low, high = versions[wire.API_API_VERSIONS]
    assert low == 0 and high >= 3
    check_intact(seeded)


def test_valid_raw_produce_is_accepted(seeded):
    """The positive control for the encoder used by the two tests below."""
    batch = wire.record_batch([(b"k", b"raw-ok")], base_timestamp_ms=1_700_000_000_000)
    assert produce_raw(seeded, batch)[0] == wire.NONE
    check_intact(seeded, extra=["raw-ok"])


def test_corrupt_crc_is_rejected(seeded):
    batch = wire.record_batch([(b"k", b"corrupt")], 1_700_000_000_000, corrupt_crc=True)
    assert produce_raw(seeded, batch)[0] == wire.CORRUPT_MESSAGE
    check_intact(seeded)


def test_batch_over_message_max_bytes_is_rejected(seeded):
    batch = wire.record_batch([(b"k", b"x" * ABOVE_MESSAGE_MAX)], 1_700_000_000_000)
    assert produce_raw(seeded, batch)[0] == wire.MESSAGE_TOO_LARGE
    check_intact(seeded)
