"""The replicated figures of `make bench` (issue 15 item 11): a 3-node
cluster on this machine against the single broker of the same run.

- produce 100 B and 1 KB with acks=all to an RF=3 topic with
  min.insync.replicas=2, against acks=1 to an RF=1 topic on the single
  broker; runs interleaved, best of --reps, as the rest of the suite;
- end-to-end latency (produce and consume at once) on the cluster at a
  quarter of its own e2e peak;
- failover: a producer at a fixed rate with acks=all while the partition's
  leader is killed with kill -9; the figure is the longest any record
  waited for its acknowledgement (the time from the kill to the first
  acknowledgement after it, plus the record's own latency), with
  `broker.session.timeout.ms` at Kafka's default (9 s) and at 1 s;
- broker RSS per partition replica: RSS growth of each node after an RF=3
  topic with many partitions is created, over the replicas it holds.

The three nodes are `samsa dev cluster`'s configs (written with
--configs-only), each process started, killed and stopped here by PID, on
127.0.0.1 only, bounded by `timeout`. Nothing here is a test.

Run alone for a quick look: python3 bench/replicated.py --build-dir build --scale 0.1
"""
import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_suite as rs  # noqa: E402  (the suite's helpers: one copy of each)

CLUSTER_PORTS = (19500, 19600)  # base ports of the two clusters (each node: base + 2k, controller + 1)
PRODUCE_CASES = (("100 B", 100, 2_000_000), ("1 KB", 1024, 600_000))
KAFKA_SESSION_TIMEOUT_MS = 9000
FAILOVER_RATE = 2000  # records/s during the kill: steady, far below the peak
REPLICA_PARTITIONS = 300


