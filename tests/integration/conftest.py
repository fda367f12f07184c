"""Fixtures for the integration tests.

broker: a fresh `samsa server` (free loopback port, temporary data dir),
    started before the test and always stopped after it, pass or fail.
    Attributes: bootstrap ("127.0.0.1:PORT"), host, port, data_dir, log_path;
    methods: restart() (SIGTERM, wait, start again), kill9() (SIGKILL),
    kill9_restart(), start(), stop(). Extra server settings come from
    @pytest.mark.broker_overrides({"key": "value"}).
make_broker: a factory for more brokers in one test (same guarantees).
mock_cluster: librdkafka's mock cluster in its own process (see harness.py).

When a test fails, the tail of every broker log it used is attached to the
failure report ("broker log" section). The binary is $SAMSA_BIN (set by
CMake), defaulting to build/samsa.
"""

import pytest

from harness import Broker, MockCluster


def pytest_configure(config):
    config.addinivalue_line("markers", "broker_overrides(dict): extra `samsa server` settings")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for broker in getattr(item, "_samsa_brokers", []):
            report.sections.append((f"broker log ({broker.bootstrap}, {broker.log_path})",
                                    broker.log_tail()))


@pytest.fixture
def make_broker(request, tmp_path):
    brokers = []
    request.node._samsa_brokers = brokers

    def factory(overrides=None, start=True):
        n = len(brokers)
        broker = Broker(tmp_path / f"data{n}", tmp_path / f"broker{n}.log", overrides)
        brokers.append(broker)
        if start:
            broker.start()
        return broker

    try:
        yield factory
    finally:
        for broker in brokers:
            broker.stop()


@pytest.fixture
def broker(request, make_broker):
    marker = request.node.get_closest_marker("broker_overrides")
    return make_broker(marker.args[0] if marker else None)


@pytest.fixture
def mock_cluster():
    clusters = []

    def factory(topics, brokers=1):
        cluster = MockCluster(topics, brokers)
        clusters.append(cluster)
        return cluster

    try:
        yield factory
    finally:
        for cluster in clusters:
            cluster.stop()
