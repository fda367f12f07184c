"""Just enough of the Kafka wire protocol, by hand, for tests that must send
bytes no well-behaved client would send (test_bad_input.py) and for the
harness's readiness probe. Independent of Samsa's own codec on purpose: a
second implementation written from the protocol description.

Framing: every request and response is an int32 big-endian size followed by
that many bytes. Request header v1: api_key int16, api_version int16,
correlation_id int32, client_id nullable string (int16 length); header v2
adds an empty tagged-field section (uvarint 0). Response header v0:
correlation_id int32 (ApiVersions responses always use v0).
"""

import select
import socket
import struct

API_PRODUCE = 0
API_FETCH = 1
API_METADATA = 3
API_API_VERSIONS = 18
API_INIT_PRODUCER_ID = 22

NONE = 0
CORRUPT_MESSAGE = 2
MESSAGE_TOO_LARGE = 10
INVALID_TIMESTAMP = 32
UNSUPPORTED_VERSION = 35
INVALID_RECORD = 87


def _crc32c_table():
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC32C_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def varint(n: int) -> bytes:
    """Zig-zag signed varint (also used for varlong)."""
    return uvarint((n << 1) ^ (n >> 63))


def string(s) -> bytes:
    if s is None:
        return struct.pack(">h", -1)
    raw = s.encode() if isinstance(s, str) else s
    return struct.pack(">h", len(raw)) + raw


def compact_string(s: str) -> bytes:
    raw = s.encode()
    return uvarint(len(raw) + 1) + raw


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def request(api_key, api_version, correlation_id, body, client_id="samsa-test",
            flexible_header=False) -> bytes:
    """A framed request (header v1, or v2 when flexible_header)."""
    header = struct.pack(">hhi", api_key, api_version, correlation_id) + string(client_id)
    if flexible_header:
        header += uvarint(0)
    return frame(header + body)


def recv_exact(sock, n, deadline_s):
    """Reads n bytes; returns None on EOF/reset. Raises TimeoutError when the
    peer neither answers nor closes within deadline_s."""
    buf = bytearray()
    sock.settimeout(deadline_s)
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except (ConnectionResetError, BrokenPipeError):
            return None
        except socket.timeout:
            raise TimeoutError(f"no data or close within {deadline_s}s")
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def recv_frame(sock, timeout_s=10.0):
    """The next response payload, or None if the peer closed the connection."""
    head = recv_exact(sock, 4, timeout_s)
    if head is None:
        return None
    (size,) = struct.unpack(">i", head)
    if size < 0 or size > 256 * 1024 * 1024:
        raise AssertionError(f"broker sent an invalid frame size {size}")
    return recv_exact(sock, size, timeout_s)


def roundtrip(broker, payload, timeout_s=30.0):
    """Sends one request frame on a new connection; returns its response
    payload (fails the test if the broker closes the connection instead)."""
    with socket.create_connection((broker.host, broker.port), timeout=timeout_s) as s:
        s.sendall(payload)
        response = recv_frame(s, timeout_s)
    assert response is not None, "broker closed the connection"
    return response


def closed_by_peer(sock, timeout_s=10.0) -> bool:
    """True if the peer closes (EOF or reset) within timeout_s without sending."""
    sock.settimeout(timeout_s)
    try:
        ready, _, _ = select.select([sock], [], [], timeout_s)
        if not ready:
            return False
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True


