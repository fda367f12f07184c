"""`samsa server` refuses, at startup, configurations it cannot run yet
(src/server/cluster_support.h): a broker of a dynamic quorum (bootstrap
servers only). The configurations are valid by Kafka's rules (controller
listeners and all). A node with one role runs, formatted first.
Three combined nodes configured as one cluster must be formatted with one
cluster id first (they run as one cluster then: test_cluster_boot.py). A
refusal is exit code 1 and a message saying what is unsupported or missing
and what to do, before any data is written. The single-node sample
config/server.properties still starts (a node that is its own only voter:
test_cluster_config.py, which formats it first).
"""

import pytest

from harness import HOST, REPO, Broker, BrokerError

START_TIMEOUT_S = 30


class ConfigFileBroker(Broker):
    """`samsa server --config FILE`, with the harness's free port and data dir
    as overrides on top (FILE defaults to config/server.properties, what
    `make run` uses)."""

    def __init__(self, tmp_path, config_path=REPO / "config" / "server.properties", overrides=None):
        super().__init__(tmp_path / "data", tmp_path / "broker.log", overrides, start_timeout_s=START_TIMEOUT_S)
        self.config_path = config_path

    def command(self):
        cmd = super().command()
        return cmd[:2] + ["--config", str(self.config_path)] + cmd[2:]


def refused(tmp_path, settings):
    """Starts `samsa server` with `settings` in its config file, requires that
    it exits with status 1 before answering a client (a broker that answers
    fails the test at once) and without writing data; returns its output.
    `listeners`, if given, replaces the harness's own override."""
    settings = dict(settings)
    overrides = {"listeners": settings.pop("listeners")} if "listeners" in settings else None
    config = tmp_path / "server.properties"
    config.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    broker = ConfigFileBroker(tmp_path, config, overrides)
    try:
        broker.start()
        pytest.fail(f"samsa server started and answered a client instead of refusing {settings}")
    except BrokerError as error:
        assert "exited with status 1 while starting" in str(error), str(error)
    finally:
        broker.stop()
    assert not any(broker.data_dir.iterdir()), f"refused, yet wrote {list(broker.data_dir.iterdir())}"
    return broker.log_tail()


@pytest.mark.parametrize("node_id", [1, 2, 3])
def test_three_nodes_configured_as_one_cluster_are_each_refused_until_formatted(tmp_path, node_id):
    voters = ",".join(f"{n}@{HOST}:{19093 + n}" for n in (1, 2, 3))
    log = refused(tmp_path, {"process.roles": "broker,controller", "node.id": node_id,
                             "controller.quorum.voters": voters,
                             "listeners": f"PLAINTEXT://{HOST}:0,CONTROLLER://{HOST}:{19093 + node_id}",
                             "controller.listener.names": "CONTROLLER"})
    assert "have you run `samsa storage format` to format the directory?" in log, log
    assert 'samsa storage format --cluster-id "$(samsa storage random-uuid)" --config FILE' in log, log


@pytest.mark.parametrize("role", ["broker", "controller"])
def test_a_single_role_node_is_formatted_first(tmp_path, role):
    """A split-roles node runs (test_split_roles.py); as a node of a quorum
    it is formatted first, like a combined one."""
    settings = {"process.roles": role, "controller.quorum.voters": f"1@{HOST}:19094",
                "controller.listener.names": "CONTROLLER"}
    if role == "broker":
        settings.update({"node.id": 2, "listeners": f"PLAINTEXT://{HOST}:0"})
    else:
        settings.update({"node.id": 1, "listeners": f"CONTROLLER://{HOST}:19094"})
    log = refused(tmp_path, settings)
    assert "is not supported yet" not in log, log
    assert "have you run `samsa storage format` to format the directory?" in log, log


def test_a_broker_of_a_dynamic_quorum_is_refused(tmp_path):
    log = refused(tmp_path, {"process.roles": "broker", "node.id": 2, "listeners": f"PLAINTEXT://{HOST}:0",
                             "controller.quorum.bootstrap.servers": f"{HOST}:19094",
                             "controller.listener.names": "CONTROLLER"})
    assert "a dynamic quorum (KIP-853) is not supported yet" in log, log
    assert "Set controller.quorum.voters to the static quorum" in log, log


def test_the_sample_single_node_config_still_starts(tmp_path):
    broker = ConfigFileBroker(tmp_path)
    try:
        broker.start()  # raises with the log if the broker exits or never answers
        assert broker.running()
    finally:
        status = broker.stop()
    assert status == 0, broker.log_tail()
