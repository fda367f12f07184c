"""Controlled shutdown and UnregisterBroker in a cluster of three combined
nodes (issue 14 item 4; docs/cluster.md).

SIGTERM of the broker that leads most partitions of an RF=3 topic while
confluent-kafka produces with acks=all: the broker asks the controller to
shut down (BrokerHeartbeat WantShutDown), the controller moves every
leadership it had to another ISR member and takes it out of the ISRs, then
answers ShouldShutDown; the broker exits 0. Checked with real processes:
the exit within a bound; the moment it has exited, Metadata from each
survivor already names new leaders for all it led (they were moved before,
not after); no acknowledged record lost; the longest gap between
acknowledgements stays short; the restarted node comes back into every ISR.
UnregisterBroker with `samsa cluster unregister`: a shut-down broker is gone
for placement (RF=3 no longer fits), a second unregistration is
BROKER_ID_NOT_REGISTERED, an active broker is refused; ApiVersions lists
API 64 on a cluster's node only (the single node neither lists nor answers
it).

Every server listens on 127.0.0.1 and is stopped by PID; every wait has a
bound. `pytest -s` prints the times measured.
"""

import signal
import socket
import time

import kafka_wire

from clients import samsa
from cluster_harness import (TIMEOUT_S, AckedProducer, admin_for, cluster, controller_of,  # noqa: F401
                             create_with_admin, same_everywhere, try_metadata, wait_for_brokers, wait_until)

TOPIC = "controlled"
PARTITIONS = 6
SHUTDOWN_BOUND_S = 10  # SIGTERM to exit: a few heartbeats and elections, far below the 15 s give-up bound
MAX_ACK_GAP_S = 5      # the longest the producer may go without an acknowledgement
MAX_UNACKED = 30


def read_back(nodes, expected, timeout_s=TIMEOUT_S):
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": ",".join(n.bootstrap for n in nodes), "group.id": "shutdown-check",
                         "enable.auto.commit": False})
    seen = set()
    try:
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
        deadline = time.monotonic() + timeout_s
        while not expected.issubset(seen) and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                seen.add(msg.value().decode())
    finally:
        consumer.close()
    return seen


def full_isr_everywhere(nodes):
    view = same_everywhere(nodes, TOPIC)
    if not view or len(view) != PARTITIONS:
        return None
    return view if all(sorted(p[3]) == [1, 2, 3] and p[1] != -1 for p in view.values()) else None


def leaders_of(view):
    counts = {}
    for _error, leader, _replicas, _isr in view.values():
        counts[leader] = counts.get(leader, 0) + 1
    return counts


def test_sigterm_moves_leaderships_away_before_exiting(cluster):
    wait_for_brokers(cluster, {1, 2, 3})
    controller = wait_until("an active controller", lambda: controller_of(cluster))
    create_with_admin(admin_for(cluster), TOPIC, partitions=PARTITIONS, rf=3, config={"min.insync.replicas": "2"})
    view = wait_until("the topic with full ISRs on every node", lambda: full_isr_everywhere(cluster))
    counts = leaders_of(view)
    victim_id = max(counts, key=lambda b: (counts[b], b))
    led = {p for p, (_e, leader, _r, _i) in view.items() if leader == victim_id}
    victim = next(n for n in cluster if n.node_id == victim_id)
    survivors = [n for n in cluster if n is not victim]

    producer = AckedProducer(cluster, TOPIC, partitions=PARTITIONS, max_unacked=MAX_UNACKED,
                             message_timeout_ms=60000)
    producer.run_until("300 records acknowledged", lambda: len(producer.acked) >= 300)

    victim.proc.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    producer.run_until("the broker to exit", lambda: victim.proc.poll() is not None, timeout_s=SHUTDOWN_BOUND_S)
    exited_s = time.monotonic() - signalled
    assert victim.proc.returncode == 0, victim.log_tail()

    # At once, no waiting: the survivors had applied the new leaders before
    # the controller let the broker go.
    for n in survivors:
        m = try_metadata(n, [TOPIC])
        assert m is not None, f"node {n.node_id} did not answer"
        _error, partitions = m["topics"][TOPIC]
        for p in led:
            _perror, leader, _replicas, isr = partitions[p]
            assert leader not in (-1, victim_id) and leader in isr, (n.node_id, p, partitions[p])
            assert victim_id not in isr, (n.node_id, p, partitions[p])

    if victim_id == controller:  # it simply stops: the others elect after the election timeout
        wait_until("another active controller", lambda: (lambda c: c not in (None, victim_id))(
            controller_of(survivors)))
        print(f"a new active controller {time.monotonic() - signalled:.2f}s after the SIGTERM")
    producer.run_until("300 more records acknowledged after the exit", lambda: len(producer.acked) >= 600)
    producer.flush()
    assert not producer.failed, producer.failed
    gap = producer.longest_gap_after(signalled)
    role = "also the active controller" if victim_id == controller else f"the controller is {controller}"
    print(f"controlled shutdown of broker {victim_id} ({role}, leading {len(led)} of {PARTITIONS}): "
          f"SIGTERM to exit 0 in {exited_s:.2f}s; longest gap between acknowledgements {gap:.2f}s")
    assert gap < MAX_ACK_GAP_S, f"no acknowledgement for {gap:.2f}s"

    acked = set(producer.acked)
    missing = acked - read_back(survivors, acked)
    assert not missing, f"{len(missing)} acknowledged records missing, e.g. {sorted(missing)[:5]}"

    victim.start()
    wait_until("the restarted broker back in every ISR on every node", lambda: full_isr_everywhere(cluster))


