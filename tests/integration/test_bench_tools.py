"""The benchmark tools behind `make bench` (issue 6) work end to end.

Not a performance test: nothing here depends on how fast the machine is.
It checks that `samsa bench produce|consume|e2e` (librdkafka) move exactly
the records they say against a real broker, that the null broker answers a
real client's produce and sendfile fetch and survives consumers hanging up
mid-response, and that the fetch ping-pong experiment runs.
"""

import json
import os
import signal
import socket
import subprocess
import time

from harness import free_port, run, samsa_bin


def bench_bin(name):
    return os.path.join(os.path.dirname(samsa_bin()), name)


def bench_json(*args, timeout=120):
    out = run([samsa_bin(), "bench", *args, "--progress", "0", "--json"], timeout=timeout).stdout.decode()
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def test_produce_then_consume_every_record(broker):
    produced = bench_json("produce", "-b", broker.bootstrap, "--topic", "bt", "--partitions", "3",
                          "--records", "20000", "--record-size", "200", "--acks", "-1")
    assert produced["records"] == 20000 and produced["errors"] == 0
    assert produced["latency"]["samples"] == 20000
    consumed = bench_json("consume", "-b", broker.bootstrap, "--topic", "bt", "--records", "20000",
                          "--idle-timeout-ms", "20000")
    assert consumed["records"] == 20000 and consumed["errors"] == 0
    assert consumed["bytes"] == 20000 * 200


def test_e2e_at_a_fixed_rate_delivers_everything(broker):
    d = bench_json("e2e", "-b", broker.bootstrap, "--topic", "e2e", "--rate", "2000", "--duration", "5",
                   "--warmup", "1")
    # errors counts records sent but never received: every one arrived.
    assert d["errors"] == 0
    # Records scheduled after the warm-up second are timed: at most 8000.
    assert 0 < d["latency"]["samples"] <= 8000
    assert d["records"] > 0 and d["target_rate"] == 2000
    assert 0 < d["latency"]["p50_ms"] <= d["latency"]["p99_ms"] <= d["latency"]["max_ms"]


def test_e2e_unlimited_rate_reports_what_was_consumed(broker):
    d = bench_json("e2e", "-b", broker.bootstrap, "--topic", "peak", "--rate", "0", "--duration", "5",
                   "--warmup", "1")
    assert d["errors"] == 0
    assert d["records"] > 0 and d["records_per_sec"] > 0
    assert "target_rate" not in d


def start_null_broker(port):
    proc = subprocess.Popen([bench_bin("samsa-null-broker"), "--port", str(port), "--max-seconds", "300",
                             "--pool-mb", "8"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 20
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"null broker exited: {proc.stderr.read().decode(errors='replace')}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("null broker did not listen")


def test_null_broker_serves_real_clients_and_survives_hang_ups():
    port = free_port()
    proc = start_null_broker(port)
    try:
        bootstrap = f"127.0.0.1:{port}"
        produced = bench_json("produce", "-b", bootstrap, "--topic", "np", "--records", "10000")
        assert produced["records"] == 10000 and produced["errors"] == 0
        # Each consumer stops after its records while fetches it prefetched
        # are still being sent: the null broker must not die of SIGPIPE.
        for i in range(3):
            consumed = bench_json("consume", "-b", bootstrap, "--topic", f"nc{i}-rs1024", "--records", "30000")
            assert consumed["records"] == 30000 and consumed["bytes"] == 30000 * 1024
            assert proc.poll() is None, "null broker died after a consumer hung up"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)


def test_fetch_pingpong_runs_both_transports():
    for mode in ("sendfile", "copy"):
        out = run([bench_bin("samsa-alt-bench"), f"pingpong-{mode}", "--records", "50", "--record-size",
                   "65536"], timeout=120).stdout.decode()
        d = json.loads(out.strip().splitlines()[-1])
        assert d["records"] == 50 and d["bytes"] == 50 * 65536
        assert d["client_cpu_s"] >= 0 and d["server_cpu_s"] >= 0
