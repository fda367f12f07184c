"""Hostile connections cannot exhaust the broker's memory (issue 10, items 2
and 6): raw-socket clients that claim huge requests and never send them, or
send requests and never read the answers. Each test checks that the broker's
RSS stays under a bound, that another client keeps getting answers, and that
a dataset produced before reads back intact."""

import socket
import struct
import threading
import time

import kafka_wire as wire
from intact import check_intact, seeded  # noqa: F401 (seeded: a fixture)

RSS_BOUND_MB = 200
SOCKET_REQUEST_MAX = 104_857_600  # default socket.request.max.bytes
ANSWER_WITHIN_S = 2.0   # the bound of issue 10 for a fresh client under attack 2
# Under attack 6 the broker first serves the non-readers' requests until
# they are muted (about 600 requests of 1000 topics each, ~1.5 s here on a
# loaded machine); the bound is a generous liveness bound, not a timing test.
BUSY_ANSWER_WITHIN_S = 10.0


def rss_mb(broker):
    with open(f"/proc/{broker.proc.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc status")


def connect(broker):
    return socket.create_connection((broker.host, broker.port), timeout=10)


def metadata_v4(correlation_id, topics):
    """Metadata v4 for the given topic names, without auto-creation: each
    unknown name comes back in the answer (UNKNOWN_TOPIC_OR_PARTITION)."""
    body = struct.pack(">i", len(topics)) + b"".join(wire.string(t) for t in topics)
    body += b"\x00"  # allow_auto_topic_creation = false
    return wire.request(wire.API_METADATA, 4, correlation_id, body)


# About 250 KB of request for about 250 KB of answer.
BIG_METADATA = metadata_v4(5, [f"absent-{i:05d}-" + "x" * 230 for i in range(1000)])


def answers_metadata(broker):
    with connect(broker) as s:
        s.sendall(BIG_METADATA)
        payload = wire.recv_frame(s, BUSY_ANSWER_WITHIN_S)
    return payload is not None and wire.Reader(payload).i32() == 5 and len(payload) > 200_000


def test_size_prefixes_alone_commit_no_memory(seeded):
    """20 connections each claim a 100 MiB request and send 4 KB of it."""
    broker = seeded
    attackers = []
    try:
        for _ in range(20):
            s = connect(broker)
            s.sendall(struct.pack(">i", SOCKET_REQUEST_MAX) + b"\x00" * 4096)
            attackers.append(s)
        peak = 0
        for _ in range(10):
            assert wire.probe_api_versions(broker.host, broker.port, ANSWER_WITHIN_S), \
                "a fresh client's ApiVersions went unanswered"
            peak = max(peak, rss_mb(broker))
        print(f"size prefixes: peak RSS {peak:.0f} MB")
        assert peak < RSS_BOUND_MB, f"broker RSS {peak:.0f} MB"
        check_intact(broker)
        assert rss_mb(broker) < RSS_BOUND_MB
    finally:
        for s in attackers:
            s.close()


class NonReader:
    """Sends big Metadata requests from a thread, as fast as the broker takes
    them, and never reads an answer."""

    def __init__(self, broker, requests=400):
        self.sock = connect(broker)
        self.sock.settimeout(None)
        self.sent = 0
        self.requests = requests
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            for _ in range(self.requests):
                self.sock.sendall(BIG_METADATA)
                self.sent += 1
        except OSError:
            pass  # shut down by close()

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes a blocked sendall
        except OSError:
            pass
        self.thread.join(timeout=30)
        self.sock.close()


def test_clients_that_never_read_cannot_hold_unbounded_responses(seeded):
    broker = seeded
    assert answers_metadata(broker)
    baseline = rss_mb(broker)
    attackers = [NonReader(broker) for _ in range(10)]
    try:
        # Until the attackers are stuck (the broker stopped reading them) or
        # have sent everything: another client is answered all along, and the
        # broker's memory stays bounded.
        peak = 0
        stuck_rounds = 0
        last = None
        for _ in range(200):
            assert answers_metadata(broker), "another client went unanswered"
            assert wire.probe_api_versions(broker.host, broker.port, BUSY_ANSWER_WITHIN_S)
            peak = max(peak, rss_mb(broker))
            progress = [a.sent for a in attackers]
            stuck_rounds = stuck_rounds + 1 if progress == last else 0
            last = progress
            if stuck_rounds >= 5 or all(not a.thread.is_alive() for a in attackers):
                break
        print(f"non-readers: baseline {baseline:.0f} MB, peak RSS {peak:.0f} MB, requests sent {last}")
        assert peak < RSS_BOUND_MB, f"broker RSS {peak:.0f} MB with 10 clients not reading"
        assert sum(last) > 0
    finally:
        for a in attackers:
            a.close()
    # The memory is given back once they are gone.
    after = rss_mb(broker)
    for _ in range(100):
        if after < baseline + 40:
            break
        time.sleep(0.1)
        after = rss_mb(broker)
    print(f"non-readers: RSS {after:.0f} MB after they closed")
    assert after < baseline + 40, f"RSS {after:.0f} MB after the clients closed (before: {baseline:.0f} MB)"
    check_intact(broker)
