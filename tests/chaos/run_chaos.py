#!/usr/bin/python3
"""The chaos suite's command (docs/testing.md, "The chaos suite").

  run_chaos.py [--runs N] [--seed S] [--rounds R] [--out DIR] [--plant KIND]

--plant ack-unwritten (an acknowledgement recorded for an offset never
written) or drop-read (a record left out of the final read) makes the
history wrong on purpose: such a run passes only if the checker finds it.

Each run: a network namespace of its own (samsa-chaos-<pid>), the run
itself started inside it (`ip netns exec`, bounded in time), its history
judged by `samsa-sim --check-history`, the namespace deleted (also after a
failure, a timeout or a signal). A failed run keeps its seed, history (with
the fault timeline), broker log and the checker's verdict in DIR/run-<seed>/;
`--seed <seed> --runs 1` replays its schedule.

Exit status: 0 every run clean; 1 a run found violations or failed;
77 skipped because this machine cannot create a namespace or run nft
(a skip is not a pass: `make chaos` fails on it)."""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from chaos import namespace  # noqa: E402
from chaos.single_broker import PLANTS  # noqa: E402

EXIT_SKIPPED = 77


def samsa_bin():
    return os.environ.get("SAMSA_BIN") or str(REPO / "build" / "samsa")


def sim_bin():
    return os.environ.get("SAMSA_SIM") or str(REPO / "build" / "samsa-sim")


def run_timeout_s(rounds):
    # Generous: a round is three faults, each at most a phase timeout, a
    # restart and two full reads; a normal round takes seconds.
    return 120 + rounds * 3 * 90


def inside(args):
    """The run itself, inside namespace args.inside."""
    namespace.assert_inside(args.inside)
    out = Path(args.out)
    log = lambda s: print(s, flush=True)  # noqa: E731
    if args.nodes > 1:
        from chaos.cluster import ClusterRun
        kinds = args.faults.split(",") if args.faults else None
        run = ClusterRun(args.inside, args.seed, args.rounds, out, samsa_bin(), nodes=args.nodes, log=log,
                         kinds=kinds, idempotent=not args.plain_producer)
    else:
        from chaos.single_broker import Run
        run = Run(args.inside, args.seed, args.rounds, out, samsa_bin(), plant=args.plant, log=log)
    status = 0
    try:
        run.execute()
    except Exception:
        traceback.print_exc()
        status = 3
    finally:
        run.close()
        (out / "summary.json").write_text(json.dumps(run.summary()))
    return status


def check(history_path):
    """samsa-sim --check-history: (clean, its output)."""
    proc = subprocess.run([sim_bin(), "--check-history", str(history_path)], capture_output=True, text=True,
                          timeout=300)
    return proc.returncode == 0, proc.stdout + proc.stderr


class Interrupted(Exception):
    pass


def _raise_interrupted(signum, _frame):
    raise Interrupted(f"signal {signum}")


