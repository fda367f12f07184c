"""The history recorder: one JSON object a line (docs/testing.md, "History
files"), appended under a lock in the order events happened, each with
`time` (seconds since the run started). samsa-sim --check-history judges it."""

import json
import threading
import time


class History:
    def __init__(self, path, fsync_every_message=False):
        self.path = path
        self._file = open(path, "w", encoding="utf-8")
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self.counts = {}
        self.record("config", fsync_every_message=fsync_every_message)

    def now(self):
        """Seconds since the run started, the clock every event is stamped with."""
        return time.monotonic() - self._t0

    def record(self, type_, **fields):
        event = {"type": type_, "time": round(time.monotonic() - self._t0, 4)}
        event.update(fields)
        line = json.dumps(event, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")
            self.counts[type_] = self.counts.get(type_, 0) + 1

    # The event types, one method each.
    def sent(self, partition, value, acks):
        self.record("sent", partition=partition, values=[value], acks=acks)

    def ack(self, partition, offset, value, acks):
        self.record("ack", partition=partition, offset=offset, values=[value], acks=acks)

    def error(self, partition, value, error):
        self.record("error", partition=partition, values=[value], error=error)

    def fetch(self, partition, fetch_offset, high_watermark, records):
        self.record("fetch", partition=partition, offset=fetch_offset, high_watermark=high_watermark,
                    records=[[o, v] for o, v in records])

    def full_read(self, partition, records):
        self.record("full_read", partition=partition, records=[[o, v] for o, v in records])

    def crash(self, kind="process"):
        self.record("crash", kind=kind)

    def resumed(self):
        self.record("resumed")

    def fault(self, what, **fields):
        self.record("fault", what=what, **fields)

    def note(self, what, **fields):
        self.record("note", what=what, **fields)

    def close(self):
        with self._lock:
            if not self._file.closed:
                self._file.close()
