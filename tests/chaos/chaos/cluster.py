"""Cluster mode (issue 16): 3 or 5 combined nodes (process.roles=
broker,controller) inside the run's namespace, node N on 127.0.0.(N+1),
faults drawn from the seed.

Cutting node-to-node traffic: every node would dial from 127.0.0.1 (on
loopback the kernel picks the route's src, `ip route get 127.0.0.3` says
`src 127.0.0.1`), so addresses alone cannot tell which node sent a packet.
Each node therefore runs as a uid of its own (setpriv, CHAOS_UID_BASE + N)
and a cut is `meta skuid <uid of A> ip daddr <address of B> drop`: every
connection A opens to B (broker or controller listener) is dead. Clients
run as root, so a node cut from the others stays reachable by clients.
A "one-way" cut A->B drops only what A sends on connections it opened;
B's connections to A still carry both ways."""

import random
import subprocess
import sys
import time
from pathlib import Path

from chaos import namespace
from chaos.brokers import BROKER_PORT, Pausable
from chaos.history import History
from chaos.leaders import LeaderWatcher
from chaos.workload import ConsumerWorker, ProducerWorker, partition_name, read_partition

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "integration"))
import harness  # noqa: E402

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
UID_BASE = 42000
CONTROLLER_PORT = 9093
SESSION_TIMEOUT_MS = 3000
TOPICS = ("chaos-a", "chaos-b")
PARTITIONS = 3
FAULT_KINDS = ("kill_leader", "kill_controller", "kill_follower", "pause", "cut_two_way", "cut_one_way",
               "isolate_controller", "isolate_leader")
FAULT_S = (2.0, 8.0)          # every fault bounded: healed after this long
PAUSE_S = (SESSION_TIMEOUT_MS / 1000 + 1, SESSION_TIMEOUT_MS / 1000 + 5)  # past the session timeout
PHASE_S = 4.0                 # quiet time between faults
UNAVAILABLE_S = 3.0           # no acknowledged write for longer: a window reported


class Node(Pausable, harness.Broker):
    def __init__(self, ns, node_id, out, voters, binary):
        super().__init__(out / f"data{node_id}", out / f"node{node_id}.log", binary=binary)
        self.ns = ns
        self.node_id = node_id
        self.uid = UID_BASE + node_id
        self.host = f"127.0.0.{node_id + 1}"
        self.port = BROKER_PORT
        self.bootstrap = f"{self.host}:{self.port}"
        self.config_path = out / f"node{node_id}.properties"
        settings = {
            "process.roles": "broker,controller", "node.id": node_id, "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://{self.bootstrap},CONTROLLER://{self.host}:{CONTROLLER_PORT}",
            "advertised.listeners": f"PLAINTEXT://{self.bootstrap}",
            "controller.listener.names": "CONTROLLER", "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.data_dir / "logs"), "metadata.log.dir": str(self.data_dir / "meta"),
            "controller.quorum.election.timeout.ms": 1000, "broker.session.timeout.ms": SESSION_TIMEOUT_MS,
            "broker.heartbeat.interval.ms": 500, "default.replication.factor": 3,
            "offsets.topic.replication.factor": 3, "min.insync.replicas": 2,
            "unclean.leader.election.enable": "false",
        }
        self.config_path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        subprocess.run([self.binary, "storage", "format", "--cluster-id", CLUSTER_ID, "--config",
                        str(self.config_path)], check=True, capture_output=True, timeout=60)
        subprocess.run(["chown", "-R", f"{self.uid}:{self.uid}", str(self.data_dir)], check=True)

    def command(self):
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
                self.binary, "server", "--config", str(self.config_path)]


class Cuts(namespace.Firewall):
    """Node-to-node cuts by the sender's uid and the receiver's address."""

    def block(self, a, b):
        self._nft("add", "rule", "inet", self.TABLE, "output", "meta", "skuid", str(a.uid), "ip", "daddr",
                  b.host, "drop")
        self.rules.append((a.node_id, b.node_id))


def metadata(nodes):
    """(controller id, {partition name: (leader, isr)}) from the first node
    that answers, or (None, {})."""
    for n in nodes:
        if not n.running() or n.paused:
            continue
        try:
            from cluster_harness import metadata_v4
            m = metadata_v4(n, topics=list(TOPICS), timeout_s=3)
        except Exception:
            continue
        parts = {}
        for t, (_err, ps) in m["topics"].items():
            for i, (_e, leader, _replicas, isr) in ps.items():
                parts[partition_name(t, i)] = (leader, isr)
        return m["controller"], parts
    return None, {}


