"""The first chaos run: one real `samsa server` in the namespace, two
producers (acks=all and acks=1) and a consumer, and per round three faults
in an order and with durations drawn from the seed: kill -9 and restart,
SIGSTOP then SIGCONT, an nftables cut of the clients' connections. After a
kill -9 every partition is read back whole (LogHistory: a process crash
keeps every acknowledged record); at the end every fault is healed and
every partition read back whole again. Runs inside the namespace (the
supervisor in run_chaos.py starts it there)."""

import random
import sys
import time
from pathlib import Path

from chaos import namespace
from chaos.brokers import ChaosBroker
from chaos.history import History
from chaos.workload import ConsumerWorker, ProducerWorker, partition_name, read_partition

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "integration"))
from clients import create_topic  # noqa: E402

TOPIC = "chaos"
PARTITIONS = 2
FAULT_KINDS = ("kill9", "pause", "cut")
PHASE_ACKS = 200        # acknowledged records each producer gets between faults...
PHASE_TIMEOUT_S = 20    # ...or this long, whichever comes first
# A pause or a cut is short (the clients wait it out) or longer than the
# clients' request.timeout.ms (5 s: attempts time out, their outcome unknown).
SHORT_FAULT_S = (0.5, 3.0)
LONG_FAULT_S = (5.5, 7.0)


# Plants (--plant): a recorded history made wrong on purpose, to show the
# checker fails on it. Never a default.
PLANTS = ("ack-unwritten", "drop-read")


class Run:
    def __init__(self, ns, seed, rounds, out_dir, binary, plant=None, log=print):
        self.ns = ns
        self.rng = random.Random(seed)
        self.seed = seed
        self.rounds = rounds
        self.out = Path(out_dir)
        self.plant = plant
        self.log = log
        self.history = History(str(self.out / "history.jsonl"))
        self.broker = ChaosBroker(ns, 1, self.out / "data", self.out / "broker.log", binary=binary)
        self.firewall = namespace.Firewall(ns)
        self.producers = []
        self.consumer = None
        self.unavailable = []  # phases that got no acknowledgement at all

    def schedule(self):
        """[(kind, seconds)] for every round: each kind once, order shuffled."""
        plan = []
        for _ in range(self.rounds):
            kinds = list(FAULT_KINDS)
            self.rng.shuffle(kinds)
            plan += [(k, round(self.rng.uniform(*self.rng.choice((SHORT_FAULT_S, LONG_FAULT_S))), 2))
                     for k in kinds]
        return plan

    def execute(self):
        namespace.assert_inside(self.ns)
        self.firewall.setup()
        self.broker.start()
        create_topic(self.broker.bootstrap, TOPIC, PARTITIONS)
        self.producers = [
            ProducerWorker(self.history, self.broker.bootstrap, TOPIC, PARTITIONS, "all", "p-all"),
            ProducerWorker(self.history, self.broker.bootstrap, TOPIC, PARTITIONS, "1", "p-one"),
        ]
        self.consumer = ConsumerWorker(self.history, self.broker.bootstrap, TOPIC, PARTITIONS)
        for w in self.producers + [self.consumer]:
            w.start()
        plan = self.schedule()
        self.history.note("schedule", seed=self.seed, plan=plan)
        for i, (kind, seconds) in enumerate(plan):
            self.produce_phase(i)
            self.log(f"  fault {i + 1}/{len(plan)}: {kind} {seconds}s")
            getattr(self, "fault_" + kind)(seconds)
        self.produce_phase(len(plan))
        self.finish()

    def produce_phase(self, index):
        """Waits (bounded) until every producer has PHASE_ACKS more acks."""
        start = [p.acked for p in self.producers]
        deadline = time.monotonic() + PHASE_TIMEOUT_S
        while time.monotonic() < deadline:
            if all(p.acked - s >= PHASE_ACKS for p, s in zip(self.producers, start)):
                return
            time.sleep(0.02)
        got = [p.acked - s for p, s in zip(self.producers, start)]
        self.history.note("slow phase", phase=index, acks=got, seconds=PHASE_TIMEOUT_S)
        if not any(got):
            self.unavailable.append(index)

    def fault_kill9(self, _seconds):
        for p in self.producers:  # no new attempts; those in flight meet the kill
            p.pause()
        pid = self.broker.pid
        self.broker.kill9()
        self.history.crash("process")
        self.history.fault("kill9", pid=pid)
        self.broker.start()
        self.history.fault("restart", pid=self.broker.pid)
        for p in self.producers:
            if not p.drain(30):
                self.history.note("undrained", producer=p.name, outstanding=p.outstanding)
        self.read_back()
        self.history.resumed()
        for p in self.producers:
            p.unpause()

    def fault_pause(self, seconds):
        self.history.fault("sigstop", pid=self.broker.pid, seconds=seconds)
        self.broker.pause()
        try:
            time.sleep(seconds)  # the fault's length, not a wait for a condition
        finally:
            self.broker.resume()
            self.history.fault("sigcont", pid=self.broker.pid)

    def fault_cut(self, seconds):
        self.history.fault("cut", host=self.broker.host, port=self.broker.port, seconds=seconds)
        self.firewall.cut_port(self.broker.host, self.broker.port)
        try:
            time.sleep(seconds)  # the fault's length
        finally:
            self.firewall.heal()
            self.history.fault("heal")

    def read_back(self):
        for p in range(PARTITIONS):
            records = read_partition(self.broker.bootstrap, TOPIC, p)
            self.history.full_read(partition_name(TOPIC, p), records)

    def finish(self):
        """Heals everything, lets every attempt finish, reads every partition."""
        self.firewall.heal()
        self.broker.resume()
        for p in self.producers:
            if not p.stop(30):
                self.history.note("undrained", producer=p.name, outstanding=p.outstanding)
        self.consumer.stop()
        finals = {p: read_partition(self.broker.bootstrap, TOPIC, p) for p in range(PARTITIONS)}
        self.apply_plant(finals)
        for p, records in finals.items():
            self.history.full_read(partition_name(TOPIC, p), records)

    def apply_plant(self, finals):
        if self.plant == "ack-unwritten":
            # An acknowledgement for an offset the broker never wrote.
            value = "planted-0"
            self.history.sent(partition_name(TOPIC, 0), value, "all")
            self.history.ack(partition_name(TOPIC, 0), len(finals[0]) + 1000, value, "all")
        elif self.plant == "drop-read":
            # One record left out of the final read of partition 0.
            if len(finals[0]) >= 3:
                del finals[0][len(finals[0]) // 2]

    def summary(self):
        return {
            "acked": sum(p.acked for p in self.producers),
            "errors": sum(p.errors for p in self.producers),
            "reads": self.consumer.reads if self.consumer else 0,
            "broker_starts": self.broker.starts,
            "unavailable_phases": len(self.unavailable),
        }

    def close(self):
        """Stops everything this run started (also after a failure)."""
        for p in self.producers:
            p._halt.set()
        if self.consumer is not None:
            self.consumer._halt.set()
        try:
            self.firewall.heal()
        except Exception:
            pass
        self.broker.stop()
        self.history.close()
