"""The cluster tools against real `samsa server` processes (issue 14 items 7
and 8, issue 15 item 8): `samsa cluster describe` (text and --json) checked
field by field against the Metadata and DescribeQuorum answers read here
as raw bytes (kafka_wire.py), `samsa topic describe` with kafka-topics.sh's
replication reports, and `samsa dev cluster`.

Every server listens on 127.0.0.1 and is stopped by PID (harness.Broker,
or the dev cluster's own children, checked gone by PID).
"""

import json
import re

import pytest

import kafka_wire as kw
from clients import samsa
from harness import HOST, free_port
from test_describe_quorum import CLUSTER_ID, CombinedNode, describe_quorum
from cluster_harness import wait_until

API_METADATA = 3
METADATA_VERSION = 12
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


def base64_uuid(raw):
    import base64
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def metadata(host, port):
    """Metadata v12 for every topic: the brokers, cluster id, controller id
    and every partition's leader, replicas, ISR and offline replicas."""
    body = b"\x00" + b"\x00" + b"\x00" + kw.NO_TAGS  # topics null, no auto-create, no topic ops
    r = kw.flexible_call(host, port, API_METADATA, METADATA_VERSION, body)
    assert r is not None, "Metadata: connection closed"
    r.i32()  # throttle

    def broker():
        b = {"id": r.i32(), "host": r.compact_string(), "port": r.i32(), "rack": r.compact_string()}
        r.tags()
        return b

    def int_array():
        return r.compact_array(r.i32)

    def partition():
        p = {"error": r.i16(), "index": r.i32(), "leader": r.i32(), "epoch": r.i32(),
             "replicas": int_array(), "isr": int_array(), "offline": int_array()}
        r.tags()
        return p

    def topic():
        t = {"error": r.i16(), "name": r.compact_string(), "id": base64_uuid(r.uuid()),
             "internal": r.boolean(), "partitions": r.compact_array(partition)}
        r.i32()  # topic authorized operations
        r.tags()
        return t

    out = {"brokers": r.compact_array(broker), "cluster_id": r.compact_string(),
           "controller_id": r.i32(), "topics": r.compact_array(topic)}
    r.tags()
    r.done()
    return out


@pytest.fixture
def node(tmp_path):
    n = CombinedNode(tmp_path)
    n.start()
    yield n
    n.stop()


def create(node, topic, *extra):
    samsa("topic", "create", "-b", node.bootstrap, "--topic", topic, *extra)


# --- samsa cluster describe ---------------------------------------------------

def cluster_json(*args):
    out = samsa("cluster", "describe", "--json", *args)
    return json.loads(out.stdout.decode())


def quorum_partition(port):
    answer = describe_quorum(port, 2)
    assert answer["error"] == kw.NONE, answer
    [topic] = answer["topics"]
    [p] = topic["partitions"]
    assert p["error"] == kw.NONE, p
    return p, answer["nodes"]


def test_cluster_describe_json_matches_metadata_and_describe_quorum(node):
    create(node, "orders", "--partitions", "3")
    described = cluster_json("-b", node.bootstrap)
    md = metadata(HOST, node.port)
    p, nodes = quorum_partition(node.port)
    assert described["cluster_id"] == md["cluster_id"] == CLUSTER_ID
    assert described["metadata_controller_id"] == md["controller_id"]
    assert described["active_controller"] == p["leader"] == 1
    assert [(b["id"], b["host"], b["port"], b["rack"], b["fenced"]) for b in described["brokers"]] == \
        [(b["id"], b["host"], b["port"], b["rack"], False) for b in md["brokers"]]
    partitions = [q for t in md["topics"] for q in t["partitions"]]
    assert described["partitions"] == len(partitions) >= 3
    assert described["under_replicated_partitions"] == \
        sum(1 for q in partitions if len(q["isr"]) < len(q["replicas"])) == 0
    assert described["offline_partitions"] == sum(1 for q in partitions if q["leader"] < 0) == 0

    quorum = described["quorum"]
    assert described["quorum_error"] is None
    assert quorum["answered_by"] == node.bootstrap
    assert (quorum["leader_id"], quorum["leader_epoch"]) == (p["leader"], p["epoch"])
    # The high watermark only grows and the tool asked before us: at most
    # ours (equal unless a metadata record was written in between).
    assert 1 <= quorum["high_watermark"] <= p["high_watermark"]
    [voter] = quorum["voters"]
    [wire_voter] = p["voters"]
    assert voter["id"] == wire_voter["id"] == 1
    # The one voter is the leader: its log end offset is the high watermark.
    assert voter["log_end_offset"] == quorum["high_watermark"]
    assert wire_voter["log_end_offset"] == p["high_watermark"]
    assert voter["directory_id"] == ZERO_UUID
    assert voter["lag"] == 0 and voter["status"] == "Leader"
    assert voter["last_fetch_timestamp"] > 0 and voter["last_caught_up_timestamp"] > 0
    assert voter["endpoints"] == [f"{name}://{h}:{port}" for _, listeners in nodes for name, h, port in listeners]
    assert voter["endpoints"] == [f"CONTROLLER://{HOST}:{node.controller_port}"]
    assert quorum["observers"] == [] == p["observers"]
    assert quorum["max_follower_lag"] == 0 and quorum["max_follower_lag_time_ms"] == 0


