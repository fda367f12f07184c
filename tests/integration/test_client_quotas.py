"""Client quota APIs against a real broker (issue 12, item 8), matched
against Kafka 4.x (ClientQuotaControlManager, ClientQuotasImage.describe):

- raw wire (kafka_wire.py, independent of Samsa's codec), decoded
  completely: kafka-python 2.0.2 has no describe/alter client quotas.
- DescribeClientQuotas with nothing configured: error 0, empty entries.
- AlterClientQuotas validate_only stores nothing; a real alter is stored in
  the metadata log, described back with each match type (exact, default,
  any; strict), survives a restart, and remove=true deletes it.
- An unknown quota key: INVALID_REQUEST "Invalid configuration key ...".
"""

import struct

import kafka_wire
from kafka_wire import roundtrip
from kafka_wire import FlexReader

TIMEOUT_S = 30
API_DESCRIBE_CLIENT_QUOTAS, API_ALTER_CLIENT_QUOTAS = 48, 49
INVALID_REQUEST = 42
EXACT, DEFAULT, ANY = 0, 1, 2



def nullable_string(s):
    return struct.pack(">h", -1) if s is None else kafka_wire.string(s)


def compact_nullable_string(s):
    return kafka_wire.uvarint(0) if s is None else kafka_wire.compact_string(s)


def describe(broker, components, strict=False, version=0):
    """(error, message, entries): entries None or
    sorted [(((type, name), ...), {key: value})]."""
    flex = version >= 1
    if flex:
        body = kafka_wire.uvarint(len(components) + 1)
        for etype, match_type, match in components:
            body += kafka_wire.compact_string(etype) + struct.pack(">b", match_type)
            body += compact_nullable_string(match) + kafka_wire.uvarint(0)
        body += struct.pack(">?", strict) + kafka_wire.uvarint(0)
    else:
        body = struct.pack(">i", len(components))
        for etype, match_type, match in components:
            body += kafka_wire.string(etype) + struct.pack(">b", match_type) + nullable_string(match)
        body += struct.pack(">?", strict)
    r = FlexReader(roundtrip(broker, kafka_wire.request(API_DESCRIBE_CLIENT_QUOTAS, version, 7, body,
                                                        flexible_header=flex)))
    assert r.i32() == 7
    if flex:
        r.no_tags()
    s = r.compact_string if flex else r.string

    def count():
        if flex:
            return r.compact_count()
        n = r.i32()
        return None if n < 0 else n

    r.i32()  # throttle
    error, message = r.i16(), s()
    n = count()
    entries = None
    if n is not None:
        entries = []
        for _ in range(n):
            entity = []
            for _ in range(count()):
                entity.append((s(), s()))
                if flex:
                    r.no_tags()
            entity = tuple(sorted(entity))
            values = {}
            for _ in range(count()):
                key, value = s(), struct.unpack(">d", r.take(8))[0]
                if flex:
                    r.no_tags()
                values[key] = value
            if flex:
                r.no_tags()
            entries.append((entity, values))
        entries.sort(key=repr)
    if flex:
        r.no_tags()
    assert r.pos == len(r.data), "trailing bytes in the DescribeClientQuotas response"
    return error, message, entries


def alter(broker, entries, validate_only=False):
    """entries: [(((type, name), ...), [(key, value, remove)])] -> [(entity, error, message)] (v0)."""
    body = struct.pack(">i", len(entries))
    for entity, ops in entries:
        body += struct.pack(">i", len(entity))
        for etype, name in entity:
            body += kafka_wire.string(etype) + nullable_string(name)
        body += struct.pack(">i", len(ops))
        for key, value, remove in ops:
            body += kafka_wire.string(key) + struct.pack(">d?", value, remove)
    body += struct.pack(">?", validate_only)
    r = FlexReader(roundtrip(broker, kafka_wire.request(API_ALTER_CLIENT_QUOTAS, 0, 8, body)))
    assert r.i32() == 8
    r.i32()  # throttle
    out = []
    for _ in range(r.i32()):
        error, message = r.i16(), r.string()
        entity = tuple((r.string(), r.string()) for _ in range(r.i32()))
        out.append((entity, error, message))
    assert r.pos == len(r.data), "trailing bytes in the AlterClientQuotas response"
    return out


