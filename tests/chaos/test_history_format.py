"""The chaos suite's recorder (chaos/history.py) and the checker's reader
(src/testing/history_file.h) agree on the history format: every event type
the recorder writes parses, a clean history passes samsa-sim
--check-history, a lost acknowledged write fails it. Needs no privileges
and no broker, so it runs in `make test` (ctest: chaos_history_format);
the chaos runs themselves are `make chaos`."""

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chaos.history import History  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def check(path):
    sim = os.environ.get("SAMSA_SIM") or str(REPO / "build" / "samsa-sim")
    return subprocess.run([sim, "--check-history", str(path)], capture_output=True, text=True, timeout=60)


def write_history(path, final_log):
    h = History(str(path))
    h.note("schedule", seed=1, plan=[["kill9", 0.5]])
    h.sent("t-0", "p-all-0", "all")
    h.sent("t-0", "p-one-0", "1")
    h.sent("t-0", "p-all-1", "all")
    h.ack("t-0", 0, "p-all-0", "all")
    h.ack("t-0", 1, "p-one-0", "1")
    h.error("t-0", "p-all-1", "Local: Message timed out")
    h.fetch("t-0", 0, 2, [(0, "p-all-0"), (1, "p-one-0")])
    h.fetch("t-0", 2, None, [])
    h.fault("sigstop", pid=1, seconds=0.5)
    h.crash("process")
    h.fault("kill9", pid=1)
    h.full_read("t-0", final_log[:2])
    h.resumed()
    h.full_read("t-0", final_log)
    h.close()
    return h.counts


def test_clean_history_passes(tmp_path):
    path = tmp_path / "history.jsonl"
    counts = write_history(path, [(0, "p-all-0"), (1, "p-one-0"), (2, "p-all-1")])
    result = check(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{sum(counts.values())} events, 2 acknowledged records, 0 violations" in result.stdout


def test_lost_acknowledged_write_fails(tmp_path):
    path = tmp_path / "history.jsonl"
    write_history(path, [(0, "p-all-0")])
    result = check(path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "VIOLATION lost-acknowledged t-0: offset 1 (p-one-0)" in result.stdout


def test_malformed_line_is_an_error_naming_it(tmp_path):
    path = tmp_path / "history.jsonl"
    write_history(path, [(0, "p-all-0"), (1, "p-one-0")])
    bad_line = len(path.read_text().splitlines()) + 1
    with open(path, "a") as f:
        f.write('{"type":"ack","partition":"t-0"\n')
    result = check(path)
    assert result.returncode == 2
    assert f"line {bad_line}:" in result.stderr


def test_write_sent_after_an_ack_and_acknowledged_below_it_is_reordered(tmp_path):
    path = tmp_path / "history.jsonl"
    h = History(str(path))
    h.sent("t-0", "a", "all")
    h.ack("t-0", 1, "a", "all")
    h.sent("t-0", "b", "all")  # sent after a's acknowledgement...
    h.ack("t-0", 0, "b", "all")  # ...acknowledged below it
    h.full_read("t-0", [(0, "b"), (1, "a")])
    h.close()
    result = check(path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "VIOLATION reordered t-0: b acknowledged at offset 0, sent after offset 1 was acknowledged" in result.stdout


def test_an_ack_without_an_offset_parses_and_must_be_in_the_final_read(tmp_path):
    # confluent-kafka's offset() is None for a message librdkafka knows was
    # written but not where; History records it as null.
    for final, clean in (([(0, "p-all-1"), (1, "p-all-0")], True), ([(0, "p-all-1")], False)):
        path = tmp_path / f"h-{clean}.jsonl"
        h = History(str(path))
        h.sent("t-0", "p-all-0", "all")
        h.sent("t-0", "p-all-1", "all")
        h.ack("t-0", None, "p-all-0", "all")
        h.ack("t-0", 0, "p-all-1", "all")
        h.full_read("t-0", final)
        h.close()
        result = check(path)
        assert result.returncode == (0 if clean else 1), result.stdout + result.stderr
        assert clean or "offset not known" in result.stdout


def _acks_at(path, ack_times, last_sent):
    h = History(str(path))
    for i, t in enumerate(ack_times):
        h.record("ack", partition="t-0", offset=i, values=[f"v{i}"], acks="all", time=t)
    h.record("sent", partition="t-0", values=["last"], acks="all", time=last_sent)
    h.close()


def test_a_cluster_that_does_not_recover_after_the_last_heal_fails_the_run(tmp_path):
    import run_chaos
    faults = [[5.0, 10.0, "pause", {}]]
    stuck, recovered = tmp_path / "stuck.jsonl", tmp_path / "recovered.jsonl"
    _acks_at(stuck, [1.0, 4.0], last_sent=30.0)
    _acks_at(recovered, [1.0, 4.0, 12.0], last_sent=30.0)
    assert run_chaos.not_recovered(recovered, faults) is None
    assert "no write acknowledged within 10s" in run_chaos.not_recovered(stuck, faults)
    # The stretch from the last acknowledgement to the end of the load counts.
    assert run_chaos.longest_ack_gap(stuck) == 26.0
    assert run_chaos.unavailable_windows(stuck, faults)[-1][:2] == [4.0, 26.0]