def text_report(*args):
    return samsa("cluster", "describe", *args).stdout.decode()


def status_line(text, label):
    m = re.search(rf"^{label}:\s+(.*)$", text, re.M)
    assert m, f"no {label} line in\n{text}"
    return m.group(1)


def test_cluster_describe_text_shows_kafka_metadata_quorum_lines(node):
    create(node, "orders", "--partitions", "2")
    text = text_report("-b", node.bootstrap)
    md = metadata(HOST, node.port)
    p, _ = quorum_partition(node.port)
    assert status_line(text, "ClusterId") == CLUSTER_ID
    assert status_line(text, "ActiveController") == "1"
    assert status_line(text, "Brokers") == "1 unfenced, 0 fenced"
    partitions = sum(len(t["partitions"]) for t in md["topics"])
    assert status_line(text, "Partitions") == str(partitions)
    assert status_line(text, "UnderReplicatedPartitions") == "0"
    assert status_line(text, "OfflinePartitions") == "0"
    # The broker table: Kafka's layout, every cell padded and tab-ended.
    rows = [line.split("\t") for line in text.splitlines() if line.startswith(("BrokerId", "1 "))]
    assert [c.strip() for c in rows[0]] == ["BrokerId", "Host:Port", "Rack", "Status", ""]
    [b] = md["brokers"]
    assert [c.strip() for c in rows[1]] == [str(b["id"]), f"{b['host']}:{b['port']}", "-", "unfenced", ""]
    # kafka-metadata-quorum describe --status, label for label.
    assert f"Metadata quorum (answered by {node.bootstrap})" in text
    assert status_line(text, "LeaderId") == str(p["leader"])
    assert status_line(text, "LeaderEpoch") == str(p["epoch"])
    assert status_line(text, "HighWatermark") == str(p["high_watermark"])
    assert status_line(text, "MaxFollowerLag") == "0"
    assert status_line(text, "MaxFollowerLagTimeMs") == "0"
    assert status_line(text, "CurrentVoters") == \
        f'[{{"id": 1, "endpoints": ["CONTROLLER://{HOST}:{node.controller_port}"]}}]'
    assert status_line(text, "CurrentObservers") == "[]"
    # ... and describe --replication's table.
    table = text[text.index("NodeId\t"):].splitlines()
    assert [c.strip() for c in table[0].split("\t")] == \
        ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp",
         "Status", ""]
    cells = [c.strip() for c in table[1].split("\t")]
    assert cells[:4] == ["1", ZERO_UUID, str(p["voters"][0]["log_end_offset"]), "0"]
    assert int(cells[4]) > 0 and int(cells[5]) > 0 and cells[6] == "Leader"
    assert len(table) == 2


def test_cluster_describe_asks_the_controller_listener_with_bootstrap_controller(node):
    described = cluster_json("-b", node.bootstrap, "--bootstrap-controller", f"{HOST}:{node.controller_port}")
    assert described["quorum"]["answered_by"] == f"{HOST}:{node.controller_port}"
    assert described["quorum"]["leader_id"] == 1


def test_cluster_describe_without_a_quorum_still_shows_the_brokers(node):
    # --bootstrap-controller names a port nobody listens on: the brokers are
    # still shown, and why the quorum is missing.
    dead = free_port()
    out = samsa("cluster", "describe", "-b", node.bootstrap, "--bootstrap-controller", f"{HOST}:{dead}",
                "--timeout-ms", "2000")
    text = out.stdout.decode()
    assert "Metadata quorum: unavailable: cannot connect to" in text
    assert "warning: quorum unavailable" in out.stderr.decode()
    assert status_line(text, "ActiveController").startswith("1 (Metadata's ControllerId")
    described = cluster_json("-b", node.bootstrap, "--bootstrap-controller", f"{HOST}:{dead}",
                             "--timeout-ms", "2000")
    assert described["quorum"] is None and "cannot connect" in described["quorum_error"]
    assert [b["id"] for b in described["brokers"]] == [1]