def run_one(args, seed):
    """One run: a dict for the table. Raises namespace.Unavailable."""
    out = Path(args.out) / f"run-{seed}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    ns = namespace.Namespace(f"samsa-chaos-{os.getpid()}")
    started = time.monotonic()
    row = {"seed": seed, "status": "error"}
    child = None
    try:
        ns.create()
        cmd = ns.exec_prefix() + [sys.executable, str(Path(__file__).resolve()), "--inside", ns.name,
                                   "--seed", str(seed), "--rounds", str(args.rounds), "--out", str(out),
                                   "--nodes", str(args.nodes)]
        if args.faults:
            cmd += ["--faults", args.faults]
        if args.plain_producer:
            cmd += ["--plain-producer"]
        if args.plant:
            cmd += ["--plant", args.plant]
        with open(out / "runner.log", "wb") as log:
            child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
            try:
                status = child.wait(timeout=run_timeout_s(args.rounds))
            except subprocess.TimeoutExpired:
                row["status"] = f"timed out after {run_timeout_s(args.rounds)}s"
                status = None
    finally:
        if child is not None and child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
        ns.delete()
    if ns.created:
        row["status"] = f"namespace {ns.name} not deleted"
        return row
    if status is not None and status != 0:
        row["status"] = f"run failed (exit {status}, see {out}/runner.log)"
    clean, verdict = check(out / "history.jsonl")
    (out / "verdict.txt").write_text(verdict)
    if not clean:
        dump_violated_logs(out, verdict)
    summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    row.update(summary)
    row["max_ack_gap_s"] = longest_ack_gap(out / "history.jsonl")
    row["nodes"] = args.nodes
    row["violations"] = sum(1 for line in verdict.splitlines() if line.startswith("VIOLATION"))
    for kind, col in (("lost-acknowledged", "lost"), ("duplicate", "dups"), ("inconsistent", "inconsistent"),
                      ("reordered", "reordered")):
        row[col] = sum(1 for line in verdict.splitlines() if line.startswith("VIOLATION") and kind in line)
    windows = unavailable_windows(out / "history.jsonl", summary.get("faults", []))
    if windows:
        (out / "unavailable.json").write_text(json.dumps(windows))
    row["seconds"] = round(time.monotonic() - started, 1)
    stuck = not_recovered(out / "history.jsonl", summary.get("faults", []))
    if status == 0:
        row["status"] = "ok" if clean else "VIOLATIONS"
        if stuck and row["status"] == "ok":
            row["status"] = "NOT RECOVERED"
            verdict += f"NOT RECOVERED: {stuck}\n"
    if row["status"] == "ok" and not summary.get("acked"):
        row["status"] = "no acknowledged writes"
    if args.plant and status == 0:
        # A planted run passes when the checker finds what was planted.
        row["status"] = "ok (plant found)" if not clean and summary.get("acked") else "PLANT NOT FOUND"
        if row["status"].startswith("ok"):
            print(verdict, end="")
            return row
    if row["status"] != "ok":
        print(verdict, end="")
        replay = f"--seed {seed} --runs 1 --rounds {args.rounds} --nodes {args.nodes}"
        replay += f" --faults {args.faults}" if args.faults else ""
        replay += " --plain-producer" if args.plain_producer else ""
        print(f"evidence kept in {out} (replay: {replay})")
    return row


def violated_partitions(verdict):
    """The partitions named by the verdict's VIOLATION lines
    ("VIOLATION <kind> <partition>: <detail>")."""
    names = set()
    for line in verdict.splitlines():
        words = line.split(" ", 3)
        if len(words) >= 3 and words[0] == "VIOLATION" and words[2].endswith(":"):
            names.add(words[2][:-1])
    return sorted(names)


def dump_violated_logs(out, verdict):
    """Every node's copy of each violated partition, as `samsa dump-log
    --deep-iteration --print-data-log` prints it, into
    dump-<partition>-<data dir>.txt: the logs to compare (which node holds
    which value at which offset)."""
    for name in violated_partitions(verdict):
        for log_dir in sorted(out.glob(f"data*/**/{name}")):
            segments = sorted(str(f) for f in log_dir.glob("*.log"))
            if not segments:
                continue
            node = log_dir.relative_to(out).parts[0]
            proc = subprocess.run([samsa_bin(), "dump-log", "--deep-iteration", "--print-data-log", *segments],
                                  capture_output=True, text=True, timeout=300)
            (out / f"dump-{name}-{node}.txt").write_text(proc.stdout + proc.stderr)


# After the last fault healed, acknowledged writes must come back within
# this long (a cluster that never recovers fails the run): three session
# timeouts of the chaos nodes (3 s) and an election (1 s), with room for a
# slow machine; the load goes on for about 14 s after the last heal.
RECOVERY_BOUND_S = 10.0


def ack_timeline(history_path):
    """(times of acknowledged writes, time of the last write sent): the load
    ends with the last send, so a stretch from the last acknowledgement to
    it is unavailability too, not the end of the run."""
    acks, load_end = [], 0.0
    with open(history_path, encoding="utf-8") as f:
        for line in f:
            if '"type":"ack"' in line:
                acks.append(json.loads(line)["time"])
            elif '"type":"sent"' in line:
                load_end = max(load_end, json.loads(line)["time"])
    return acks, load_end


def ack_gaps(acks, load_end):
    """[(start, end)] between consecutive acknowledgements, and from the last
    one to the end of the load."""
    bounds = acks + ([load_end] if acks and load_end > acks[-1] else [])
    return list(zip(bounds, bounds[1:]))


