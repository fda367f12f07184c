"""The run's network namespace and the nftables rules inside it.

Everything network-related the suite does happens inside a namespace it
creates (`samsa-chaos-<pid>`): brokers bind 127.0.0.N on its loopback, the
clients run in it, and every nft command is run with `ip netns exec` into
it, so the host's own interfaces and ruleset are never touched. The
namespace is deleted when the run ends, also after a failure or a signal
(Namespace.delete is idempotent and registered with atexit)."""

import atexit
import os
import signal
import subprocess
import time

NETNS_DIR = "/run/netns"
COMMAND_TIMEOUT_S = 20


class Unavailable(Exception):
    """This machine cannot create a namespace or run nft: the run is skipped
    (and a skip is not a pass)."""


def _run(cmd, check=True):
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_S)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def namespace_inode(name):
    return os.stat(os.path.join(NETNS_DIR, name)).st_ino


def current_inode():
    return os.stat("/proc/self/ns/net").st_ino


class Namespace:
    def __init__(self, name):
        self.name = name
        self.created = False

    def create(self):
        try:
            _run(["ip", "netns", "add", self.name])
        except (RuntimeError, FileNotFoundError, PermissionError) as e:
            raise Unavailable(f"cannot create network namespace {self.name}: {e}") from e
        self.created = True
        atexit.register(self.delete)
        _run(self.exec_prefix() + ["ip", "link", "set", "lo", "up"])
        try:
            _run(self.exec_prefix() + ["nft", "list", "ruleset"])
        except (RuntimeError, FileNotFoundError) as e:
            raise Unavailable(f"nft does not work inside {self.name} (scripts/install-chaos-deps.sh "
                              f"installs nftables): {e}") from e

    def exec_prefix(self):
        return ["ip", "netns", "exec", self.name]

    def pids(self):
        if not self.created:
            return []
        proc = _run(["ip", "netns", "pids", self.name], check=False)
        return [int(p) for p in proc.stdout.split() if p.isdigit()]

    def kill_leftovers(self, grace_s=5):
        """Every process still in the namespace: SIGTERM, then SIGKILL, by PID."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = [p for p in self.pids() if p != os.getpid()]
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + grace_s
            while time.monotonic() < deadline and any(p in self.pids() for p in pids):
                time.sleep(0.05)

    def delete(self):
        if not self.created:
            return
        self.kill_leftovers()
        _run(["ip", "netns", "del", self.name], check=False)
        self.created = os.path.exists(os.path.join(NETNS_DIR, self.name))


def assert_inside(name):
    """The caller's process runs in namespace `name` (never the host's)."""
    if current_inode() != namespace_inode(name):
        raise RuntimeError(f"not inside network namespace {name}: refusing to touch the network")


class Firewall:
    """nftables rules in the namespace's own ruleset: one table, one output
    chain (on loopback every packet passes output once, so one drop rule cuts
    both directions of a connection)."""

    TABLE = "samsa_chaos"

    def __init__(self, namespace_name):
        self.ns = namespace_name
        self.rules = []

    def _nft(self, *args):
        assert_inside(self.ns)
        return _run(["ip", "netns", "exec", self.ns, "nft", *args])

    def setup(self):
        self._nft("add", "table", "inet", self.TABLE)
        self._nft("add", "chain", "inet", self.TABLE, "output",
                  "{ type filter hook output priority 0; policy accept; }")

    def cut_port(self, host, port):
        """Drops every packet to and from host:port (both directions)."""
        self._nft("add", "rule", "inet", self.TABLE, "output", "ip", "daddr", host, "tcp", "dport",
                  str(port), "drop")
        self._nft("add", "rule", "inet", self.TABLE, "output", "ip", "saddr", host, "tcp", "sport",
                  str(port), "drop")
        self.rules.append((host, port))

    def heal(self):
        self._nft("flush", "chain", "inet", self.TABLE, "output")
        self.rules = []

    def ruleset(self):
        return self._nft("list", "ruleset").stdout


def delete_stale(prefix="samsa-chaos-"):
    """Namespaces left by an earlier run whose supervisor died by SIGKILL
    (atexit never ran): `<prefix><pid>` with that pid gone. Returns them."""
    stale = []
    if not os.path.isdir(NETNS_DIR):
        return stale
    for name in os.listdir(NETNS_DIR):
        pid = name[len(prefix):]
        if not name.startswith(prefix) or not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
            continue
        ns = Namespace(name)
        ns.created = True
        ns.delete()
        stale.append(name)
    return stale