def test_cluster_describe_of_no_broker_fails():
    out = samsa("cluster", "describe", "-b", f"{HOST}:{free_port()}", "--timeout-ms", "2000", check=False)
    assert out.returncode == 1
    assert out.stderr.decode().startswith("samsa cluster describe: cannot connect to")


class QuorumStub:
    """A listener that is not the quorum leader: ApiVersions v0 lists
    DescribeQuorum 0-2 (or nothing, with serves_quorum=False) and every
    DescribeQuorum gets NOT_LEADER_OR_FOLLOWER naming leader 1, with `nodes`
    as v2's Nodes ([(id, [(listener, host, port)])]). Threads end with the
    stub (close) or after 30 s idle."""

    def __init__(self, nodes, serves_quorum=True):
        import socket
        import threading
        self.nodes = nodes
        self.serves_quorum = serves_quorum
        self.sock = socket.socket()
        self.sock.bind((HOST, 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.address = f"{HOST}:{self.sock.getsockname()[1]}"
        self.requests = []
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        import threading
        while not self.closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            deadline_s = 30
            while not self.closed.is_set():
                head = kw.recv_exact(conn, 4, deadline_s)
                if head is None:
                    return
                payload = kw.recv_exact(conn, int.from_bytes(head, "big"), deadline_s)
                if payload is None:
                    return
                key, version = int.from_bytes(payload[0:2], "big"), int.from_bytes(payload[2:4], "big")
                self.requests.append((key, version))
                correlation = payload[4:8]
                conn.sendall(kw.frame(correlation + (self._api_versions() if key == kw.API_API_VERSIONS
                                                     else kw.NO_TAGS + self._not_leader())))

    def _api_versions(self):
        keys = [(kw.API_API_VERSIONS, 0, 3)] + ([(55, 0, 2)] if self.serves_quorum else [])
        body = b"".join(k.to_bytes(2, "big") + lo.to_bytes(2, "big") + hi.to_bytes(2, "big") for k, lo, hi in keys)
        return b"\x00\x00" + len(keys).to_bytes(4, "big") + body

    def _not_leader(self):
        partition = ((0).to_bytes(4, "big") + (6).to_bytes(2, "big") + b"\x00" + (1).to_bytes(4, "big") +
                     (1).to_bytes(4, "big") + (0).to_bytes(8, "big") + kw.compact_array([]) +
                     kw.compact_array([]) + kw.NO_TAGS)
        topic = kw.compact_string("__cluster_metadata") + kw.compact_array([partition]) + kw.NO_TAGS
        nodes = [node_id.to_bytes(4, "big") +
                 kw.compact_array([kw.compact_string(name) + kw.compact_string(host) + port.to_bytes(2, "big") +
                                   kw.NO_TAGS for name, host, port in listeners]) + kw.NO_TAGS
                 for node_id, listeners in self.nodes]
        return (b"\x00\x00" + b"\x00" + kw.compact_array([topic]) + kw.compact_array(nodes) + kw.NO_TAGS)

    def close(self):
        self.closed.set()
        self.sock.close()
        self.thread.join(timeout=5)


@pytest.fixture
def quorum_stub():
    stubs = []

    def factory(nodes, serves_quorum=True):
        stub = QuorumStub(nodes, serves_quorum)
        stubs.append(stub)
        return stub

    yield factory
    for stub in stubs:
        stub.close()


def test_cluster_describe_follows_the_leader_to_its_controller_listener(node, quorum_stub):
    stub = quorum_stub([(1, [("CONTROLLER", HOST, node.controller_port)])])
    described = cluster_json("-b", node.bootstrap, "--bootstrap-controller", stub.address)
    assert (55, 2) in stub.requests  # asked the stub first, at v2
    assert described["quorum"]["answered_by"] == f"{HOST}:{node.controller_port}"
    assert described["quorum"]["leader_id"] == 1


def test_cluster_describe_follows_the_leader_to_its_broker_listener(node, quorum_stub):
    # No Nodes in the answer: the leader's id names a broker in Metadata (a
    # combined node), whose broker listener answers.
    stub = quorum_stub([])
    described = cluster_json("-b", node.bootstrap, "--bootstrap-controller", stub.address)
    assert described["quorum"]["answered_by"] == node.bootstrap


def test_cluster_describe_says_when_a_listener_does_not_serve_describe_quorum(node, quorum_stub):
    stub = quorum_stub([], serves_quorum=False)
    described = cluster_json("-b", node.bootstrap, "--bootstrap-controller", stub.address)
    assert described["quorum"] is None
    assert described["quorum_error"] == (f"{stub.address} does not answer DescribeQuorum (a broker-only node): "
                                         "ask a controller with --bootstrap-controller HOST:PORT")


# --- samsa topic describe ------------------------------------------------------

PARTITION_LINE = re.compile(
    r"^\tTopic: (\S+)\tPartition: (\d+)\tLeader: (\S+)\tReplicas: ([\d,]*)\tIsr: ([\d,]*)(\tOffline: [\d,]+)?$")


def describe_lines(node, *args):
    return samsa("topic", "describe", "-b", node.bootstrap, *args).stdout.decode().splitlines()


def ids(text):
    return [int(x) for x in text.split(",")] if text else []


def test_topic_describe_matches_metadata_field_by_field(node):
    create(node, "orders", "--partitions", "3")
    lines = describe_lines(node, "--topic", "orders")
    [topic] = [t for t in metadata(HOST, node.port)["topics"] if t["name"] == "orders"]
    assert lines[0].startswith(f"Topic: orders\tTopicId: {topic['id']}\tPartitionCount: 3\tReplicationFactor: 1\t")
    assert topic["id"] != ZERO_UUID
    by_index = {p["index"]: p for p in topic["partitions"]}
    for index, line in enumerate(lines[1:]):
        m = PARTITION_LINE.match(line)
        assert m, line
        p = by_index[index]
        assert (m.group(1), int(m.group(2))) == ("orders", p["index"])
        assert int(m.group(3)) == p["leader"]
        assert ids(m.group(4)) == p["replicas"] and ids(m.group(5)) == p["isr"]
        assert m.group(6) is None and p["offline"] == []  # no Offline field while none is offline
    assert len(lines) == 4


def test_topic_describe_replication_reports_on_an_rf1_topic(node):
    # RF=1 with min.insync.replicas=2: the ISR (1) is below the minimum, yet
    # the partition is fully replicated and has a live leader.
    create(node, "strict", "--partitions", "2", "--config", "min.insync.replicas=2")
    create(node, "relaxed", "--partitions", "1")
    under_min = describe_lines(node, "--under-min-isr-partitions")
    assert under_min == [f"\tTopic: strict\tPartition: {p}\tLeader: 1\tReplicas: 1\tIsr: 1" for p in (0, 1)]
    assert describe_lines(node, "--under-min-isr-partitions", "--topic", "relaxed") == []
    # --at-min-isr-partitions: relaxed has ISR 1 = its min.insync.replicas (1).
    assert describe_lines(node, "--at-min-isr-partitions", "--topic", "relaxed") == \
        ["\tTopic: relaxed\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1"]
    assert describe_lines(node, "--under-replicated-partitions") == []
    assert describe_lines(node, "--unavailable-partitions") == []
    # Flags combine: any match, the topic line left out, as kafka-topics.sh.
    combined = describe_lines(node, "--under-replicated-partitions", "--under-min-isr-partitions",
                              "--topic", "strict")
    assert combined == under_min


def test_under_min_isr_report_needs_the_configs(mock_cluster):
    # librdkafka's mock cluster answers Metadata but not DescribeConfigs:
    # the report cannot be made without min.insync.replicas, and says so.
    cluster = mock_cluster({"alpha": 1})
    out = samsa("topic", "describe", "-b", cluster.bootstrap, "--under-min-isr-partitions",
                "--timeout-ms", "2000", check=False)
    assert out.returncode == 1
    assert "configs unavailable" in out.stderr.decode()
    # The other reports need no configs.
    fine = samsa("topic", "describe", "-b", cluster.bootstrap, "--under-replicated-partitions",
                 "--timeout-ms", "2000")
    assert fine.stdout == b""


# --- samsa dev cluster ---------------------------------------------------------

import os
import select
import signal
import subprocess
import time

from clients import kcat_consume, kcat_produce
from harness import samsa_bin

# A split cluster's node has one of the two listeners.
NODE_LINE = re.compile(r"^  node (\d+): pid (\d+), (?:broker (\S+), )?(?:controller (\S+), )?config (\S+), log (\S+)$")
STARTED = re.compile(r"^samsa dev cluster: (\d+) nodes?, cluster id (\S+), data under (\S+)$")
# What `samsa server` says today when controller.quorum.voters names other
# nodes (server/cluster_support.cc): the missing piece for N > 1.


class DevCluster:
    """`samsa dev cluster` in its own session; its output read with bounds."""

    def __init__(self, tmp_path, brokers, *extra):
        self.data_dir = tmp_path / "cluster"
        self.stderr_path = tmp_path / f"dev-{brokers}.err"
        cmd = [samsa_bin(), "dev", "cluster", "--brokers", str(brokers), "--data-dir", str(self.data_dir), *extra]
        with open(self.stderr_path, "wb") as err:
            # Unbuffered: a buffered readline could take several lines at once
            # and leave select() waiting for bytes already read.
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                                         start_new_session=True, bufsize=0)
        self.nodes = {}
        self.bootstrap = None
        self.cluster_id = None

    def wait_started(self, timeout_s=90):
        """True once the bootstrap list is printed; False if it exited first."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = self.proc.stdout.readline().decode()
            if not line:
                self.proc.wait(timeout=30)
                return False
            if m := STARTED.match(line.rstrip("\n")):
                self.cluster_id = m.group(2)
            if m := NODE_LINE.match(line.rstrip("\n")):
                self.nodes[int(m.group(1))] = {"pid": int(m.group(2)), "broker": m.group(3),
                                               "controller": m.group(4), "config": m.group(5), "log": m.group(6)}
            if line.startswith("Bootstrap servers: "):
                self.bootstrap = line.split(": ", 1)[1].strip()
            if line.startswith("Press Ctrl-C"):
                return True
        raise AssertionError(f"dev cluster not started within {timeout_s}s:\n{self.stderr()}")

    def stderr(self):
        return self.stderr_path.read_text(errors="replace")

    def wait_exit(self, timeout_s=60):
        return self.proc.wait(timeout=timeout_s)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        # Whatever happened, no node may outlive the test.
        for n in self.nodes.values():
            if pid_alive(n["pid"]):
                os.kill(n["pid"], signal.SIGKILL)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def dev_cluster(tmp_path):
    started = []

    def factory(brokers, *extra):
        c = DevCluster(tmp_path, brokers, *extra)
        started.append(c)
        return c

    yield factory
    for c in started:
        c.stop()


def roundtrip_through(bootstrap, topic, partitions):
    for p in range(partitions):
        kcat_produce(bootstrap, topic, p, [f"k{i}:p{p}-r{i}" for i in range(50)], "none")
    for p in range(partitions):
        assert [text for _, text in kcat_consume(bootstrap, topic, p)] == [f"k{i}:p{p}-r{i}" for i in range(50)]


def sigterm_stops_every_node(cluster):
    cluster.proc.send_signal(signal.SIGTERM)
    assert cluster.wait_exit() == 0, cluster.stderr()
    assert "every node stopped" in cluster.stderr()
    for node_id, n in cluster.nodes.items():
        assert not pid_alive(n["pid"]), f"node {node_id} (pid {n['pid']}) still running"


def test_dev_cluster_of_one_node_serves_clients_and_stops_on_sigterm(dev_cluster):
    cluster = dev_cluster(1)
    assert cluster.wait_started(), cluster.stderr()
    assert list(cluster.nodes) == [1] and cluster.bootstrap == cluster.nodes[1]["broker"]
    config = open(cluster.nodes[1]["config"]).read()
    assert "process.roles=broker,controller\n" in config
    assert f"controller.quorum.voters=1@{cluster.nodes[1]['controller']}\n" in config
    assert f"log.dirs={cluster.data_dir}/node-1\n" in config

    described = cluster_json("-b", cluster.bootstrap)
    assert described["cluster_id"] == cluster.cluster_id
    assert [(b["id"], f"{b['host']}:{b['port']}", b["fenced"]) for b in described["brokers"]] == \
        [(1, cluster.bootstrap, False)]
    assert described["quorum"]["leader_id"] == 1
    assert [v["endpoints"] for v in described["quorum"]["voters"]] == \
        [[f"CONTROLLER://{cluster.nodes[1]['controller']}"]]

    samsa("topic", "create", "-b", cluster.bootstrap, "--topic", "dev", "--partitions", "2")
    roundtrip_through(cluster.bootstrap, "dev", 2)
    sigterm_stops_every_node(cluster)

    # A second run keeps the data and the cluster id (the nodes are already
    # formatted), on new ports.
    again = dev_cluster(1)
    assert again.wait_started(), again.stderr()
    assert again.cluster_id == cluster.cluster_id
    assert [text for _, text in kcat_consume(again.bootstrap, "dev", 0)] == [f"k{i}:p0-r{i}" for i in range(50)]
    sigterm_stops_every_node(again)


def test_dev_cluster_names_the_node_that_died_and_exits(dev_cluster):
    cluster = dev_cluster(1)
    assert cluster.wait_started(), cluster.stderr()
    pid = cluster.nodes[1]["pid"]
    os.kill(pid, signal.SIGKILL)
    assert cluster.wait_exit() == 1
    err = cluster.stderr()
    assert f"node 1 (pid {pid}) was killed by signal 9" in err and "unexpectedly" in err, err
    assert f"its log {cluster.nodes[1]['log']} ends:" in err


def test_dev_cluster_of_three_nodes(dev_cluster):
    cluster = dev_cluster(3)
    assert cluster.wait_started(), cluster.stderr()
    assert sorted(cluster.nodes) == [1, 2, 3]
    assert cluster.bootstrap == ",".join(cluster.nodes[k]["broker"] for k in (1, 2, 3))
    for k in (1, 2, 3):
        described = cluster_json("-b", cluster.nodes[k]["broker"])
        assert described["cluster_id"] == cluster.cluster_id
        assert [b["id"] for b in described["brokers"] if not b["fenced"]] == [1, 2, 3]
        assert sorted(v["id"] for v in described["quorum"]["voters"]) == [1, 2, 3]
    samsa("topic", "create", "-b", cluster.bootstrap, "--topic", "spread", "--partitions", "3",
          "--replication-factor", "3")
    # The creation is acknowledged once committed; node 1 applies the
    # committed metadata on its own time (every node's view is eventual).
    def spread_on_node_1():
        md = metadata(*cluster.nodes[1]["broker"].split(":"))
        return [t for t in md["topics"] if t["name"] == "spread"]
    [topic] = wait_until("node 1 applies the creation of spread", spread_on_node_1, timeout_s=30)
    assert all(sorted(p["replicas"]) == [1, 2, 3] for p in topic["partitions"])
    assert sorted(p["leader"] for p in topic["partitions"]) == [1, 2, 3]  # leaders balanced
    roundtrip_through(cluster.bootstrap, "spread", 3)
    sigterm_stops_every_node(cluster)


def test_dev_cluster_of_three_controllers_and_two_brokers(dev_cluster):
    cluster = dev_cluster(2, "--controllers", "3")
    assert cluster.wait_started(), cluster.stderr()
    assert sorted(cluster.nodes) == [1, 2, 3, 4, 5]
    assert all(cluster.nodes[k]["broker"] is None and cluster.nodes[k]["controller"] for k in (1, 2, 3))
    assert all(cluster.nodes[k]["controller"] is None and cluster.nodes[k]["broker"] for k in (4, 5))
    assert cluster.bootstrap == ",".join(cluster.nodes[k]["broker"] for k in (4, 5))
    for k in (4, 5):
        described = cluster_json("-b", cluster.nodes[k]["broker"])
        assert [b["id"] for b in described["brokers"] if not b["fenced"]] == [4, 5], described
        assert sorted(v["id"] for v in described["quorum"]["voters"]) == [1, 2, 3], described
    samsa("topic", "create", "-b", cluster.bootstrap, "--topic", "split", "--partitions", "2",
          "--replication-factor", "2")
    roundtrip_through(cluster.bootstrap, "split", 2)
    sigterm_stops_every_node(cluster)


def test_dev_cluster_stops_on_ctrl_c(dev_cluster):
    cluster = dev_cluster(1)
    assert cluster.wait_started(), cluster.stderr()
    cluster.proc.send_signal(signal.SIGINT)  # what a terminal's Ctrl-C sends (to the command only)
    assert cluster.wait_exit() == 0, cluster.stderr()
    assert "Interrupt: stopping 1 node" in cluster.stderr()
    assert not pid_alive(cluster.nodes[1]["pid"])