def longest_ack_gap(history_path):
    """The longest time without any acknowledged write (seconds): the run's
    worst window of unavailability."""
    acks, load_end = ack_timeline(history_path)
    return round(max((b - a for a, b in ack_gaps(acks, load_end)), default=0.0), 2)


def unavailable_windows(history_path, faults, longer_than_s=3.0):
    """[start, seconds, faults active in it] for every stretch with no
    acknowledged write longer than longer_than_s."""
    acks, load_end = ack_timeline(history_path)
    out = []
    for a, b in ack_gaps(acks, load_end):
        if b - a > longer_than_s:
            out.append([a, round(b - a, 2), [f[2] for f in faults if f[0] < b and f[1] > a]])
    return out


def not_recovered(history_path, faults, bound_s=RECOVERY_BOUND_S):
    """Why the cluster did not recover, or None: the load went on for more
    than bound_s after the last fault healed and no write was acknowledged
    in that time."""
    if not faults:
        return None
    healed = max(f[1] for f in faults)
    acks, load_end = ack_timeline(history_path)
    if load_end - healed <= bound_s or any(t > healed for t in acks if t <= healed + bound_s):
        return None
    return (f"no write acknowledged within {bound_s:.0f}s of the last heal at {healed:.1f}s "
            f"(load until {load_end:.1f}s)")


def print_table(rows):
    cols = ["seed", "nodes", "acked", "lost", "dups", "reordered", "inconsistent", "max_ack_gap_s", "status",
            "violations", "seconds"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c, "")) for c in cols))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=None, help="first run's seed (default: from the clock)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of faults per run (3 faults each)")
    parser.add_argument("--out", default=str(REPO / "build" / "chaos"))
    parser.add_argument("--plant", default=None, choices=PLANTS,
                        help="make the history wrong on purpose; the run then passes only if the checker "
                             "finds it (proof that the checks can fail)")
    parser.add_argument("--nodes", type=int, default=1, choices=(1, 3, 5),
                        help="1: one broker; 3 or 5: a cluster of combined nodes (chaos/cluster.py)")
    parser.add_argument("--faults", default=None,
                        help="cluster mode: a fixed comma-separated list of fault kinds instead of the seed's "
                             "(chaos/cluster.py FAULT_KINDS)")
    parser.add_argument("--plain-producer", action="store_true",
                        help="cluster mode: producers without idempotence (retries=0), as on one broker; "
                             "librdkafka then resends batches answered NOT_LEADER_OR_FOLLOWER, so a leader "
                             "change can duplicate a value (chaos/workload.py)")
    parser.add_argument("--inside", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        return inside(args)
    if args.runs < 1 or args.runs > 10_000 or args.rounds < 1 or args.rounds > 100:
        parser.error("--runs must be 1..10000 and --rounds 1..100")
    if os.geteuid() != 0:
        print(f"SKIPPED: the chaos suite needs root for `ip netns add` (running as uid {os.geteuid()}); "
              "a skip is not a pass", file=sys.stderr)
        return EXIT_SKIPPED
    for binary in (samsa_bin(), sim_bin()):
        if not os.access(binary, os.X_OK):
            print(f"missing {binary}: run `make build` first", file=sys.stderr)
            return 1
    signal.signal(signal.SIGTERM, _raise_interrupted)
    signal.signal(signal.SIGINT, _raise_interrupted)
    for name in namespace.delete_stale():
        print(f"deleted namespace {name}, left by a run that was killed", file=sys.stderr)
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    rows = []
    try:
        for i in range(args.runs):
            print(f"run {i + 1}/{args.runs}: seed {seed + i}", flush=True)
            rows.append(run_one(args, seed + i))
    except namespace.Unavailable as e:
        print(f"SKIPPED: {e}\nA skip is not a pass.", file=sys.stderr)
        return EXIT_SKIPPED
    except Interrupted as e:
        print(f"interrupted ({e}): namespace deleted, processes stopped", file=sys.stderr)
        print_table(rows)
        return 1
    print_table(rows)
    return 0 if all(r["status"].startswith("ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
