"""Self-fencing with real processes (issue 14 item 4; docs/cluster.md): three
combined nodes whose controller traffic goes through CutProxy forwarders
(each node's controller.quorum.voters names a proxy per other node), so one
node can be cut off from the quorum while clients still reach its broker
listener.

The node leading an RF=3 partition (not the active controller) is cut off.
Checked: it refuses acks=1 produce with NOT_LEADER_OR_FOLLOWER within
broker.session.timeout.ms (plus the polling's slack), and its last
acknowledged write came before the survivors' Metadata named another
leader (no two leaders accepting writes); once the cut heals it is
registered and unfenced again and back in the ISR.

Every server and proxy listens on 127.0.0.1 and is stopped (servers by
PID); every wait has a bound.
"""

import time

import pytest

import kafka_wire
from cluster_harness import (SESSION_TIMEOUT_MS, ClusterNode, admin_for, controller_of, stop_all, topic_view,
                             wait_for_brokers, wait_until)
from cut_proxy import CutProxy
from harness import HOST

TOPIC = "self-fencing"
NOT_LEADER_OR_FOLLOWER = 6
POLL_S = 0.05


@pytest.fixture
def proxied_cluster(request, tmp_path):
    nodes = [ClusterNode(tmp_path, i, None) for i in (1, 2, 3)]
    request.node._samsa_brokers = nodes
    proxies = {(a.node_id, b.node_id): CutProxy(b.controller_port) for a in nodes for b in nodes if a is not b}
    for a in nodes:
        a.write_config(",".join(
            f"{b.node_id}@{HOST}:{b.controller_port if a is b else proxies[(a.node_id, b.node_id)].port}"
            for b in nodes))
    try:
        for n in nodes:
            n.start()
        yield nodes, proxies
    finally:
        for p in proxies.values():
            p.heal()
        statuses = stop_all(nodes)
        for p in proxies.values():
            p.close()
    assert all(status == 0 for status in statuses.values()), statuses


def produce_acks1(node, value):
    """One acks=1 record to partition 0 through node's broker listener: the error code."""
    batch = kafka_wire.record_batch([(None, value.encode())], int(time.time() * 1000))
    payload = kafka_wire.produce_v3(5, TOPIC, 0, batch, acks=1, timeout_ms=2000)
    _cid, results = kafka_wire.parse_produce_v3(kafka_wire.roundtrip(node, payload, timeout_s=5))
    return results[0][2]


def leader_seen_by(node):
    view = topic_view(node, TOPIC)
    return view[0][1] if view else None


def test_a_leader_cut_off_from_the_quorum_stops_accepting_writes(proxied_cluster):
    from confluent_kafka.admin import NewTopic
    nodes, proxies = proxied_cluster
    wait_for_brokers(nodes, {1, 2, 3})
    controller = wait_until("an active controller", lambda: controller_of(nodes))
    victim = next(n for n in nodes if n.node_id != controller)
    others = [n for n in nodes if n is not victim]
    assignment = [[victim.node_id] + [n.node_id for n in others]]
    admin = admin_for(nodes)  # kept: the futures die with it
    futures = admin.create_topics([NewTopic(TOPIC, num_partitions=1, replica_assignment=assignment)],
                                             operation_timeout=30, request_timeout=30)
    futures[TOPIC].result(timeout=35)
    wait_until("the partition led by the victim with its full ISR everywhere",
               lambda: all((lambda v: v and v[0][1] == victim.node_id and sorted(v[0][3]) == [1, 2, 3])(
                   topic_view(n, TOPIC)) for n in nodes))
    assert produce_acks1(victim, "before") == 0

    for (a, b), proxy in proxies.items():
        if victim.node_id in (a, b):
            proxy.cut()
    cut_at = time.monotonic()
    last_accepted = None  # when the victim last acknowledged a write
    refused_at = None
    elected_at = None     # when a survivor first named another leader
    deadline = cut_at + 3 * SESSION_TIMEOUT_MS / 1000
    while (refused_at is None or elected_at is None) and time.monotonic() < deadline:
        code = produce_acks1(victim, "during")
        now = time.monotonic()
        if code == 0:
            last_accepted = now
        elif code == NOT_LEADER_OR_FOLLOWER and refused_at is None:
            refused_at = now
        if elected_at is None and any(leader_seen_by(n) not in (None, -1, victim.node_id) for n in others):
            elected_at = time.monotonic()
        time.sleep(POLL_S)
    assert refused_at is not None, "the cut-off leader kept accepting writes"
    assert elected_at is not None, "the survivors never elected another leader"
    print(f"cut-off leader {victim.node_id}: refuses writes {refused_at - cut_at:.2f}s after the cut, "
          f"another leader named {elected_at - cut_at:.2f}s after (broker.session.timeout.ms={SESSION_TIMEOUT_MS})")
    assert refused_at - cut_at <= SESSION_TIMEOUT_MS / 1000 + 0.5
    assert last_accepted is None or last_accepted < elected_at, \
        "the cut-off leader acknowledged a write after another leader was elected"
    assert leader_seen_by(victim) == victim.node_id, "its own metadata still names it (nothing reaches it)"

    for proxy in proxies.values():
        proxy.heal()
    wait_for_brokers(nodes, {1, 2, 3})
    wait_until("the victim back in the ISR on every node, following the new leader",
               lambda: all((lambda v: v and v[0][1] not in (-1, victim.node_id) and sorted(v[0][3]) == [1, 2, 3])(
                   topic_view(n, TOPIC)) for n in nodes))
    assert produce_acks1(victim, "after") == NOT_LEADER_OR_FOLLOWER