class ClusterRun:
    def __init__(self, ns, seed, rounds, out_dir, binary, nodes=3, log=print, kinds=None, idempotent=True):
        self.ns = ns
        self.idempotent = idempotent  # False: duplicates are the client's too (chaos/workload.py)
        self.seed = seed
        self.rng = random.Random(seed)
        self.rounds = rounds
        self.kinds = kinds  # a fixed list of fault kinds (make test), or None: drawn from the seed
        self.out = Path(out_dir)
        self.log = log
        self.history = History(str(self.out / "history.jsonl"))
        voters = ",".join(f"{i}@127.0.0.{i + 1}:{CONTROLLER_PORT}" for i in range(1, nodes + 1))
        self.nodes = [Node(ns, i, self.out, voters, binary) for i in range(1, nodes + 1)]
        self.cuts = Cuts(ns)
        self.producers = []
        self.consumers = []
        self.watcher = LeaderWatcher(self.history, self.nodes, TOPICS)
        self.bootstrap = ",".join(n.bootstrap for n in self.nodes)
        self.active_fault = None
        self.faults = []  # (start, end, kind, detail) in history time

    def by_id(self, node_id):
        return next((n for n in self.nodes if n.node_id == node_id), None)

    def execute(self):
        namespace.assert_inside(self.ns)
        self.cuts.setup()
        for n in self.nodes:
            n.start()
        self.create_topics()
        self.watcher.start()
        for t in TOPICS:
            self.producers.append(ProducerWorker(self.history, self.bootstrap, t, PARTITIONS, "all", f"p-{t}",
                                                 idempotent=self.idempotent))
            self.consumers.append(ConsumerWorker(self.history, self.bootstrap, t, PARTITIONS, name=f"c-{t}"))
        for w in self.producers + self.consumers:
            w.start()
        kinds = self.kinds or [self.rng.choice(FAULT_KINDS) for _ in range(self.rounds)]
        plan = [(k, round(self.rng.uniform(*FAULT_S), 2)) for k in kinds]
        self.history.note("schedule", seed=self.seed, nodes=len(self.nodes), plan=plan)
        for i, (kind, seconds) in enumerate(plan):
            time.sleep(PHASE_S)  # the workload runs between faults: a fault's spacing, not a wait
            self.log(f"  fault {i + 1}/{len(plan)}: {kind} {seconds}s")
            getattr(self, "fault_" + kind)(seconds)
        time.sleep(PHASE_S)
        self.finish()

    def create_topics(self, timeout_s=60):
        """After every node is registered and a controller is named: an
        AdminClient that first saw controller -1 waits for its next
        metadata refresh (minutes) before it sends CreateTopics."""
        from confluent_kafka.admin import AdminClient, NewTopic
        from cluster_harness import metadata_v4
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                m = metadata_v4(self.nodes[0], timeout_s=3)
                if m["controller"] >= 0 and len(m["brokers"]) == len(self.nodes):
                    break
            except Exception:
                pass
            time.sleep(0.2)
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        fs = admin.create_topics([NewTopic(t, PARTITIONS, 3, config={"min.insync.replicas": "2"}) for t in TOPICS],
                                 operation_timeout=30, request_timeout=30)
        for f in fs.values():
            f.result(timeout=timeout_s)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            _c, parts = metadata(self.nodes)
            if len(parts) == len(TOPICS) * PARTITIONS and all(l >= 0 and len(isr) == 3 for l, isr in parts.values()):
                return
            time.sleep(0.2)
        raise TimeoutError("topics not fully replicated within 60 s")

    # ---------------------------------------------------------- choosing
    def leader_and_followers(self):
        _c, parts = metadata(self.nodes)
        live = [p for p, (l, _i) in parts.items() if l >= 0]
        if not live:
            return None, []
        name = self.rng.choice(sorted(live))
        leader = self.by_id(parts[name][0])
        return leader, [n for n in self.nodes if n is not leader]

    def controller(self):
        c, _parts = metadata(self.nodes)
        return self.by_id(c) if c is not None else self.rng.choice(self.nodes)

    # ---------------------------------------------------------- faults
    def _begin(self, kind, **detail):
        self.active_fault = (kind, detail)
        self.history.fault(kind, **detail)
        return self.history.now()

    def _end(self, start, kind, **detail):
        self.history.fault("heal", of=kind)
        self.faults.append((start, self.history.now(), kind, detail))
        self.active_fault = None

    def _kill(self, node, kind, seconds):
        if node is None:
            node = self.rng.choice(self.nodes)
        t = self._begin(kind, node=node.node_id, pid=node.pid, seconds=seconds)
        node.kill9()
        time.sleep(seconds)  # how long the node stays down
        node.start()
        self._end(t, kind, node=node.node_id)

    def fault_kill_leader(self, seconds):
        self._kill(self.leader_and_followers()[0], "kill_leader", seconds)

    def fault_kill_controller(self, seconds):
        self._kill(self.controller(), "kill_controller", seconds)

    def fault_kill_follower(self, seconds):
        _l, followers = self.leader_and_followers()
        self._kill(self.rng.choice(followers or self.nodes), "kill_follower", seconds)

    def fault_pause(self, _seconds):
        seconds = round(self.rng.uniform(*PAUSE_S), 2)
        node = self.rng.choice(self.nodes)
        t = self._begin("pause", node=node.node_id, seconds=seconds)
        node.pause()
        try:
            time.sleep(seconds)  # past broker.session.timeout.ms
        finally:
            node.resume()
        self._end(t, "pause", node=node.node_id)

    def _cut(self, kind, pairs, seconds, **detail):
        t = self._begin(kind, pairs=[[a.node_id, b.node_id] for a, b in pairs], seconds=seconds, **detail)
        try:
            for a, b in pairs:
                self.cuts.block(a, b)
            time.sleep(seconds)  # the partition's length
        finally:
            self.cuts.heal()
        self._end(t, kind)

    def fault_cut_two_way(self, seconds):
        a, b = self.rng.sample(self.nodes, 2)
        self._cut("cut_two_way", [(a, b), (b, a)], seconds)

    def fault_cut_one_way(self, seconds):
        a, b = self.rng.sample(self.nodes, 2)
        self._cut("cut_one_way", [(a, b)], seconds)

    def fault_isolate_controller(self, seconds):
        c = self.controller()
        others = [n for n in self.nodes if n is not c]
        self._cut("isolate_controller", [(c, o) for o in others] + [(o, c) for o in others], seconds,
                  node=c.node_id)

    def fault_isolate_leader(self, seconds):
        leader, followers = self.leader_and_followers()
        if leader is None:
            leader = self.rng.choice(self.nodes)
            followers = [n for n in self.nodes if n is not leader]
        self._cut("isolate_leader", [(leader, f) for f in followers] + [(f, leader) for f in followers], seconds,
                  node=leader.node_id)

    # ---------------------------------------------------------- the end
    def finish(self):
        self.cuts.heal()
        for n in self.nodes:
            n.resume()
            if not n.running():
                n.start()
        for p in self.producers:
            if not p.stop(30):
                self.history.note("undrained", producer=p.name, outstanding=p.outstanding)
        for c in self.consumers:
            c.stop()
        for t in TOPICS:
            for p in range(PARTITIONS):
                self.history.full_read(partition_name(t, p), read_partition(self.bootstrap, t, p, timeout_s=90))

    def unavailability(self, ack_times):
        """Windows with no acknowledged write for > UNAVAILABLE_S: (start,
        seconds, the faults active in it)."""
        out = []
        for a, b in zip(ack_times, ack_times[1:]):
            if b - a > UNAVAILABLE_S:
                active = [k for (s, e, k, _d) in self.faults if s < b and e > a]
                out.append((round(a, 2), round(b - a, 2), active))
        return out

    def summary(self):
        return {"nodes": len(self.nodes), "acked": sum(p.acked for p in self.producers),
                "errors": sum(p.errors for p in self.producers),
                "reads": sum(c.reads for c in self.consumers),
                "faults": [[round(s, 2), round(e, 2), k, d] for s, e, k, d in self.faults]}

    def close(self):
        for w in self.producers + self.consumers + [self.watcher]:
            w._halt.set()
        try:
            self.cuts.heal()
        except Exception:
            pass
        from cluster_harness import stop_all
        for n in self.nodes:
            n.resume()
        stop_all(self.nodes)
        if self.watcher.is_alive():
            self.watcher.join(timeout=10)  # it writes to the history
        self.history.close()
