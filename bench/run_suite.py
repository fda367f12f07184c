#!/usr/bin/env python3
"""The fixed benchmark suite behind `make bench` (issue 6).

Starts, on 127.0.0.1 only and each bounded in time, a real Samsa broker
(fresh data dir), the null broker (bench/null_broker_main.cc: same network
and protocol path, acknowledges produce and serves fetch WITHOUT storing),
NATS JetStream (nats-server -js) and Redis (appendonly); runs the workloads
with `samsa bench` (librdkafka) and samsa-alt-bench (plain sockets); writes
bench/results/latest.md with the machine, date, commit and every figure;
prints the table; and refreshes the table in README.md between its
bench markers. Every ratio compares figures measured in this run, runs of
the two sides interleaved, best of --reps (the machine may be shared).
Stops every process it started, by PID. Nothing here is a test.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORTS = {"samsa": 19092, "null": 19392, "nats": 14222, "redis": 16379}


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def wait_port(port, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


class Servers:
    def __init__(self, build, work):
        self.build, self.work, self.procs = build, work, {}

    def start(self, name, argv, port, cpus=None):
        logf = open(os.path.join(self.work, f"{name}.log"), "w")
        # `timeout` bounds every server even if this script dies.
        p = subprocess.Popen(pinned(cpus, ["timeout", "1200"] + argv), stdout=logf, stderr=subprocess.STDOUT,
                             start_new_session=True)
        self.procs[name] = p
        if not wait_port(port):
            raise RuntimeError(f"{name} did not listen on {port}; see {logf.name}")
        return p

    def child_pid(self, name):
        # The server itself is the child of `timeout`.
        p = self.procs[name]
        try:
            out = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
            return int(out[0]) if out else p.pid
        except Exception:
            return p.pid

    def stop(self, name):
        p = self.procs.pop(name, None)
        if p is None:
            return
        p.send_signal(signal.SIGTERM)  # timeout forwards it to the server
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def stop_all(self):
        for name in list(self.procs):
            self.stop(name)


def pinned(cpus, argv):
    """argv run on the CPUs listed in `cpus` ("0", "1-3"), or anywhere when None."""
    return ["taskset", "-c", cpus] + argv if cpus else argv


def cpu_split():
    """(client CPUs, server CPUs): the servers get the last CPU to themselves,
    as a broker has its own machine in production; the load generator gets
    the rest. Without the split, every CPU second the broker (or the kernel
    on its behalf) uses comes out of the client, and the ratio to the null
    broker measures contention for 2 cores rather than the broker."""
    n = os.cpu_count() or 1
    if n < 2:
        return None, None
    last = n - 1
    return ("0" if last == 1 else f"0-{last - 1}"), str(last)


def page_cache_write_mb_per_s(directory, mb=512):
    """How fast this machine takes writes into new page-cache pages right now
    (1 MiB pwrites to a new file, no fsync): the ceiling of any log that
    stores what it is sent. On a VM whose free memory is handed back to the
    host, a fresh page costs a host fault on first touch."""
    path = os.path.join(directory, "page-cache-probe")
    buf = os.urandom(1 << 20)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    try:
        start = time.perf_counter()
        for i in range(mb):
            os.pwrite(fd, buf, i << 20)
        elapsed = time.perf_counter() - start
    finally:
        os.close(fd)
        os.unlink(path)
    return mb * (1 << 20) / 1e6 / elapsed


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def cpu_seconds(pid):
    """utime + stime of a process, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def machine_busy_seconds():
    """CPU seconds all cores spent busy (user, nice, system, irq, softirq)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:8]]
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / os.sysconf("SC_CLK_TCK")


def run_json(argv, timeout=240, cpus=None):
    r = subprocess.run(pinned(cpus, argv), capture_output=True, text=True, timeout=timeout)
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError(f"no result from {' '.join(argv)}: {r.stderr.strip()[-500:]}")
    d = json.loads(lines[-1])
    if d.get("errors"):
        log(f"WARNING {' '.join(argv[1:4])}: {d.get('errors')} errors, {d.get('first_error', '')}")
    return d


class Suite:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build_dir)
        self.samsa = os.path.join(self.build, "samsa")
        self.alt = os.path.join(self.build, "samsa-alt-bench")
        self.rows = []      # (section, case, {label: figure}, notes)
        self.figures = {}   # raw results by key
        self.topic_no = 0
        self.started = time.time()
        self.pids = {}  # server name -> pid, for CPU accounting
        self.client_cpus, self.server_cpus = cpu_split() if args.pin else (None, None)

    def measured(self, target, argv, timeout=240):
        # The previous run's writeback finishes before this one starts.
        os.sync()
        pid = self.pids.get(target)
        before = cpu_seconds(pid) if pid else float("nan")
        busy = machine_busy_seconds()
        d = run_json(argv, timeout, self.client_cpus)
        d["machine_cpu_s"] = machine_busy_seconds() - busy
        d["server_cpu_s"] = cpu_seconds(pid) - before if pid else float("nan")
        return d

    def topic(self):
        self.topic_no += 1
        return f"bench-{self.topic_no}"

    def produce(self, target, size, records, acks="1", partitions=1, compression="none", keep=False, extra=()):
        topic = self.topic()
        argv = [self.samsa, "bench", "produce", "-b", f"127.0.0.1:{PORTS[target]}", "--topic", topic,
                "--partitions", str(partitions), "--record-size", str(size), "--records", str(records),
                "--acks", acks, "--compression", compression, "--progress", "0", "--json", *extra]
        d = self.measured(target, argv)
        d["topic"] = topic
        if target == "samsa" and not keep:
            self.delete_topic(topic)
        return d

    def delete_topic(self, topic):
        """Deleted once measured, as retention would: the suite writes ~10 GB,
        and a broker that has run for a while writes into page-cache memory
        its old segments gave back, not into memory the machine never touched."""
        subprocess.run([self.samsa, "topic", "delete", "-b", f"127.0.0.1:{PORTS['samsa']}", "--topic", topic],
                       capture_output=True, timeout=60)

    def consume(self, target, topic, records, partitions=1):
        argv = [self.samsa, "bench", "consume", "-b", f"127.0.0.1:{PORTS[target]}", "--topic", topic,
                "--partitions", str(partitions), "--records", str(records), "--progress", "0", "--json",
                "--idle-timeout-ms", "5000"]
        return self.measured(target, argv)

    def best(self, results, key="records_per_sec"):
        return max(results, key=lambda d: d.get(key, 0))

    # ---- the workloads ----

    def produce_vs_null(self, name, size, records, extra_reps=0, **kw):
        samsa, null = [], []
        for _ in range(self.args.reps + extra_reps):  # interleaved: samsa, null, samsa, null
            samsa.append(self.produce("samsa", size, records, **kw))
            null.append(self.produce("null", size, records, **kw))
        s, n = self.best(samsa), self.best(null)
        self.figures[f"produce {name}"] = {"samsa": s, "null": n, "all_samsa": samsa, "all_null": null}
        self.rows.append(("produce", name, s, n))
        log(f"produce {name}: samsa {s['records_per_sec']:.0f}/s, null {n['records_per_sec']:.0f}/s")
        return s, n

    def consume_vs_null(self, name, size, records, partitions=1):
        """Reads a topic Samsa stored against the null broker's pool, both
        sent with sendfile."""
        # The samsa topic is written first (not timed), then both are read.
        topic = self.produce("samsa", size, records, partitions=partitions, keep=True,
                             extra=("--linger-ms", "20"))["topic"]
        samsa, null = [], []
        for _ in range(self.args.reps):
            samsa.append(self.consume("samsa", topic, records, partitions))
            # The null broker serves records of the size its topic's name says.
            null.append(self.consume("null", f"{self.topic()}-rs{size}", records, partitions))
        s, n = self.best(samsa), self.best(null)
        self.figures[f"consume {name}"] = {"samsa": s, "null": n, "topic": topic}
        self.rows.append(("consume", name, s, n))
        log(f"consume {name}: samsa {s['records_per_sec']:.0f}/s, null {n['records_per_sec']:.0f}/s")
        return s, n

    def loopback(self):
        res = [run_json([self.alt, "loopback", "--records", "2000", "--record-size", str(1 << 20)])
               for _ in range(self.args.reps)]
        d = self.best(res, "mb_per_sec")
        self.figures["loopback"] = d
        return d

    def alternative(self, system, size, records):
        port = PORTS[system]
        p = run_json([self.alt, f"{system}-produce", "--port", str(port), "--records", str(records),
                      "--record-size", str(size), "--window", "1000"], cpus=self.client_cpus)
        c = run_json([self.alt, f"{system}-consume", "--port", str(port), "--records", str(records),
                      "--record-size", str(size), "--window", "1000"], cpus=self.client_cpus)
        return p, c

    def e2e(self, rate, size=100, seconds=10, linger=0):
        """One process producing at `rate` (0 = as fast as it can: the peak)
        and consuming at once. Its threads may use every CPU: pinned to the
        client's share, producer and consumer threads wait for each other's
        time slices, which is the machine's latency, not the broker's."""
        os.sync()
        # A wake-up probe runs alongside: how late a sleeping thread is woken
        # on this machine at the same moment (the floor of any latency tail).
        probe = subprocess.Popen([self.alt, "wakeup", "--records", str(int(seconds * 1000))],
                                 stdout=subprocess.PIPE, text=True)
        topic = self.topic()
        d = run_json([self.samsa, "bench", "e2e", "-b", f"127.0.0.1:{PORTS['samsa']}", "--topic", topic,
                      "--record-size", str(size), "--rate", str(int(rate)), "--duration", str(seconds),
                      "--linger-ms", str(linger), "--warmup", "2", "--progress", "0", "--json"], timeout=120)
        out, _ = probe.communicate(timeout=60)
        lines = [l for l in out.splitlines() if l.startswith("{")]
        d["wakeup"] = json.loads(lines[-1])["latency"] if lines else {}
        d["target_rate"] = rate
        self.delete_topic(topic)
        return d


def fmt_rate(d):
    return f"{d['records_per_sec']:,.0f} rec/s ({d['mb_per_sec']:.1f} MB/s)"


def p99(d):
    lat = d.get("latency") or {}
    return f"{lat['p99_ms']:.1f}" if "p99_ms" in lat else "-"


def machine_info():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    rdk = subprocess.run(["pkg-config", "--modversion", "rdkafka"], capture_output=True, text=True).stdout.strip()
    return {
        "cpu": f"{os.cpu_count()} x {model}", "memory_gib": f"{mem:.0f}", "kernel": platform.release(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit + (" (with uncommitted changes)" if dirty else ""),
        "load": f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}", "librdkafka": rdk,
    }


def microbench(build):
    exe = os.path.join(build, "samsa-microbench")
    if not os.path.exists(exe):
        return []
    r = subprocess.run([exe, "--benchmark_format=json", "--benchmark_min_time=0.1"], capture_output=True,
                       text=True, timeout=300)
    try:
        return json.loads(r.stdout)["benchmarks"]
    except (ValueError, KeyError):
        return []


def perf_profile(pid, seconds, out):
    """Samples the broker for `seconds`; returns the top self-time symbols."""
    if not shutil.which("perf"):
        return None
    data = out + ".data"
    rec = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p", str(pid), "-o", data, "--", "sleep",
                            str(seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return rec, data


def perf_top(data, limit=14):
    r = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "symbol", "--stdio",
                        "--percent-limit", "1", "-g", "none"], capture_output=True, text=True)
    lines = [l.rstrip() for l in r.stdout.splitlines() if re.match(r"\s+\d+\.\d+%", l)]
    samples = [l.strip("# ").strip() for l in r.stdout.splitlines() if l.startswith("# Samples")]
    return samples[:1] + [re.sub(r"\s+", " ", l.strip())[:110].rstrip(" -") for l in lines[:limit]]


PRODUCE_CASES = [
    # name, size, records, kwargs
    ("100 B, acks=1, 1 partition", 100, 2_000_000, {}),
    # The 1 KB target case: longer runs and two more pairs, since the
    # client's own speed on this VM varies by up to 1.5x from run to run.
    ("1 KB, acks=1, 1 partition", 1024, 1_000_000, {"extra_reps": 2}),
    ("100 B, acks=-1, 1 partition", 100, 2_000_000, {"acks": "-1"}),
    ("100 B, acks=1, 16 partitions", 100, 2_000_000, {"partitions": 16}),
    ("1 KB, acks=-1, 16 partitions", 1024, 400_000, {"acks": "-1", "partitions": 16}),
    ("1 KB, acks=1, lz4", 1024, 400_000, {"compression": "lz4"}),
    ("1 KB, acks=1, zstd", 1024, 400_000, {"compression": "zstd"}),
    ("100 B, acks=1, zstd", 100, 2_000_000, {"compression": "zstd"}),
]
CONSUME_CASES = [
    ("100 B, 1 partition", 100, 2_000_000, 1),
    ("1 KB, 1 partition", 1024, 400_000, 1),
    ("100 B, 16 partitions", 100, 2_000_000, 16),
]


E2E_ROWS = [
    ("e2e_peak", "peak"),
    ("e2e_half", "half of the peak"),
    ("e2e_quarter", "a quarter of the peak"),
    ("e2e_low", "low rate"),
    ("e2e_half_produce_peak", "half of the produce-only peak"),
]


def run(args):
    suite = Suite(args)
    work = tempfile.mkdtemp(prefix="samsa-bench-")
    servers = Servers(suite.build, work)
    info = machine_info()
    report = {"info": info}
    try:
        servers.start("samsa", [suite.samsa, "server", "--override",
                                f"listeners=PLAINTEXT://127.0.0.1:{PORTS['samsa']}",
                                "--override", f"log.dirs={work}/samsa-data",
                                "--override", f"metadata.log.dir={work}/samsa-meta"], PORTS["samsa"], suite.server_cpus)
        servers.start("null", [os.path.join(suite.build, "samsa-null-broker"), "--port", str(PORTS["null"]),
                               "--max-seconds", "1200"], PORTS["null"], suite.server_cpus)
        time.sleep(2)
        samsa_pid = servers.child_pid("samsa")
        suite.pids = {"samsa": samsa_pid, "null": servers.child_pid("null")}
        report["rss_start_mb"] = rss_mb(samsa_pid)

        sc = lambda n: max(1000, int(n * args.scale))
        report["page_cache_mb_s"] = [page_cache_write_mb_per_s(work)]
        for name, size, records, kw in PRODUCE_CASES:
            suite.produce_vs_null(name, size, sc(records), **kw)
        report["page_cache_mb_s"].append(page_cache_write_mb_per_s(work))
        for name, size, records, partitions in CONSUME_CASES:
            suite.consume_vs_null(name, size, sc(records), partitions)
        report["loopback"] = suite.loopback()
        report["pingpong"] = {m: run_json([suite.alt, f"pingpong-{m}", "--records", "2000", "--record-size",
                                            str(1 << 20)]) for m in ("sendfile", "copy")}
        log(f"loopback {report['loopback']['mb_per_sec']:.0f} MB/s")

        produce_peak = suite.figures["produce 100 B, acks=1, 1 partition"]["samsa"]["records_per_sec"]
        e2e_s = 10 if args.scale >= 1 else 4
        # The peak of the e2e workload itself (producing and consuming at
        # once; the median of three, as it moves with how the client's
        # threads share the cores), then fixed rates below it.
        peaks = sorted((suite.e2e(0, seconds=e2e_s) for _ in range(3)), key=lambda d: d["records_per_sec"])
        report["e2e_peak"] = peaks[1]
        report["e2e_peaks"] = [d["records_per_sec"] for d in peaks]
        peak = report["e2e_peak"]["records_per_sec"]
        report["e2e_half"] = suite.e2e(peak / 2, seconds=e2e_s)
        report["e2e_quarter"] = suite.e2e(peak / 4, seconds=e2e_s)
        report["e2e_low"] = suite.e2e(10_000, seconds=e2e_s)
        report["e2e_half_produce_peak"] = suite.e2e(produce_peak / 2, seconds=e2e_s)
        # The replicated figures (bench/replicated.py), against this broker.
        if args.replicated:
            import replicated
            report["replicated"] = replicated.run(suite, work, args.scale)
        log(f"e2e peak {peak:.0f}/s; at {peak / 2:.0f}/s: p99 {report['e2e_half']['latency']['p99_ms']:.2f} ms")

        # Profiles of the broker under the 100 B produce and fetch loads.
        if args.profile:
            rec, data = perf_profile(samsa_pid, 4, os.path.join(work, "perf-produce"))
            suite.produce("samsa", 1024, sc(400_000), keep=True)  # no deletion inside the profile
            rec.wait()
            report["perf_produce"] = perf_top(data)
            topic = suite.figures["consume 100 B, 1 partition"]["topic"]
            rec, data = perf_profile(samsa_pid, 3, os.path.join(work, "perf-fetch"))
            suite.consume("samsa", topic, sc(2_000_000))
            rec.wait()
            report["perf_fetch"] = perf_top(data)

        time.sleep(3)
        report["rss_idle_mb"] = rss_mb(samsa_pid)
        servers.stop("samsa")
        servers.stop("null")

        # The alternatives, one at a time on a quiet machine.
        alt = {}
        servers.start("nats", ["nats-server", "-js", "-a", "127.0.0.1", "-p", str(PORTS["nats"]),
                               "-sd", f"{work}/nats"], PORTS["nats"], suite.server_cpus)
        alt["nats 100"] = suite.alternative("nats", 100, sc(300_000))
        alt["nats 1024"] = suite.alternative("nats", 1024, sc(150_000))
        servers.stop("nats")
        servers.start("redis", ["redis-server", "--port", str(PORTS["redis"]), "--bind", "127.0.0.1",
                                "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
                                "--dir", f"{work}"], PORTS["redis"], suite.server_cpus)
        alt["redis 100"] = suite.alternative("redis", 100, sc(500_000))
        alt["redis 1024"] = suite.alternative("redis", 1024, sc(200_000))
        servers.stop("redis")
        report["alt"] = alt
        log("alternatives done")
        report["micro"] = microbench(suite.build) if args.micro else []
    finally:
        servers.stop_all()
        shutil.rmtree(work, ignore_errors=True)
    report["elapsed_s"] = time.time() - suite.started
    return suite, report


def ratio(a, b):
    return a / b if b else float("nan")


def render(suite, report):
    info = report["info"]
    out = []
    w = out.append
    w("# Samsa benchmark results\n")
    w(f"Produced by `make bench` (bench/run_suite.py) in {report['elapsed_s']:.0f} s.\n")
    w("| machine | |\n|---|---|")
    for k in ("cpu", "memory_gib", "kernel", "load", "date", "commit", "librdkafka"):
        w(f"| {k} | {info[k]} |")
    w("")
    cpus = (f"servers pinned to CPU {suite.server_cpus}, clients to CPU {suite.client_cpus} (taskset), as a "
            "broker has its own machine in production; the e2e client may use every CPU"
            if suite.server_cpus else "clients and servers sharing every CPU")
    pc = report.get("page_cache_mb_s") or []
    w(f"Method: one librdkafka client per run (`samsa bench`), servers on 127.0.0.1, {cpus}. Each pair of "
      "figures was measured in this run, the two sides interleaved, best of "
      f"{suite.args.reps} ({suite.args.reps + 2} for produce 1 KB, acks=1); `sync` before every run, and each Samsa topic deleted "
      "once measured (a long-running broker writes into page-cache memory its deleted segments gave back). "
      "The **null broker** (`samsa-null-broker`) is NOT a broker: it runs the same io/ and protocol/ code, "
      "but acknowledges produce without validating or storing, and serves fetch with sendfile (as Samsa does) "
      "from prebuilt batches in a 256 MiB memory file; it is the ceiling of transport plus client. "
      "MB = 10^6 bytes of "
      "record values. Latency = acknowledgement latency (produce) from hand-off to librdkafka."
      + (" Writing 512 MiB to a new file (1 MiB pwrites, the page cache) ran at "
         + " and ".join(f"{x:,.0f} MB/s" for x in pc) + " before and after the produce runs: no log can "
         "store faster than that." if pc else "") + "\n")
    w("## Samsa against the null broker\n")
    w("| workload | Samsa | null broker | Samsa / null | ack p99 ms Samsa / null | server CPU s Samsa / null "
      "| machine CPU s Samsa / null |")
    w("|---|---|---|---|---|---|---|")
    for section, name, s, n in suite.rows:
        w(f"| {section} {name} | {fmt_rate(s)} | {fmt_rate(n)} | "
          f"**{ratio(s['records_per_sec'], n['records_per_sec']):.2f}** | {p99(s)} / {p99(n)} | "
          f"{s['server_cpu_s']:.2f} / {n['server_cpu_s']:.2f} | {s['machine_cpu_s']:.2f} / {n['machine_cpu_s']:.2f} |")
    runs = suite.figures["produce 1 KB, acks=1, 1 partition"]
    every = lambda rs: ", ".join(f"{d['records_per_sec'] / 1e6:.2f}" for d in rs)
    lb = report["loopback"]
    c1k = suite.figures["consume 1 KB, 1 partition"]["samsa"]
    w(f"| fetch 1 KB vs raw loopback TCP | {c1k['mb_per_sec']:.0f} MB/s | loopback {lb['mb_per_sec']:.0f} MB/s "
      f"| **{ratio(c1k['mb_per_sec'], lb['mb_per_sec']):.2f}** | | |")
    pp = report.get("pingpong") or {}
    if pp:
        sf, cp = pp["sendfile"], pp["copy"]
        w(f"\nFetch transport on loopback (samsa-alt-bench pingpong, 2,000 responses of 1 MiB, client and server "
          f"threads on their own CPUs): sendfile {sf['round_us']:.0f} us a round, client CPU {sf['client_cpu_s']:.2f} s, "
          f"server {sf['server_cpu_s']:.2f} s; memcpy + write {cp['round_us']:.0f} us, client "
          f"{cp['client_cpu_s']:.2f} s, server {cp['server_cpu_s']:.2f} s. Both brokers above send with sendfile.")
    median = lambda rs: statistics.median(d["records_per_sec"] for d in rs)
    w(f"\nEvery run of produce 1 KB, acks=1 (M rec/s, in order): Samsa {every(runs['all_samsa'])}; "
      f"null broker {every(runs['all_null'])}; ratio of the medians "
      f"{ratio(median(runs['all_samsa']), median(runs['all_null'])):.2f}.\n")
    w("Server CPU s: CPU time (user + system) the server process used during that (best) run, from "
      "/proc/PID/stat: the broker's own cost, much less noisy than rates on a shared machine. Machine CPU s: "
      "busy time of all cores during the run (/proc/stat): client + server + kernel work outside the server "
      "process, such as page-cache writeback of the log to disk, which the null broker never causes. Other "
      "work on a shared machine adds to it.\n")
    w("## End-to-end latency (produce to consume, from each record's scheduled create time)\n")
    w("| run | target rate | achieved | p50 ms | p99 ms | p99.9 ms | max ms | machine wake-up p99 / p99.9 / max ms |")
    w("|---|---|---|---|---|---|---|---|")
    for key, what in E2E_ROWS:
        d = report[key]
        lat, wk = d["latency"], d.get("wakeup", {})
        wake = f"{wk['p99_ms']:.2f} / {wk['p99.9_ms']:.2f} / {wk['max_ms']:.2f}" if wk else "-"
        target = f"{d['target_rate']:,.0f} rec/s" if d["target_rate"] else "unlimited"
        w(f"| {what} | {target} | {d['records_per_sec']:,.0f} rec/s | {lat['p50_ms']:.2f} | "
          f"{lat['p99_ms']:.2f} | {lat['p99.9_ms']:.2f} | {lat['max_ms']:.2f} | {wake} |")
    if report.get("e2e_peaks"):
        w("\nPeak: the median of three runs (" + ", ".join(f"{x:,.0f}" for x in report["e2e_peaks"]) + " rec/s).")
    w("\n100 B records, acks=1, linger.ms=0, one process producing and consuming (fetch.wait.max.ms=100). "
      "Achieved = records scheduled and consumed within the measured seconds, per second, so a run that "
      "falls behind shows it. The peak is this workload's own (produce as fast as the client takes records while consuming); "
      "its latency is the producer's queue. The last row is half of the produce-only peak above, which "
      "producer and consumer together cannot sustain on this machine. The wake-up column is a thread "
      "sleeping to 1 ms deadlines during the same seconds (samsa-alt-bench wakeup): a latency tail below it "
      "cannot be measured here.\n")
    w("## Against the alternatives (same durable workload: write to the page cache, no fsync per record)\n")
    w("| workload | Samsa | NATS JetStream | Redis Streams | Samsa / NATS | Samsa / Redis |")
    w("|---|---|---|---|---|---|")
    alt = report["alt"]
    for size, label in ((100, "100 B"), (1024, "1 KB")):
        sp = suite.figures[f"produce {label}, acks=-1, 1 partition"]["samsa"] if size == 100 else \
            suite.figures["produce 1 KB, acks=1, 1 partition"]["samsa"]
        sc = suite.figures[f"consume {label}, 1 partition"]["samsa"]
        (np_, nc), (rp, rc) = alt[f"nats {size}"], alt[f"redis {size}"]
        w(f"| produce {label} | {fmt_rate(sp)} | {fmt_rate(np_)} | {fmt_rate(rp)} | "
          f"{ratio(sp['records_per_sec'], np_['records_per_sec']):.1f} | "
          f"{ratio(sp['records_per_sec'], rp['records_per_sec']):.1f} |")
        w(f"| consume {label} | {fmt_rate(sc)} | {fmt_rate(nc)} | {fmt_rate(rc)} | "
          f"{ratio(sc['records_per_sec'], nc['records_per_sec']):.1f} | "
          f"{ratio(sc['records_per_sec'], rc['records_per_sec']):.1f} |")
    w("\nSamsa produce: librdkafka, acks=-1 for 100 B (acks=1 for 1 KB; one replica, so the same work). "
      "NATS: publishes with a reply subject, each acknowledged by JetStream after the file-stream write, "
      "1000 in flight; read with a durable pull consumer (ack-all). Redis: pipelined XADD (1000 in flight, "
      "appendonly everysec); read with XREAD COUNT 10000. Alternatives are driven by samsa-alt-bench on "
      "plain sockets.\n")
    if report.get("replicated"):
        import replicated
        replicated.render(report["replicated"], w)
    w("## Targets\n")
    f = suite.figures
    p1k = f["produce 1 KB, acks=1, 1 partition"]
    peak = f["produce 100 B, acks=1, 1 partition"]["samsa"]["records_per_sec"]
    # The target names no acks or partition count: the best uncompressed 100 B run.
    best100 = max((k for k in f if k.startswith("produce 100 B") and "zstd" not in k),
                  key=lambda k: f[k]["samsa"]["records_per_sec"])
    best100_rate = f[best100]["samsa"]["records_per_sec"]
    fetch = [ratio(f[k]["samsa"]["records_per_sec"], f[k]["null"]["records_per_sec"])
             for k in f if k.startswith("consume ")]
    checks = [
        ("produce 1 KB acks=1 >= 0.9 of null broker",
         ratio(p1k["samsa"]["records_per_sec"], p1k["null"]["records_per_sec"]) >= 0.9,
         f"{ratio(p1k['samsa']['records_per_sec'], p1k['null']['records_per_sec']):.2f}"),
        ("fetch >= 0.9 of null broker", min(fetch) >= 0.9, ", ".join(f"{x:.2f}" for x in fetch)),
        (">= 1,000,000 rec/s of 100 B from one librdkafka producer", best100_rate >= 1e6,
         f"{best100_rate:,.0f} ({best100[len('produce '):]}; acks=1, 1 partition: {peak:,.0f})"),
        ("e2e p99 < 2 ms at half the peak rate", report["e2e_half"]["latency"]["p99_ms"] < 2,
         f"{report['e2e_half']['latency']['p99_ms']:.2f} ms at {report['e2e_half']['target_rate']:,.0f} rec/s "
         f"(e2e peak {report['e2e_peak']['records_per_sec']:,.0f} rec/s)"),
        ("broker RSS < 50 MB idle", report["rss_idle_mb"] < 50,
         f"{report['rss_start_mb']:.1f} MB at start, {report['rss_idle_mb']:.1f} MB idle after the run"),
    ]
    if report.get("replicated"):
        import replicated
        checks += replicated.targets(report["replicated"])
    w("| target | met | figure |\n|---|---|---|")
    for name, ok, fig in checks:
        w(f"| {name} | {'yes' if ok else 'NO'} | {fig} |")
    w("")
    for key, title in (("perf_produce", "produce 1 KB, acks=1"), ("perf_fetch", "fetch 100 B")):
        if report.get(key):
            w(f"### Broker profile during {title} (perf, self time, this run)\n")
            w("```")
            out.extend(report[key])
            w("```\n")
    analysis = os.path.join(ROOT, "bench", "ANALYSIS.md")
    if os.path.exists(analysis):
        with open(analysis) as fh:
            w(fh.read())
    if report.get("micro"):
        w("## Micro-benchmarks (samsa-microbench, Google Benchmark)\n")
        w("| benchmark | ns/op | items/s | bytes/s |\n|---|---|---|---|")
        for b in report["micro"]:
            if b.get("run_type") == "aggregate":
                continue
            ips = f"{b['items_per_second']:,.0f}" if "items_per_second" in b else ""
            bps = f"{b['bytes_per_second'] / 1e6:,.0f} MB/s" if "bytes_per_second" in b else ""
            w(f"| {b['name']} | {b['real_time']:,.0f} | {ips} | {bps} |")
        w("")
    return "\n".join(out) + "\n"


def table_only(md):
    """The summary tables (up to the targets) for the terminal and README."""
    start = md.index("## Samsa against the null broker")
    end = md.index("### Broker profile") if "### Broker profile" in md else len(md)
    head = md.split("\n")[:12]
    return "\n".join(l for l in head if l.startswith("|")) + "\n\n" + md[start:end].strip() + "\n"


def update_readme(md):
    path = os.path.join(ROOT, "README.md")
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return
    if begin not in text or end not in text:
        return
    block = (f"{begin}\nLatest `make bench` (full results: [bench/results/latest.md](bench/results/latest.md)):\n\n"
             + table_only(md).replace("## ", "#### ") + end)
    text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build-bench"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "latest.md"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply record counts (a quick trial: 0.1)")
    ap.add_argument("--no-profile", dest="profile", action="store_false")
    ap.add_argument("--no-micro", dest="micro", action="store_false")
    ap.add_argument("--no-readme", dest="readme", action="store_false")
    ap.add_argument("--no-replicated", dest="replicated", action="store_false",
                    help="leave out the 3-node cluster figures (bench/replicated.py)")
    ap.add_argument("--no-pin", dest="pin", action="store_false",
                    help="let clients and servers share every CPU (default: servers on the last CPU)")
    args = ap.parse_args()
    suite, report = run(args)
    md = render(suite, report)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(md)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump({k: v for k, v in report.items()}, f, indent=1, default=str)
    if args.readme:
        update_readme(md)
    print(table_only(md))
    print(f"Full results: {os.path.relpath(args.out, ROOT)}")


if __name__ == "__main__":
    main()
