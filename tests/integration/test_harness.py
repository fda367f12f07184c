"""Checks the harness (harness.py, conftest.py) against fake_broker.py, a
stand-in for `samsa server`: readiness, restart on the same port, kill -9,
bounded stop, failure reporting, and that the fixture always stops brokers."""

import os
import signal
from pathlib import Path

import pytest

import kafka_wire
from harness import Broker, BrokerError

FAKE = str(Path(__file__).with_name("fake_broker.py"))
pytest_plugins = ["pytester"]


def fake(tmp_path, **overrides):
    return Broker(tmp_path / "data", tmp_path / "broker.log", overrides, binary=FAKE)


def starts(broker):
    return (broker.data_dir / "starts").read_text().split()


def alive(pid):
    try:
        os.kill(int(pid), 0)
        return True
    except ProcessLookupError:
        return False


def test_start_restart_kill9_stop(tmp_path):
    broker = fake(tmp_path, **{"fake.ready.delay.ms": "300"})
    try:
        broker.start()
        assert kafka_wire.probe_api_versions(broker.host, broker.port)
        port = broker.port
        broker.restart()
        assert broker.port == port and kafka_wire.probe_api_versions(broker.host, port)
        broker.kill9()
        assert broker.proc.returncode == -signal.SIGKILL
        assert not kafka_wire.probe_api_versions(broker.host, port, timeout_s=0.5)
        broker.kill9_restart()  # already dead: just starts again
        assert kafka_wire.probe_api_versions(broker.host, port)
        assert len(starts(broker)) == 3
        assert broker.stop() == 0
        assert not any(alive(pid) for pid in starts(broker))
        log = broker.log_path.read_text()
        assert log.count("=== start #") == 3 and "listeners=PLAINTEXT://127.0.0.1:" in log
    finally:
        broker.stop()


def test_stop_escalates_to_sigkill(tmp_path):
    broker = fake(tmp_path, **{"fake.ignore.sigterm": "true"})
    broker.start()
    assert broker.stop(term_timeout_s=1) == -signal.SIGKILL


def test_start_failure_shows_the_log(tmp_path):
    broker = fake(tmp_path, **{"fake.exit.status": "3"})
    with pytest.raises(BrokerError, match=r"(?s)exited with status 3.*failing on purpose"):
        broker.start()


def test_fixture_reports_log_and_always_stops(pytester, monkeypatch, tmp_path):
    monkeypatch.setenv("SAMSA_BIN", FAKE)
    pidfile = tmp_path / "pids"
    pytester.makeconftest(Path(__file__).with_name("conftest.py").read_text())
    pytester.makepyfile(test_inner=f"""
def test_fails(broker):
    with open({str(pidfile)!r}, "a") as f:
        f.write(str(broker.proc.pid) + "\\n")
    broker.restart()
    with open({str(pidfile)!r}, "a") as f:
        f.write(str(broker.proc.pid) + "\\n")
    assert False, "deliberate"
""")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*broker log (127.0.0.1:*", "*fake broker starting*"])
    pids = pidfile.read_text().split()
    assert len(pids) == 2 and not any(alive(pid) for pid in pids)
