"""Process management for the integration tests: a Samsa broker on a free
loopback port with a temporary data dir, librdkafka's mock cluster, and
bounded subprocess runs. Every wait here has a bound; every process started
here is stopped by PID (SIGTERM, then SIGKILL) when its owner is done.
"""

import os
import select
import signal
import socket
import subprocess
import time
from pathlib import Path

import kafka_wire

REPO = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


def _binary(env_var, default_relative):
    return os.environ.get(env_var) or str(REPO / default_relative)


def samsa_bin():
    return _binary("SAMSA_BIN", "build/samsa")


def roundtrip_bin():
    return _binary("RDKAFKA_ROUNDTRIP", "build/tests/integration/rdkafka_roundtrip")


def mock_cluster_bin():
    return _binary("SAMSA_MOCK_CLUSTER", "build/tests/integration/samsa_mock_cluster")


def free_port():
    """A loopback port nobody listens on right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class BrokerError(Exception):
    pass


def _stop_process(proc, term_timeout_s):
    """SIGTERM, then SIGKILL after term_timeout_s. Returns the exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=term_timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
    return proc.returncode


class Broker:
    """One `samsa server` process. The port and data dir stay the same across
    restarts, so clients and data carry over. Output (stdout and stderr) goes
    to log_path, appended across restarts with a marker line per start."""

    def __init__(self, data_dir, log_path, overrides=None, binary=None, start_timeout_s=30):
        self.binary = binary or samsa_bin()
        self.port = free_port()
        self.host = HOST
        self.bootstrap = f"{HOST}:{self.port}"
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = Path(log_path)
        self.overrides = dict(overrides or {})
        self.start_timeout_s = start_timeout_s
        self.proc = None
        self.starts = 0

    def command(self):
        settings = {
            "listeners": f"PLAINTEXT://{self.bootstrap}",
            "log.dirs": str(self.data_dir),
        }
        settings.update(self.overrides)
        cmd = [self.binary, "server"]
        for key, value in settings.items():
            cmd += ["--override", f"{key}={value}"]
        return cmd

    def start(self):
        if self.proc is not None and self.proc.poll() is None:
            raise BrokerError("broker already running")
        self.starts += 1
        cmd = self.command()
        with open(self.log_path, "ab") as log:
            log.write(f"=== start #{self.starts}: {' '.join(cmd)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_ready()

    def _wait_ready(self):
        """Ready = the port accepts and the broker answers ApiVersions."""
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BrokerError(f"broker exited with status {self.proc.returncode} while "
                                  f"starting\n--- broker log ---\n{self.log_tail()}")
            if kafka_wire.probe_api_versions(self.host, self.port, timeout_s=1.0):
                return
            time.sleep(0.05)
        self.stop()
        raise BrokerError(f"broker not ready within {self.start_timeout_s}s\n"
                          f"--- broker log ---\n{self.log_tail()}")

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, term_timeout_s=15):
        """Clean shutdown (SIGTERM), escalating to SIGKILL. Returns the status."""
        if self.proc is None:
            return None
        return _stop_process(self.proc, term_timeout_s)

    def kill9(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def restart(self):
        status = self.stop()
        if status not in (0, None):
            raise BrokerError(f"broker exited with status {status} on SIGTERM\n"
                              f"--- broker log ---\n{self.log_tail()}")
        self.start()

    def kill9_restart(self):
        self.kill9()
        self.start()

    def log_tail(self, lines=200):
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


class MockCluster:
    """librdkafka's mock cluster in its own process (samsa_mock_cluster):
    a reference peer for the clients and the CLI. Topics are made at start
    because the mock does not implement CreateTopics."""

    def __init__(self, topics, brokers=1, start_timeout_s=15):
        cmd = [mock_cluster_bin(), "--brokers", str(brokers), "--lifetime-s", "600"]
        for name, partitions in topics.items():
            cmd += ["--topic", f"{name}:{partitions}"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], start_timeout_s)
        line = self.proc.stdout.readline().decode().strip() if ready else ""
        if not line:
            self.stop()
            raise BrokerError(f"mock cluster did not start: {self.proc.stderr.read().decode()}")
        self.bootstrap = line.split(",")[0]

    def stop(self):
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()  # asks it to exit
        return _stop_process(self.proc, 10)


def run(cmd, input=None, timeout=120, check=True, env=None):
    """Runs a command to completion within timeout; with check, a non-zero
    exit raises with the command's output."""
    result = subprocess.run(cmd, input=input, capture_output=True, timeout=timeout, env=env)
    if check and result.returncode != 0:
        raise AssertionError(
            f"command failed with status {result.returncode}: {' '.join(map(str, cmd))}\n"
            f"--- stdout ---\n{result.stdout.decode(errors='replace')[-4000:]}\n"
            f"--- stderr ---\n{result.stderr.decode(errors='replace')[-4000:]}")
    return result
