"""Who led what, as each node saw it: evidence for a violation, not judged.

A LeaderWatcher asks every live node (not paused, not killed) for its
Metadata (v7: it names each partition's leader epoch) every
WATCH_INTERVAL_S and records a `note` "leaders" whenever a node's view
changes: {partition: [leader, leader epoch, isr]}. With it a history says
which node led a partition, in which epoch, when a value was acknowledged
or read (librdkafka does not say which broker answered)."""

import socket
import struct
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "integration"))
import kafka_wire  # noqa: E402

WATCH_INTERVAL_S = 0.25
METADATA_TIMEOUT_S = 1.0


def metadata_v7(host, port, topics, timeout_s=METADATA_TIMEOUT_S):
    """{partition name: [leader, leader epoch, isr]} from one node's Metadata v7."""
    body = struct.pack(">i", len(topics)) + b"".join(kafka_wire.string(t) for t in topics) + b"\x00"
    payload = kafka_wire.request(kafka_wire.API_METADATA, 7, 71, body, client_id="chaos-leaders")
    with socket.create_connection((host, port), timeout=timeout_s) as s:
        s.sendall(payload)
        response = kafka_wire.recv_frame(s, timeout_s)
    if response is None:
        raise ConnectionError(f"{host}:{port} closed the connection")
    r = kafka_wire.Reader(response)
    assert r.i32() == 71
    r.i32()  # throttle_time_ms
    for _ in range(r.i32()):
        r.i32(), r.string(), r.i32(), r.string()  # node id, host, port, rack
    r.string()  # cluster id
    r.i32()  # controller id
    view = {}
    for _ in range(r.i32()):
        r.i16()  # error
        name = r.string()
        r.i8()  # is_internal
        for _ in range(r.i32()):
            r.i16()  # error
            index, leader, epoch = r.i32(), r.i32(), r.i32()
            r.take(4 * r.i32())  # replicas
            isr = [r.i32() for _ in range(r.i32())]
            r.take(4 * r.i32())  # offline replicas
            view[f"{name}-{index}"] = [leader, epoch, isr]
    return view


class LeaderWatcher(threading.Thread):
    def __init__(self, history, nodes, topics):
        super().__init__(name="leader-watcher", daemon=True)
        self.history = history
        self.nodes = nodes
        self.topics = list(topics)
        self.last = {}
        self._halt = threading.Event()

    def run(self):
        while not self._halt.wait(WATCH_INTERVAL_S):
            for n in self.nodes:
                if n.paused or not n.running():
                    continue
                try:
                    view = metadata_v7(n.host, n.port, self.topics)
                except Exception:  # down, restarting, not serving yet: no view
                    continue
                if view and view != self.last.get(n.node_id):
                    self.last[n.node_id] = view
                    self.history.note("leaders", node=n.node_id, view=view)

    def stop(self):
        self._halt.set()
        self.join(timeout=10)