class Reader:
    """Bounded big-endian reader over a response payload."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise AssertionError(f"response truncated at {self.pos} (+{n} > {len(self.data)})")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def i8(self):
        return struct.unpack(">b", self.take(1))[0]

    def i16(self):
        return struct.unpack(">h", self.take(2))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def i64(self):
        return struct.unpack(">q", self.take(8))[0]

    def string(self):
        n = self.i16()
        return None if n < 0 else self.take(n).decode()


class FlexReader(Reader):
    """Reader plus the compact encodings of flexible versions (KIP-482)."""

    def uvarint(self):
        shift, value = 0, 0
        for _ in range(5):
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
        raise AssertionError("uvarint longer than 5 bytes")

    def compact_string(self):
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1).decode()

    def compact_bytes(self):
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1)

    def compact_count(self):
        n = self.uvarint()
        if n - 1 > len(self.data) - self.pos:
            raise AssertionError(f"array count {n - 1} exceeds the bytes left")
        return None if n == 0 else n - 1

    def compact_array(self, element):
        n = self.compact_count()
        return None if n is None else [element() for _ in range(n)]

    def boolean(self):
        value = self.i8()
        assert value in (0, 1)
        return value == 1

    def uuid(self):
        return self.take(16)

    def tags(self):
        """Skips a tagged-field section; returns {tag: raw bytes}."""
        out = {}
        for _ in range(self.uvarint()):
            tag = self.uvarint()
            out[tag] = self.take(self.uvarint())
        return out

    def no_tags(self):
        assert self.uvarint() == 0, "unexpected tagged fields"

    def done(self):
        assert self.pos == len(self.data), f"{len(self.data) - self.pos} bytes left over"


def api_versions_v0(correlation_id) -> bytes:
    return request(API_API_VERSIONS, 0, correlation_id, b"")


def parse_api_versions_v0(payload):
    """(correlation_id, error_code, {api_key: (min, max)}) of a v0 response."""
    r = Reader(payload)
    correlation_id = r.i32()
    error = r.i16()
    count = r.i32()
    versions = {}
    for _ in range(max(count, 0)):
        key, lo, hi = r.i16(), r.i16(), r.i16()
        versions[key] = (lo, hi)
    return correlation_id, error, versions


def probe_api_versions(host, port, timeout_s=2.0) -> bool:
    """True if the broker answers ApiVersions v0 with our correlation id."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as s:
            s.sendall(api_versions_v0(7))
            payload = recv_frame(s, timeout_s)
            return payload is not None and Reader(payload).i32() == 7
    except (OSError, TimeoutError, AssertionError):
        return False


