#!/usr/bin/python3
"""Runs one libFuzzer target of tests/fuzz (docs/testing.md, "Fuzzing").

    run_fuzz.py --fuzzer BIN --target NAME --work DIR (--test | --seconds N [--keep-findings])

1. Seeds: fuzz_seeds (beside BIN) writes inputs made by our own encoders, and
   the Kafka captures in tests/data/kafka-captures (when present) become
   inputs of the targets that read their kind of bytes. They are rebuilt in
   DIR/seeds on every run; the committed seeds are tests/fuzz/corpus/NAME.
2. Replay: every input in tests/fuzz/regressions/NAME (each a crash, hang or
   over-allocation found before) runs once; any failure fails the run.
3. Fuzz. --test (what `make test` runs): a fixed number of runs from a fixed
   seed over a fresh corpus, so that a run does the same work on any machine,
   with a time cap as a liveness bound. --seconds N (`make fuzz`): N seconds
   from a random seed, with the corpus kept in DIR/corpus between runs.

Limits (each finding is a failure): -rss_limit_mb, -malloc_limit_mb (one
allocation larger than the target's budget) and -timeout (one input taking
longer). With --keep-findings a finding is copied into
tests/fuzz/regressions/NAME/, to be committed with its fix.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FUZZ_DIR = REPO / "tests" / "fuzz"
CAPTURES = REPO / "tests" / "data" / "kafka-captures"

RSS_LIMIT_MB = 512
TIMEOUT_S = 10  # one input; generous for ASan on a loaded machine

# Per target: the largest single allocation allowed (MB; decompression may
# produce up to 64 MiB by design, growing its buffer in steps), and the runs
# of the --test mode (a few seconds each on a loaded 2-core machine).
TARGETS = {
    "request": {"malloc_limit_mb": 64, "test_runs": 40000},
    "record_batch": {"malloc_limit_mb": 160, "test_runs": 20000},
    "decompress": {"malloc_limit_mb": 160, "test_runs": 8000},
    "log_recovery": {"malloc_limit_mb": 64, "test_runs": 300},
    "metadata_record": {"malloc_limit_mb": 64, "test_runs": 40000},
    "offsets_record": {"malloc_limit_mb": 64, "test_runs": 40000},
    "producer_snapshot": {"malloc_limit_mb": 64, "test_runs": 40000},
    "raft_request": {"malloc_limit_mb": 64, "test_runs": 40000},
}
TEST_TIME_CAP_S = 60


def load_capture(path):
    """A KafkaJS capture: {"type": "Buffer", "data": [bytes]}."""
    return bytes(json.loads(path.read_text())["data"])


def api_table():
    """Capture dir name (lowerCamel API name) -> (key, first flexible version or None)."""
    table = {}
    for msg in (REPO / "src" / "protocol" / "messages").glob("*.msg"):
        m = re.match(r"api (\w+) key=(\d+) versions=(\d+)-(\d+)(?: flexible=(\d+)\+)?", msg.read_text())
        if m:
            name = m.group(1)
            table[name[0].lower() + name[1:]] = (int(m.group(2)), int(m.group(5)) if m.group(5) else None)
    return table


def request_header(key, version, flexible_from):
    client_id = b"fuzz"
    header = key.to_bytes(2, "big") + version.to_bytes(2, "big") + (7).to_bytes(4, "big")
    header += len(client_id).to_bytes(2, "big") + client_id
    if flexible_from is not None and version >= flexible_from:
        header += b"\x00"  # no tagged fields
    return header


def v2_batches():
    """The v2 record batches among the captures."""
    out = []
    for f in sorted((CAPTURES / "recordBatch").glob("*recordbatch*.json")):
        data = load_capture(f)
        if len(data) >= 61 and data[16] == 2:
            out.append((f.stem, data))
    return out


def capture_seeds(target):
    """(name, bytes) seeds made from the Kafka captures, for `target`."""
    if not CAPTURES.is_dir():
        return []
    seeds = []
    if target == "request":
        apis = api_table()
        for api_dir in sorted(p for p in CAPTURES.iterdir() if p.is_dir()):
            if api_dir.name not in apis:
                continue
            key, flexible_from = apis[api_dir.name]
            for f in sorted(api_dir.glob("v*_request*.json")):
                version = int(re.match(r"v(\d+)_", f.name).group(1))
                seeds.append((f"{api_dir.name}_{f.stem}", request_header(key, version, flexible_from) + load_capture(f)))
    elif target == "record_batch":
        for name, batch in v2_batches():
            seeds += [(f"{name}_deep", b"\x07" + batch), (f"{name}_shallow", b"\x06" + batch)]
        for f in sorted((CAPTURES / "messageSet").glob("*.json")):
            seeds.append((f.stem, b"\x07" + load_capture(f)[4:]))  # after the RECORDS length
    elif target == "decompress":
        for name, batch in v2_batches():
            codec = int.from_bytes(batch[21:23], "big") & 7
            if codec:
                seeds.append((name, bytes([codec, 2]) + batch[61:]))
    elif target == "log_recovery":
        segment = b"".join(batch for _, batch in v2_batches())
        if segment:
            seeds.append(("captured_batches", b"\x00\x00\x00\x00" + segment))
    return seeds


def write_seeds(fuzzer, target, seeds_dir):
    shutil.rmtree(seeds_dir, ignore_errors=True)
    seeds_dir.mkdir(parents=True)
    tool = fuzzer.parent / "fuzz_seeds"
    subprocess.run([str(tool), target, str(seeds_dir)], check=True, stdout=subprocess.DEVNULL)
    captured = capture_seeds(target)
    for name, data in captured:
        (seeds_dir / f"capture_{name}").write_bytes(data)
    return len(list(seeds_dir.iterdir())), len(captured)


def limits(target):
    return [f"-rss_limit_mb={RSS_LIMIT_MB}", f"-malloc_limit_mb={TARGETS[target]['malloc_limit_mb']}",
            f"-timeout={TIMEOUT_S}"]


def tail(path, n=40):
    lines = path.read_text(errors="replace").splitlines()
    return "\n".join(lines[-n:])


def replay(fuzzer, target, work):
    inputs = sorted(p for p in (FUZZ_DIR / "regressions" / target).glob("*") if p.is_file() and p.name != "README.md")
    if not inputs:
        return True, 0
    log = work / "replay.log"
    with log.open("w") as out:
        rc = subprocess.run([str(fuzzer), *limits(target), *map(str, inputs)], stdout=out, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        print(f"fuzz_{target}: a regression input fails again:\n{tail(log)}")
        return False, len(inputs)
    return True, len(inputs)


def stats(log):
    text = log.read_text(errors="replace")
    runs = re.search(r"stat::number_of_executed_units:\s+(\d+)", text)
    done = re.findall(r"#(\d+)\s+(?:DONE|pulse|NEW|REDUCE|INITED)\s+cov: (\d+) ft: (\d+) corp: (\d+)", text)
    rss = re.search(r"stat::peak_rss_mb:\s+(\d+)", text)
    secs = re.search(r"Done \d+ runs in (\d+) second", text)
    cov, ft, corp = done[-1][1:] if done else ("?", "?", "?")
    return (f"{runs.group(1) if runs else '?'} runs in {secs.group(1) if secs else '?'} s, cov {cov}, "
            f"ft {ft}, corpus {corp}, peak RSS {rss.group(1) if rss else '?'} MB")


def keep_findings(target, artifacts):
    kept = []
    dest = FUZZ_DIR / "regressions" / target
    dest.mkdir(parents=True, exist_ok=True)
    for a in sorted(artifacts.iterdir()):
        data = a.read_bytes()
        kind = a.name.split("-")[0]  # crash, timeout, oom, leak, slow-unit
        path = dest / f"{kind}-{hashlib.sha1(data).hexdigest()[:16]}"
        path.write_bytes(data)
        kept.append(path)
    return kept


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fuzzer", required=True, type=Path)
    ap.add_argument("--target", required=True, choices=sorted(TARGETS))
    ap.add_argument("--work", required=True, type=Path)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--test", action="store_true", help="the short, fixed run of make test")
    mode.add_argument("--seconds", type=int, help="fuzz this long (make fuzz)")
    ap.add_argument("--keep-findings", action="store_true", help="copy findings into tests/fuzz/regressions/")
    args = ap.parse_args()
    target, fuzzer = args.target, args.fuzzer.resolve()
    if not fuzzer.exists():
        print(f"fuzz_{target}: {fuzzer} is not built: run `make fuzz-build` (make test does)")
        return 1

    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    corpus, artifacts = work / "corpus", work / "artifacts"
    if args.test:
        shutil.rmtree(corpus, ignore_errors=True)  # the same work on every run
    shutil.rmtree(artifacts, ignore_errors=True)
    corpus.mkdir(exist_ok=True)
    artifacts.mkdir()
    n_seeds, n_captured = write_seeds(fuzzer, target, work / "seeds")

    ok, n_regressions = replay(fuzzer, target, work)
    if not ok:
        return 1

    if args.test:
        run = [f"-runs={TARGETS[target]['test_runs']}", "-seed=1", f"-max_total_time={TEST_TIME_CAP_S}"]
    else:
        run = [f"-max_total_time={args.seconds}"]
    dirs = [corpus, FUZZ_DIR / "corpus" / target, work / "seeds", FUZZ_DIR / "regressions" / target]
    cmd = [str(fuzzer), *limits(target), *run, f"-artifact_prefix={artifacts}/", "-print_final_stats=1",
           *[str(d) for d in dirs if d.is_dir()]]
    log = work / "fuzz.log"
    with log.open("w") as out:
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=work).returncode
    found = sorted(artifacts.iterdir())
    summary = (f"fuzz_{target}: {stats(log)}; {n_seeds} seeds ({n_captured} from captures), "
               f"{n_regressions} regression inputs replayed")
    if rc == 0 and not found:
        print(summary)
        return 0
    print(f"{summary}\nfuzz_{target}: FOUND A PROBLEM (exit {rc}):\n{tail(log)}")
    if args.keep_findings and found:
        for p in keep_findings(target, artifacts):
            print(f"fuzz_{target}: kept as a regression input: {p.relative_to(REPO)} (commit it with the fix)")
    elif found:
        print(f"fuzz_{target}: inputs in {artifacts}; reproduce with: {fuzzer} {found[0]}")
    print(f"fuzz_{target}: full log: {log}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
