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