def record(key, value, offset_delta, timestamp_delta=0) -> bytes:
    body = b"\x00" + varint(timestamp_delta) + varint(offset_delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += uvarint(0)  # no headers
    return varint(len(body)) + body


def record_batch(records, base_timestamp_ms, corrupt_crc=False, producer=(-1, -1, -1), attributes=0) -> bytes:
    """An uncompressed RecordBatch v2 (magic 2) of (key, value) byte pairs;
    `producer` = (producer id, epoch, base sequence) of an idempotent one;
    `attributes` 0x10 for a transactional one."""
    body = b"".join(record(k, v, i) for i, (k, v) in enumerate(records))
    producer_id, epoch, base_sequence = producer
    after_crc = struct.pack(">hiqqqhii", attributes, len(records) - 1, base_timestamp_ms,
                            base_timestamp_ms, producer_id, epoch, base_sequence, len(records)) + body
    crc = crc32c(after_crc)
    if corrupt_crc:
        crc ^= 0xDEADBEEF
    after_length = struct.pack(">ibI", 0, 2, crc) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


def produce_v3(correlation_id, topic, partition, batch, acks=-1, timeout_ms=10000) -> bytes:
    body = string(None) + struct.pack(">hi", acks, timeout_ms)
    body += struct.pack(">i", 1) + string(topic)
    body += struct.pack(">i", 1) + struct.pack(">i", partition)
    body += struct.pack(">i", len(batch)) + batch
    return request(API_PRODUCE, 3, correlation_id, body)


def parse_produce_v3(payload):
    """(correlation_id, [(topic, partition, error_code, base_offset)])."""
    correlation_id, results = parse_produce(payload, 3)
    return correlation_id, [(t, p, error, base) for t, p, error, base, _ in results]


def batch_around(section, count, base_timestamp_ms, attributes=0, max_timestamp_ms=None) -> bytes:
    """A RecordBatch v2 around a records section given as raw bytes (already
    compressed if `attributes` names a codec), with the header a producer
    writes for `count` records and a CRC over exactly these bytes: broken
    records inside a batch whose CRC is right."""
    max_ts = base_timestamp_ms if max_timestamp_ms is None else max_timestamp_ms
    after_crc = struct.pack(">hiqqqhii", attributes, count - 1, base_timestamp_ms, max_ts,
                            -1, -1, -1, count) + section
    after_length = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


def legacy_message_set(values, magic, timestamp_ms=1_700_000_000_000) -> bytes:
    """An uncompressed legacy MessageSet (magic 0 or 1) of (key, value) pairs."""
    import zlib
    out = b""
    for i, (key, value) in enumerate(values):
        body = struct.pack(">bb", magic, 0)
        if magic == 1:
            body += struct.pack(">q", timestamp_ms)
        body += struct.pack(">i", -1) if key is None else struct.pack(">i", len(key)) + key
        body += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
        message = struct.pack(">I", zlib.crc32(body)) + body
        out += struct.pack(">qi", i, len(message)) + message
    return out


def produce(correlation_id, topic, partition, records, version=3, acks=-1, timeout_ms=10000) -> bytes:
    """A framed Produce request, v3-v8 (the non-flexible versions with a
    transactional id); `records` is the raw RECORDS field."""
    assert 3 <= version <= 8
    body = string(None) + struct.pack(">hi", acks, timeout_ms)
    body += struct.pack(">i", 1) + string(topic)
    body += struct.pack(">i", 1) + struct.pack(">i", partition)
    body += struct.pack(">i", len(records)) + records
    return request(API_PRODUCE, version, correlation_id, body)


def parse_produce(payload, version=3):
    """(correlation_id, [(topic, partition, error_code, base_offset, error_message)])
    of a Produce v3-v8 response (error_message is None before v8)."""
    r = Reader(payload)
    correlation_id = r.i32()
    results = []
    for _ in range(r.i32()):
        topic = r.string()
        for _ in range(r.i32()):
            partition, error, base_offset, _log_append_time = r.i32(), r.i16(), r.i64(), r.i64()
            if version >= 5:
                r.i64()  # log_start_offset
            message = None
            if version >= 8:
                for _ in range(r.i32()):  # record_errors
                    r.i32()
                    r.string()
                message = r.string()
            results.append((topic, partition, error, base_offset, message))
    return correlation_id, results


# --- flexible requests (KIP-482): the helpers tests share ------------------

def compact_array(items) -> bytes:
    return uvarint(len(items) + 1) + b"".join(items)


NO_TAGS = b"\x00"


def flexible_call(host, port, api_key, version, body, correlation_id=11, timeout_s=10.0):
    """One flexible request (header v2) on a new connection; a FlexReader
    positioned at the response body (after header v1's tags), or None if the
    peer closed the connection instead of answering."""
    with socket.create_connection((host, int(port)), timeout=timeout_s) as s:
        s.sendall(request(api_key, version, correlation_id, body, flexible_header=True))
        payload = recv_frame(s, timeout_s)
    if payload is None:
        return None
    r = FlexReader(payload)
    assert r.i32() == correlation_id
    if api_key != API_API_VERSIONS:
        r.tags()
    return r


def init_producer_id(broker):
    """InitProducerId v0 without a transactional id (an idempotent
    producer's): (producer id, epoch)."""
    body = string(None) + struct.pack(">i", 60000)
    r = Reader(roundtrip(broker, request(API_INIT_PRODUCER_ID, 0, 5, body)))
    assert r.i32() == 5
    _throttle, error, producer_id, epoch = r.i32(), r.i16(), r.i64(), r.i16()
    assert error == 0, f"InitProducerId error {error}"
    return producer_id, epoch
