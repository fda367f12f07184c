"""Runs KafkaJS (tests/kafkajs/client.js, installed by scripts/install-kafkajs.sh
into tests/kafkajs/node_modules) as a child process and reads its results:
one JSON object per stdout line, {"event": ...}.

run_kafkajs: one subcommand to its end, its events returned.
KafkaJSProcess: a subcommand that runs until stopped (stdin closed); its
    events are collected by a reader thread, waited on with a bound, and
    the process is stopped by PID (closed stdin, then SIGKILL) also when the
    test fails.
"""

import json
import os
import shutil
import subprocess
import threading
import time

from harness import REPO

CLIENT = REPO / "tests" / "kafkajs" / "client.js"
KAFKAJS = REPO / "tests" / "kafkajs" / "node_modules" / "kafkajs" / "package.json"


def node():
    binary = shutil.which("node")
    assert binary, "node is missing: scripts/install-kafkajs.sh installs it"
    assert KAFKAJS.exists(), f"{KAFKAJS} is missing: run scripts/install-kafkajs.sh (make deps does)"
    return binary


def _command(subcommand, args):
    return [node(), str(CLIENT), subcommand, json.dumps(args)]


# KafkaJS 2 warns once per producer that its default partitioner changed in
# 2.0; the records here name their partitions, so the warning is only noise.
ENV = {**os.environ, "KAFKAJS_NO_PARTITIONER_WARNING": "1"}


def _parse(lines):
    return [json.loads(line) for line in lines if line.strip()]


def run_kafkajs(subcommand, args, timeout_s=60):
    """Runs to the end; returns the events. A non-zero exit is a failure with KafkaJS's stderr."""
    proc = subprocess.run(_command(subcommand, args), capture_output=True, text=True, timeout=timeout_s,
                          stdin=subprocess.DEVNULL, env=ENV)
    events = _parse(proc.stdout.splitlines())
    assert proc.returncode == 0, f"kafkajs {subcommand} exited {proc.returncode}: {events[-3:]}\n{proc.stderr[-3000:]}"
    return events


def of(events, name):
    return [e for e in events if e["event"] == name]


class KafkaJSProcess:
    def __init__(self, subcommand, args, stderr_path):
        self.subcommand = subcommand
        self._stderr = open(stderr_path, "w")
        self.proc = subprocess.Popen(_command(subcommand, args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, text=True, env=ENV)
        self.events = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            if line.strip():
                event = json.loads(line)
                event["at"] = time.monotonic()
                with self._lock:
                    self.events.append(event)

    def snapshot(self, name=None):
        with self._lock:
            return [e for e in self.events if name is None or e["event"] == name]

    def wait_for(self, what, condition, timeout_s=30):
        """Polls condition(self) until it returns something true; fails if the process exits first."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            result = condition(self)
            if result:
                return result
            assert self.proc.poll() is None, f"kafkajs {self.subcommand} exited {self.proc.returncode} " \
                                             f"before {what}: {self.snapshot()[-3:]}"
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout_s}s waiting for {what}: {self.snapshot()[-3:]}")

    def stop(self, timeout_s=30):
        """Closes stdin (the client disconnects and exits); SIGKILL by PID if it does not. Returns the exit code."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=5)
        self._stderr.close()
        return self.proc.returncode