class LocalCluster:
    def __init__(self, samsa, work, base_port, overrides=None, cpus=None):
        self.samsa, self.cpus = samsa, cpus
        self.dir = os.path.join(work, f"cluster-{base_port}")
        subprocess.run([samsa, "dev", "cluster", "--configs-only", "--brokers", "3", "--base-port", str(base_port),
                        "--data-dir", self.dir], check=True, capture_output=True, timeout=60)
        cluster_id = subprocess.run([samsa, "storage", "random-uuid"], check=True, capture_output=True,
                                    text=True, timeout=30).stdout.strip()
        self.configs = sorted(glob.glob(os.path.join(self.dir, "node-*.properties")))
        assert len(self.configs) == 3, self.configs
        for cfg in self.configs:
            with open(cfg, "a") as f:
                f.write("".join(f"{k}={v}\n" for k, v in (overrides or {}).items()))
            subprocess.run([samsa, "storage", "format", "--cluster-id", cluster_id, "--config", cfg],
                           check=True, capture_output=True, timeout=60)
        self.ports = [base_port + 2 * k for k in range(3)]
        self.bootstrap = ",".join(f"127.0.0.1:{p}" for p in self.ports)
        self.procs = {}

    def start(self, k):
        log = open(os.path.join(self.dir, f"node-{k + 1}.log"), "a")
        self.procs[k] = subprocess.Popen(rs.pinned(self.cpus, ["timeout", "1200", self.samsa, "server", "--config",
                                                               self.configs[k]]),
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def start_all(self):
        for k in range(3):
            self.start(k)
        for port in self.ports:
            if not rs.wait_port(port, timeout=60):
                raise RuntimeError(f"a cluster node did not listen on {port}; see {self.dir}")

    def pid(self, k):
        """The server itself (the child of `timeout`)."""
        p = self.procs[k]
        out = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
        return int(out[0]) if out else p.pid

    def kill9(self, k):
        os.kill(self.pid(k), signal.SIGKILL)
        self.procs.pop(k).wait(timeout=30)

    def stop_all(self):
        for p in self.procs.values():
            p.send_signal(signal.SIGTERM)  # all at once: their controlled shutdowns overlap
        for p in self.procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()

    def create_topic(self, topic, partitions=1, timeout_s=90):
        """RF=3, min.insync.replicas=2, retried until every node is registered and unfenced."""
        deadline = time.time() + timeout_s
        while True:
            r = subprocess.run([self.samsa, "topic", "create", "-b", self.bootstrap, "--topic", topic,
                                "--partitions", str(partitions), "--replication-factor", "3",
                                "--config", "min.insync.replicas=2", "--if-not-exists"],
                               capture_output=True, text=True, timeout=60)
            if r.returncode == 0:
                return self.leader_of(topic)  # every broker knows it, every ISR full
            if time.time() > deadline:
                raise RuntimeError(f"cannot create {topic} on the cluster: {r.stderr.strip()[-300:]}")
            time.sleep(0.5)

    def active_controller(self):
        r = subprocess.run([self.samsa, "cluster", "describe", "-b", self.bootstrap, "--json"], capture_output=True,
                           text=True, timeout=60)
        return json.loads(r.stdout)["active_controller"]

    def delete_topic(self, topic):
        """Deleted once measured, as the suite does with the single broker's topics."""
        subprocess.run([self.samsa, "topic", "delete", "-b", self.bootstrap, "--topic", topic], capture_output=True,
                       timeout=60)

    def leader_of(self, topic, partition=0):
        """(node index, leader id) of the partition once every node's metadata
        shows every partition of the topic led with a full ISR."""
        deadline = time.time() + 60
        while time.time() < deadline:
            views = []
            for port in self.ports:
                r = subprocess.run(["kcat", "-b", f"127.0.0.1:{port}", "-L", "-J", "-t", topic],
                                   capture_output=True, text=True, timeout=30)
                try:
                    views.append(json.loads(r.stdout)["topics"][0]["partitions"])
                except (ValueError, KeyError, IndexError):
                    views.append(None)
            ready = all(v and all(len(p["isrs"]) == 3 and p["leader"] >= 1 for p in v) for v in views)
            if ready:
                p = next(p for p in views[0] if p["partition"] == partition)
                return p["leader"] - 1, p["leader"]
            time.sleep(0.2)
        raise RuntimeError(f"no leader with a full ISR for {topic}-{partition} on every node")


def produce(suite, bootstrap, topic, size, records, acks, extra=()):
    argv = [suite.samsa, "bench", "produce", "-b", bootstrap, "--topic", topic, "--record-size", str(size),
            "--records", str(records), "--acks", acks, "--progress", "0", "--json", *extra]
    return suite.measured("cluster", argv)


def throughput(suite, cluster, scale):
    """Each size: single broker RF=1 acks=1 against the cluster RF=3 acks=all, interleaved."""
    out = {}
    for name, size, records in PRODUCE_CASES:
        n = max(1000, int(records * scale))
        single, replicated = [], []
        for _ in range(suite.args.reps):
            single.append(suite.produce("samsa", size, n))
            topic = suite.topic()
            cluster.create_topic(topic)
            replicated.append(produce(suite, cluster.bootstrap, topic, size, n, "all"))
            cluster.delete_topic(topic)
        s, r = suite.best(single), suite.best(replicated)
        out[name] = {"single": s, "replicated": r, "all_single": single, "all_replicated": replicated}
        rs.log(f"replicated produce {name}: RF=3 acks=all {r['records_per_sec']:.0f}/s, "
               f"RF=1 acks=1 {s['records_per_sec']:.0f}/s, ratio {rs.ratio(r['records_per_sec'], s['records_per_sec']):.2f}")
    return out


def e2e(suite, cluster, seconds):
    def run(rate):
        topic = suite.topic()
        cluster.create_topic(topic)
        d = rs.run_json([suite.samsa, "bench", "e2e", "-b", cluster.bootstrap, "--topic", topic, "--acks", "all",
                         "--record-size", "100", "--rate", str(int(rate)), "--duration", str(seconds),
                         "--warmup", "2", "--progress", "0", "--json"], timeout=120)
        cluster.delete_topic(topic)
        return d
    peak = run(0)
    quarter = run(peak["records_per_sec"] / 4)
    rs.log(f"replicated e2e: peak {peak['records_per_sec']:.0f}/s, p99 at a quarter "
           f"{quarter['latency']['p99_ms']:.2f} ms")
    return {"peak": peak, "quarter": quarter}


def failover(suite, work, session_timeout_ms, base_port, measure_rss=False):
    """kill -9 of the leader of an RF=3 partition, not the active controller
    (a broker's failure, not the quorum's), while a producer sends to the
    topic's partitions at a fixed rate. On a fresh cluster, so RSS growth
    per replica is measured here first (when asked)."""
    overrides = {"broker.session.timeout.ms": session_timeout_ms,
                 "broker.heartbeat.interval.ms": min(2000, session_timeout_ms // 3)}
    cluster = LocalCluster(suite.samsa, work, base_port, overrides, suite.server_cpus)
    result = {}
    try:
        cluster.start_all()
        if measure_rss:
            result["rss"] = rss_per_replica(cluster)
        topic = "failover"
        cluster.create_topic(topic, partitions=3)
        controller = cluster.active_controller()
        k, leader = next(((k, leader) for k, leader in (cluster.leader_of(topic, p) for p in range(3))
                          if leader != controller), cluster.leader_of(topic, 0))
        seconds = 10 + 2 * session_timeout_ms // 1000
        producer = subprocess.Popen([suite.samsa, "bench", "produce", "-b", cluster.bootstrap, "--topic", topic,
                                     "--acks", "all", "--rate", str(FAILOVER_RATE), "--duration", str(seconds),
                                     "--progress", "0", "--json"], stdout=subprocess.PIPE, text=True)
        time.sleep(4)  # steady state first (a bench, not a test: a fixed point in the run)
        cluster.kill9(k)
        killed = time.time()
        out, _ = producer.communicate(timeout=seconds + 120)
        d = json.loads([l for l in out.splitlines() if l.startswith("{")][-1])
        d["killed_leader"] = leader
        d["killed_controller"] = leader == controller
        d["session_timeout_ms"] = session_timeout_ms
        d["kill_to_end_s"] = time.time() - killed
        rs.log(f"failover (session timeout {session_timeout_ms} ms): longest wait for an ack "
               f"{d['latency']['max_ms']:.0f} ms, {d['errors']} errors")
        result["failover"] = d
        return result
    finally:
        cluster.stop_all()


def rss_per_replica(cluster):
    pids = [cluster.pid(k) for k in range(3)]
    before = [rs.rss_mb(p) for p in pids]
    cluster.create_topic("replicas", partitions=REPLICA_PARTITIONS)
    time.sleep(3)  # settled: every replica created and fetching (a bench, not a test)
    after = [rs.rss_mb(p) for p in pids]
    per = [(a - b) * 1024 / REPLICA_PARTITIONS for a, b in zip(after, before)]  # KiB; each node holds them all
    rs.log(f"RSS per partition replica: {', '.join(f'{x:.0f}' for x in per)} KiB")
    return {"before_mb": before, "after_mb": after, "kib_per_replica": per, "partitions": REPLICA_PARTITIONS}


def run(suite, work, scale):
    """Every replicated figure; the single broker (suite target "samsa") is running."""
    report = {}
    cluster = LocalCluster(suite.samsa, work, CLUSTER_PORTS[0], cpus=suite.server_cpus)
    try:
        cluster.start_all()
        suite.pids["cluster"] = None
        report["throughput"] = throughput(suite, cluster, scale)
        report["e2e"] = e2e(suite, cluster, 10 if scale >= 1 else 4)
    finally:
        cluster.stop_all()
    first = failover(suite, work, KAFKA_SESSION_TIMEOUT_MS, CLUSTER_PORTS[1], measure_rss=True)
    report["rss"] = first["rss"]
    report["failover"] = [first["failover"], failover(suite, work, 1000, CLUSTER_PORTS[1] + 50)["failover"]]
    return report


def render(report, w):
    w("## Replicated: a 3-node cluster against the single broker\n")
    w("Three combined nodes (`samsa dev cluster`'s configs) on this machine's cores, in the same run as the "
      "single broker above. Kafka's published figure for 3x synchronous replication is 0.51 of unreplicated "
      "throughput on three machines (Kreps 2014: 421,823 against 821,557 records/s); here the three brokers "
      "share the cores the single one had alone.\n")
    w("| workload | RF=3 acks=all min.insync=2 | RF=1 acks=1 | ratio | ack p99 ms RF=3 / RF=1 |")
    w("|---|---|---|---|---|")
    for name, f in report["throughput"].items():
        r, s = f["replicated"], f["single"]
        w(f"| produce {name} | {rs.fmt_rate(r)} | {rs.fmt_rate(s)} | "
          f"**{rs.ratio(r['records_per_sec'], s['records_per_sec']):.2f}** | {rs.p99(r)} / {rs.p99(s)} |")
    e = report["e2e"]
    w("")
    w(f"End to end on the cluster (acks=all, 100 B): peak {e['peak']['records_per_sec']:,.0f} rec/s; at a quarter "
      f"of it ({e['quarter']['target_rate']:,.0f} rec/s) p50 {e['quarter']['latency']['p50_ms']:.2f} ms, "
      f"p99 {e['quarter']['latency']['p99_ms']:.2f} ms, max {e['quarter']['latency']['max_ms']:.2f} ms.\n")
    w("| failover (kill -9 of the partition leader, acks=all at "
      f"{FAILOVER_RATE} rec/s) | longest wait for an acknowledgement | p99 | errors |")
    w("|---|---|---|---|")
    for d in report["failover"]:
        who = f"leader {d['killed_leader']}" + (", also the active controller" if d["killed_controller"] else "")
        w(f"| broker.session.timeout.ms={d['session_timeout_ms']} ({who}) | "
          f"{d['latency']['max_ms'] / 1000:.2f} s | {d['latency']['p99_ms']:.1f} ms | {d['errors']} |")
    r = report["rss"]
    w("")
    w(f"RSS per partition replica: {', '.join(f'{x:.0f}' for x in r['kib_per_replica'])} KiB on the three nodes "
      f"(growth after an RF=3 topic of {r['partitions']} partitions, over the {r['partitions']} replicas each holds).\n")


def targets(report):
    """(target, met, figure) rows for the suite's table (issue 15 item 11's aims)."""
    rows = []
    for name, f in report["throughput"].items():
        x = rs.ratio(f["replicated"]["records_per_sec"], f["single"]["records_per_sec"])
        rows.append((f"produce {name} RF=3 acks=all >= 0.5 of RF=1 acks=1 (Kafka's 0.51 on three machines)",
                     x >= 0.5, f"{x:.2f}"))
    q = report["e2e"]["quarter"]
    rows.append(("e2e p99 < 5 ms at a quarter of the RF=3 peak", q["latency"]["p99_ms"] < 5,
                 f"{q['latency']['p99_ms']:.2f} ms at {q['target_rate']:,.0f} rec/s"))
    for d in report["failover"]:
        limit_s = d["session_timeout_ms"] / 1000 + 1
        rows.append((f"failover within 1 s of broker.session.timeout.ms={d['session_timeout_ms']}",
                     d["latency"]["max_ms"] / 1000 <= limit_s, f"{d['latency']['max_ms'] / 1000:.2f} s"))
    return rows


def main():
    ap = argparse.ArgumentParser(description="the replicated section of make bench, alone")
    ap.add_argument("--build-dir", default=os.path.join(rs.ROOT, "build-bench"))
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--no-pin", dest="pin", action="store_false")
    args = ap.parse_args()
    suite = rs.Suite(args)
    work = tempfile.mkdtemp(prefix="samsa-bench-replicated-")
    servers = rs.Servers(suite.build, work)
    try:
        servers.start("samsa", [suite.samsa, "server", "--override", f"listeners=PLAINTEXT://127.0.0.1:{rs.PORTS['samsa']}",
                                "--override", f"log.dirs={work}/samsa-data",
                                "--override", f"metadata.log.dir={work}/samsa-meta"], rs.PORTS["samsa"], suite.server_cpus)
        suite.pids = {"samsa": servers.child_pid("samsa")}
        report = run(suite, work, args.scale)
    finally:
        servers.stop_all()
    lines = []
    render(report, lines.append)
    lines += [f"| {name} | {'yes' if ok else 'NO'} | {fig} |" for name, ok, fig in targets(report)]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