def by_repr(entries):
    """The order describe() returns entries in (None names sort by repr)."""
    return sorted(entries, key=repr)


ALICE = (("user", "alice"),)
ALICE_APP = (("client-id", "app"), ("user", "alice"))
DEFAULT_USER = (("user", None),)


def test_describe_without_quotas_is_empty(broker):
    assert describe(broker, []) == (0, None, [])
    assert describe(broker, [("user", ANY, None)], version=1) == (0, None, [])


def test_alter_describe_restart_remove(broker):
    # validate_only: answered as a real alter, nothing stored.
    assert alter(broker, [(ALICE, [("producer_byte_rate", 1024.0, False)])], validate_only=True) == [
        (ALICE, 0, None)]
    assert describe(broker, [])[2] == []

    answers = alter(broker, [(ALICE, [("producer_byte_rate", 1024.0, False), ("request_percentage", 12.5, False)]),
                             (ALICE_APP, [("consumer_byte_rate", 2048.0, False)]),
                             (DEFAULT_USER, [("consumer_byte_rate", 512.0, False)])])
    assert [a[1] for a in answers] == [0, 0, 0], answers

    alice = (ALICE, {"producer_byte_rate": 1024.0, "request_percentage": 12.5})
    alice_app = (ALICE_APP, {"consumer_byte_rate": 2048.0})
    default_user = (DEFAULT_USER, {"consumer_byte_rate": 512.0})
    assert describe(broker, []) == (0, None, by_repr([alice, alice_app, default_user]))
    assert describe(broker, [("user", EXACT, "alice")])[2] == by_repr([alice, alice_app])
    assert describe(broker, [("user", EXACT, "alice")], strict=True)[2] == [alice]
    assert describe(broker, [("user", DEFAULT, None)])[2] == [default_user]
    assert describe(broker, [("user", ANY, None)], strict=True, version=1)[2] == by_repr([alice, default_user])
    assert describe(broker, [("client-id", ANY, None)])[2] == [alice_app]

    broker.restart()  # the quotas are in the metadata log
    assert describe(broker, []) == (0, None, by_repr([alice, alice_app, default_user]))

    assert alter(broker, [(ALICE, [("producer_byte_rate", 0.0, True)]),
                          (ALICE_APP, [("consumer_byte_rate", 0.0, True)])]) == [(ALICE, 0, None), (ALICE_APP, 0, None)]
    assert describe(broker, [("user", ANY, None)])[2] == by_repr([(ALICE, {"request_percentage": 12.5}), default_user])


def test_alter_refusals(broker):
    [(_, error, message)] = alter(broker, [(ALICE, [("bogus_rate", 1.0, False)])])
    assert (error, message) == (INVALID_REQUEST, "Invalid configuration key bogus_rate")
    [(_, error, message)] = alter(broker, [(ALICE, [("producer_byte_rate", 1.5, False)])])
    assert (error, message) == (INVALID_REQUEST, "producer_byte_rate cannot be a fractional value.")
    ip = (("ip", "10.0.0.1"),)
    [(_, error, message)] = alter(broker, [(ip, [("producer_byte_rate", 1.0, False)])])
    assert (error, message) == (INVALID_REQUEST, "Invalid configuration key producer_byte_rate")
    [(_, error, _m)] = alter(broker, [(ip, [("connection_creation_rate", 10.0, False)])])
    assert error == 0
    [(_, error, message)] = alter(broker, [((("group", "g"),), [("producer_byte_rate", 1.0, False)])])
    assert (error, message) == (INVALID_REQUEST, "Unhandled client quota entity type: group")
    assert describe(broker, [("ip", ANY, None)])[2] == [(ip, {"connection_creation_rate": 10.0})]
    assert describe(broker, [("user", ANY, None)])[2] == []
    error, message, entries = describe(broker, [("ip", ANY, None), ("user", ANY, None)])
    assert (error, entries) == (INVALID_REQUEST, None), message
