"""`samsa server` processes inside the run's namespace, on 127.0.0.N, and
the process faults the suite injects by PID: kill -9, SIGSTOP/SIGCONT,
restart. Built on tests/integration/harness.py's Broker (start, readiness,
stop by PID), with the command run through `ip netns exec`."""

import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "integration"))
import harness  # noqa: E402

BROKER_PORT = 9092


class Pausable:
    """The process faults, for a harness.Broker (single broker and cluster
    node alike): SIGSTOP/SIGCONT by PID, and stop/kill -9 that resume a
    paused process first."""

    paused = False

    @property
    def pid(self):
        return self.proc.pid if self.proc is not None else None

    def pause(self):
        """SIGSTOP: the process stays, answers nothing; its sockets stay open."""
        os.kill(self.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self):
        if self.paused and self.running():
            os.kill(self.pid, signal.SIGCONT)
        self.paused = False

    def stop(self, term_timeout_s=15):
        self.resume()  # a stopped process would ignore SIGTERM until the SIGKILL
        return super().stop(term_timeout_s)

    def kill9(self):
        self.resume()
        super().kill9()


class ChaosBroker(Pausable, harness.Broker):
    """Broker `index` (1-based) listens on 127.0.0.<index+1>:9092 inside
    namespace `ns`; data dir and log stay across restarts."""

    def __init__(self, ns, index, data_dir, log_path, overrides=None, binary=None):
        super().__init__(data_dir, log_path, overrides=overrides, binary=binary)
        self.ns = ns
        self.node_id = index
        self.host = f"127.0.0.{index + 1}"
        self.port = BROKER_PORT
        self.bootstrap = f"{self.host}:{self.port}"

    def command(self):
        settings = {
            "node.id": str(self.node_id),
            "listeners": f"PLAINTEXT://{self.bootstrap}",
            "log.dirs": str(self.data_dir),
        }
        settings.update(self.overrides)
        cmd = ["ip", "netns", "exec", self.ns, self.binary, "server"]
        for key, value in settings.items():
            cmd += ["--override", f"{key}={value}"]
        return cmd