def unregister(node, broker_id, check=True):
    return samsa("cluster", "unregister", "--bootstrap-server", node.bootstrap, "--id", broker_id, check=check)


def test_unregister_removes_a_shut_down_broker(cluster):
    wait_for_brokers(cluster, {1, 2, 3})
    wait_until("an active controller", lambda: controller_of(cluster))
    first, second, third = cluster

    live = unregister(first, 2, check=False)
    assert live.returncode == 1
    assert b"INVALID_REQUEST" in live.stderr and b"shut it down" in live.stderr, live.stderr

    assert third.stop() == 0
    wait_for_brokers([first, second], {1, 2})
    unregister(second, 3)  # through either node: the one not the controller forwards it
    admin = admin_for([first, second])
    # Registered but fenced, broker 3 could still take a follower replica;
    # unregistered it cannot: RF=3 no longer fits.
    from confluent_kafka import KafkaException
    try:
        create_with_admin(admin, "after-unregister", partitions=1, rf=3)
        raise AssertionError("RF=3 placed with two registered brokers")
    except KafkaException as e:
        assert "INVALID_REPLICATION_FACTOR" in str(e) or "replication factor" in str(e).lower(), str(e)

    again = unregister(first, 3, check=False)
    assert again.returncode == 1
    assert b"BROKER_ID_NOT_REGISTERED" in again.stderr and b"Broker ID 3 is not currently registered" in again.stderr
    assert b"BROKER_ID_NOT_REGISTERED" in unregister(first, 7, check=False).stderr



def api_versions(node):
    with socket.create_connection((node.host, node.port), timeout=5) as s:
        s.sendall(kafka_wire.api_versions_v0(3))
        _cid, error, versions = kafka_wire.parse_api_versions_v0(kafka_wire.recv_frame(s, 5))
    assert error == 0
    return versions


def test_the_single_node_neither_lists_nor_answers_unregister_broker(broker):
    assert 64 not in api_versions(broker)
    out = unregister(broker, 1, check=False)
    assert out.returncode == 1
    assert b"does not serve UnregisterBroker" in out.stderr, out.stderr


def test_a_cluster_node_lists_unregister_broker(cluster):
    assert api_versions(cluster[0]).get(64) == (0, 0)


# A long election timeout: without a hand-over the survivors would elect only
# after it ran out (a random 10-20 s); with EndQuorumEpoch the first
# successor campaigns the moment it hears of the resignation.
HANDOVER_ELECTION_TIMEOUT_MS = 10000
HANDOVER_BOUND_S = 5


def test_sigterm_of_the_quorum_leader_hands_the_leadership_on_at_once(request, tmp_path):
    from cluster_harness import running_cluster
    extra = {"controller.quorum.election.timeout.ms": HANDOVER_ELECTION_TIMEOUT_MS}
    with running_cluster(request, tmp_path, extra=extra) as nodes:
        wait_for_brokers(nodes, {1, 2, 3}, timeout_s=60)  # the first election waits out the long timeout
        active = wait_until("an active controller", lambda: controller_of(nodes), timeout_s=60)
        victim = next(n for n in nodes if n.node_id == active)
        survivors = [n for n in nodes if n is not victim]
        victim.proc.send_signal(signal.SIGTERM)
        assert victim.proc.wait(timeout=TIMEOUT_S) == 0
        exited = time.monotonic()
        successor = wait_until("another active controller", lambda: (
            lambda c: c if c is not None and c != active else None)(controller_of(survivors)), timeout_s=TIMEOUT_S)
        took = time.monotonic() - exited
        print(f"controller {active} shut down; {successor} active {took:.2f} s after it exited")
        assert took < HANDOVER_BOUND_S, (
            f"a new controller only {took:.1f} s after the leader exited: no hand-over, an election timeout")
        assert f"resigned the metadata quorum: node {successor} leads" in victim.log_path.read_text(errors="replace")
