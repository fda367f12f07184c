#!/usr/bin/env python3
"""Before/after: the same workloads against two Samsa builds, in one run.

`make bench-ab BASE=<git rev>` builds <rev> in its own worktree and build
directory (build-ab/, inside the checkout, RelWithDebInfo like `make bench`),
then starts the two brokers one after the other on 127.0.0.1, each on the
server CPU, and runs produce and consume workloads against them interleaved
(base, head, base, head, ...), with the same `samsa bench` client (head's)
for both. It prints each workload's best and median figure per side and the
ratio head / base: a refactor that claims "no loss" shows ratios within the
spread of the repetitions. Nothing here is a test; it stops every process it
starts, by PID, and bounds each in time.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_suite  # noqa: E402  (the suite's server and client helpers)

ROOT = run_suite.ROOT
PORT = 19592

WORKLOADS = [
    # (name, kind, record size, records)
    ("produce 100 B acks=1", "produce", 100, 2_000_000),
    ("produce 1 KB acks=1", "produce", 1024, 600_000),
    ("consume 100 B", "consume", 100, 2_000_000),
]


def build_base(rev, jobs):
    """Builds `rev` in build-ab/src (a git worktree) and build-ab/build."""
    src = os.path.join(ROOT, "build-ab", "src")
    out = os.path.join(ROOT, "build-ab", "build")
    if os.path.exists(src):
        subprocess.run(["git", "-C", src, "checkout", "--detach", "-q", rev], check=True)
    else:
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-f", src, rev], check=True,
                       capture_output=True)
    env = dict(os.environ, CCACHE_BASEDIR=src, CCACHE_NOHASHDIR="true")
    subprocess.run(["cmake", "-S", src, "-B", out, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                    "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", out, "-j", str(jobs), "--target", "samsa"], check=True, env=env)
    return os.path.join(out, "samsa")


class Side:
    """One broker binary, started fresh for each repetition."""

    def __init__(self, name, binary, work, cpus):
        self.name, self.binary, self.work, self.cpus = name, binary, work, cpus
        self.rep = 0

    def start(self):
        self.rep += 1
        data = os.path.join(self.work, f"{self.name}-{self.rep}")
        self.servers = run_suite.Servers(None, self.work)
        self.servers.start(self.name, [self.binary, "server", "--override",
                                       f"listeners=PLAINTEXT://127.0.0.1:{PORT}", "--override",
                                       f"log.dirs={data}/log", "--override", f"metadata.log.dir={data}/meta"],
                           PORT, self.cpus)

    def stop(self):
        self.servers.stop_all()


def run_workload(client, kind, size, records, topic, cpus):
    b = f"127.0.0.1:{PORT}"
    if kind == "produce":
        argv = [client, "bench", "produce", "-b", b, "--topic", topic, "--partitions", "1", "--record-size",
                str(size), "--records", str(records), "--acks", "1", "--progress", "0", "--json"]
        return run_suite.run_json(argv, 240, cpus)
    fill = [client, "bench", "produce", "-b", b, "--topic", topic, "--partitions", "1", "--record-size",
            str(size), "--records", str(records), "--acks", "1", "--progress", "0", "--json", "--linger-ms", "20"]
    run_suite.run_json(fill, 240, cpus)
    os.sync()
    argv = [client, "bench", "consume", "-b", b, "--topic", topic, "--partitions", "1", "--records",
            str(records), "--progress", "0", "--json", "--idle-timeout-ms", "5000"]
    return run_suite.run_json(argv, 240, cpus)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="git revision (or a samsa binary path) to compare against")
    ap.add_argument("--head", default=os.path.join(ROOT, "build-bench", "samsa"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    base = args.base if os.path.isfile(args.base) else build_base(args.base, args.jobs)
    client_cpus, server_cpus = run_suite.cpu_split()
    work = tempfile.mkdtemp(prefix="samsa-ab-")
    sides = [Side("base", base, work, server_cpus), Side("head", args.head, work, server_cpus)]
    results = {name: {s.name: [] for s in sides} for name, *_ in WORKLOADS}
    topic_no = 0
    for rep in range(args.reps):
        for side in sides:
            side.start()
            try:
                for name, kind, size, records in WORKLOADS:
                    topic_no += 1
                    n = max(1000, int(records * args.scale))
                    d = run_workload(args.head, kind, size, n, f"ab-{topic_no}", client_cpus)
                    results[name][side.name].append(d["records_per_sec"])
                    run_suite.log(f"rep {rep + 1} {side.name} {name}: {d['records_per_sec']:,.0f} rec/s")
            finally:
                side.stop()
    print(f"\nbase = {args.base}, head = {args.head}, {args.reps} repetitions each, interleaved\n")
    print("| workload | base best | head best | best ratio | base median | head median | median ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, *_ in WORKLOADS:
        b, h = results[name]["base"], results[name]["head"]
        print(f"| {name} | {max(b):,.0f} | {max(h):,.0f} | {max(h) / max(b):.3f} | {statistics.median(b):,.0f} "
              f"| {statistics.median(h):,.0f} | {statistics.median(h) / statistics.median(b):.3f} |")


if __name__ == "__main__":
    main()
