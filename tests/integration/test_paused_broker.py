"""A node paused (SIGSTOP) for longer than broker.session.timeout.ms, then
resumed (SIGCONT), in a cluster of three combined nodes (issue 15 item 9;
issue 16's "a follower paused past the session timeout").

A paused process keeps its sockets open and answers nothing: its peers see
silence, not a closed connection. Checked with real processes and
confluent-kafka (acks=all, min.insync.replicas=2, an RF=3 partition):
- while it is paused, the active controller fences it (the other two stop
  listing it) and acknowledged writes go on;
- once resumed, it is unfenced again within a bound (it heartbeats, is
  caught up, asks to be unfenced) and rejoins the ISR, without a restart
  and without waiting for another controller to be elected;
- every acknowledged record is read back.
Two victims: a follower that is not the controller, and the active
controller itself (whose quorum moves on without it).

Every server listens on 127.0.0.1 and is stopped by PID; every wait has a
bound; a paused process is resumed also when the test fails.
"""

import signal
import time

import pytest

from cluster_harness import (SESSION_TIMEOUT_MS, AckedProducer, admin_for, brokers_seen, cluster,  # noqa: F401
                             controller_of, create_with_admin, same_everywhere, wait_for_brokers, wait_until)
from test_failover import read_back

TOPIC = "failover"  # read_back's topic
PAUSE_S = SESSION_TIMEOUT_MS / 1000 + 3
# From SIGCONT to unfenced on every node: a heartbeat interval, the catch-up
# and one commit take about a second; 10 s leaves room for a slow machine
# but not for waiting out a controller change or a second session.
REJOIN_BOUND_S = 10


def pick_victim(nodes, which, controller, leader):
    if which == "controller":
        return next(n for n in nodes if n.node_id == controller)
    return next(n for n in nodes if n.node_id not in (controller, leader))


@pytest.mark.parametrize("which", ["follower", "controller"])
def test_a_paused_node_is_fenced_then_unfenced_and_rejoins_the_isr(cluster, which):
    wait_for_brokers(cluster, {1, 2, 3})
    controller = wait_until("an active controller", lambda: controller_of(cluster))
    create_with_admin(admin_for(cluster), TOPIC, partitions=1, rf=3, config={"min.insync.replicas": "2"})
    full_isr = lambda: has_full_isr(cluster)  # noqa: E731
    wait_until("the topic with its full ISR on every node", full_isr)
    leader = same_everywhere(cluster, TOPIC)[0][1]
    victim = pick_victim(cluster, which, controller, leader)
    others = [n for n in cluster if n is not victim]

    producer = AckedProducer(cluster, TOPIC)
    producer.run_until("100 records acknowledged", lambda: len(producer.acked) >= 100)
    victim.proc.send_signal(signal.SIGSTOP)
    try:
        paused_at = time.monotonic()
        producer.run_until(f"node {victim.node_id} fenced while paused",
                           lambda: all(brokers_without(n, victim) for n in others), timeout_s=PAUSE_S + 30)
        fenced_s = time.monotonic() - paused_at
        acked_before = len(producer.acked)
        producer.run_until("an acknowledged write while the node is paused and fenced",
                           lambda: len(producer.acked) > acked_before, timeout_s=30)
        producer.run_until("the pause outlasted", lambda: time.monotonic() - paused_at >= PAUSE_S)
    finally:
        victim.proc.send_signal(signal.SIGCONT)
    resumed_at = time.monotonic()
    producer.run_until(f"node {victim.node_id} unfenced on every node after SIGCONT",
                       lambda: all(brokers_with_all(n) for n in cluster), timeout_s=REJOIN_BOUND_S)
    unfenced_s = time.monotonic() - resumed_at
    producer.run_until(f"node {victim.node_id} back in the ISR", full_isr, timeout_s=REJOIN_BOUND_S)
    rejoined_s = time.monotonic() - resumed_at
    new_controller = controller_of(cluster)
    print(f"paused node {victim.node_id} ({which}; controller {controller} -> {new_controller}): fenced "
          f"{fenced_s:.2f}s after SIGSTOP, unfenced {unfenced_s:.2f}s and back in the ISR {rejoined_s:.2f}s after "
          f"SIGCONT (broker.session.timeout.ms={SESSION_TIMEOUT_MS})")

    producer.flush()
    assert not producer.failed, producer.failed
    acked = set(producer.acked)
    counts = read_back(cluster, acked)
    missing = acked - set(counts)
    assert not missing, f"{len(missing)} acknowledged records missing, e.g. {sorted(missing)[:5]}"


def has_full_isr(nodes):
    view = same_everywhere(nodes, TOPIC)
    return bool(view) and sorted(view[0][3]) == [1, 2, 3]


def brokers_without(node, victim):
    seen = brokers_seen(node)
    return bool(seen) and victim.node_id not in seen


def brokers_with_all(node):
    return brokers_seen(node) == {1, 2, 3}
