"""SamsaRaftFetch (key 1001, Samsa-private): how a metadata-log observer (a
broker-only node, process.roles=broker) pulls the log from the quorum
leader (docs/formats/raft-wire.md, docs/decisions/0017). No broker-only node
runs yet (docs/cluster.md, "Not wired yet"), so this plays the observer with
raw bytes (kafka_wire.py) against three real combined nodes: every voter
answers on its controller listener, never lists the key in ApiVersions, the
leader hands out its log and commit, a follower names the leader, a
divergent log is told where to truncate, the leader lists the observer in
DescribeQuorum, and a voter or another cluster is refused. Every node runs on 127.0.0.1 and is stopped by PID
(cluster_harness)."""

import struct

import kafka_wire as kw
from cluster_harness import (CLUSTER_ID, OTHER_CLUSTER_ID, admin_for, cluster, controller_of,  # noqa: F401
                             create_with_admin, wait_for_brokers, wait_until)
from harness import HOST
from test_describe_quorum import describe_quorum

API_SAMSA_RAFT_FETCH = 1001
OBSERVER_ID = 7  # not a voter
ENTRIES, DIVERGING, SNAPSHOT, NOT_LEADER = 0, 1, 2, 3
INCONSISTENT_VOTER_SET = 94
INCONSISTENT_CLUSTER_ID = 104


def fetch_body(destination, offset, epoch, replica=OBSERVER_ID, cluster_id=CLUSTER_ID):
    return (kw.compact_string(cluster_id) + struct.pack(">iiqq", replica, destination, offset, epoch) + kw.NO_TAGS)


def fetch(node, offset, epoch, **kwargs):
    r = kw.flexible_call(HOST, node.controller_port, API_SAMSA_RAFT_FETCH, 0,
                         fetch_body(node.node_id, offset, epoch, **kwargs))
    assert r is not None, "the controller listener closed the connection"
    out = {"error": r.i16(), "kind": r.i8(), "epoch": r.i64(), "leader": r.i32(), "hwm": r.i64()}

    def entry():
        e = (r.i64(), r.i8(), r.compact_bytes())
        r.no_tags()
        return e

    out["entries"] = r.compact_array(entry) or []
    out["diverging"] = r.i64()
    out["snapshot"] = (r.i64(), r.i64(), r.compact_bytes())
    r.no_tags()
    r.done()
    return out


def api_versions(node):
    with kw.socket.create_connection((HOST, node.controller_port), timeout=10) as s:
        s.sendall(kw.api_versions_v0(5))
        return kw.parse_api_versions_v0(kw.recv_frame(s, 10))[2]


def pull_all(leader):
    """Fetch from offset 0 until an answer brings nothing: (entries, last answer)."""
    log, offset, epoch = [], 0, 0
    while True:
        a = fetch(leader, offset, epoch)
        assert a["error"] == 0 and a["kind"] == ENTRIES, a
        assert a["hwm"] <= offset + len(a["entries"])
        if not a["entries"]:
            return log, a
        for e in a["entries"]:
            assert e[0] >= epoch, "entry epochs never go down"
            epoch = e[0]
        log += a["entries"]
        offset += len(a["entries"])


def test_an_observer_pulls_the_metadata_log_from_the_leader(cluster):
    wait_for_brokers(cluster, {1, 2, 3})
    leader_id = wait_until("one active controller", lambda: controller_of(cluster))
    leader = next(n for n in cluster if n.node_id == leader_id)
    create_with_admin(admin_for(cluster), "observed", partitions=2, rf=3)

    for n in cluster:
        assert API_SAMSA_RAFT_FETCH not in api_versions(n), "a private key is never advertised"

    # A follower names the leader; the observer asks that one.
    follower = next(n for n in cluster if n.node_id != leader_id)
    a = fetch(follower, 0, 0)
    assert (a["error"], a["kind"], a["leader"]) == (0, NOT_LEADER, leader_id)
    assert a["entries"] == []

    # The leader's whole log, in order, and a commit that covers it once quiet.
    def caught_up():
        log, last = pull_all(leader)
        return (log, last) if last["hwm"] == len(log) else None

    log, last = wait_until("the observer pulled everything committed", caught_up)
    assert len(log) > 1 and log[0][1] == 1, "the first entry is a leader change"
    assert last["leader"] == leader_id and last["epoch"] >= log[-1][0]
    assert any(b"observed" in (data or b"") for _, _, data in log), "the topic's records are in the log"

    # A log whose last entry has a later epoch than the leader's there:
    # truncate to below it and ask again.
    end, end_epoch = len(log), log[-1][0]
    d = fetch(leader, end, end_epoch + 5)
    assert (d["error"], d["kind"]) == (0, DIVERGING), d
    assert d["diverging"] == end - 1

    # The leader lists the observer in DescribeQuorum, at the end offset of
    # its last matching fetch, caught up.
    observers = describe_quorum(leader.controller_port, 1)["topics"][0]["partitions"][0]["observers"]
    assert [(o["id"], o["log_end_offset"]) for o in observers] == [(OBSERVER_ID, end)]
    assert observers[0]["last_caught_up"] > 0 and observers[0]["last_fetch"] >= observers[0]["last_caught_up"]

    # Voters are pushed to, they never pull; another cluster is refused.
    assert fetch(leader, 0, 0, replica=follower.node_id)["error"] == INCONSISTENT_VOTER_SET
    assert fetch(leader, 0, 0, cluster_id=OTHER_CLUSTER_ID)["error"] == INCONSISTENT_CLUSTER_ID
