"""Leader failover in a cluster of three combined nodes (issue 15 items 3, 6):
an RF=3 topic with min.insync.replicas=2, confluent-kafka producing with
acks=all, kill -9 of the partition's leader.

Checked with real processes: Metadata from both survivors names a new leader
from the ISR and the killed broker leaves the ISR (the active controller
elects in the fencing's batch); the producer's later records are
acknowledged (two replicas in the ISR satisfy min.insync.replicas=2); every
acknowledged record is read back (duplicates from the producer's retries
counted and allowed, none missing); the killed node restarts, catches up
and rejoins the ISR (AlterPartition from the leader to the active
controller over the network). The failover time (kill -9 to the next
acknowledged record produced after it) is printed (`pytest -s`).

Every server listens on 127.0.0.1 and is stopped by PID; every wait has a
bound.
"""

import time

from cluster_harness import (SESSION_TIMEOUT_MS, TIMEOUT_S, AckedProducer, admin_for, cluster,  # noqa: F401
                             controller_of, create_with_admin, same_everywhere, topic_view, wait_for_brokers,
                             wait_until)

TOPIC = "failover"
BEFORE_KILL = 200       # records acknowledged before the kill
AFTER_KILL = 200        # records produced after the kill, each to be acknowledged
MAX_UNACKED = 20        # records the test keeps in the producer at once


def partition0(node):
    view = topic_view(node, TOPIC)
    return view.get(0) if view else None


def read_back(nodes, expected, timeout_s=TIMEOUT_S):
    """Every value of the partition from offset 0 until all `expected` are seen: value -> count."""
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": ",".join(n.bootstrap for n in nodes), "group.id": "failover-check",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    counts = {}
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        deadline = time.monotonic() + timeout_s
        while not expected.issubset(counts) and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            value = msg.value().decode()
            counts[value] = counts.get(value, 0) + 1
    finally:
        consumer.close()
    return counts


def test_killing_the_leader_elects_an_isr_member_and_loses_no_acknowledged_record(cluster):
    wait_for_brokers(cluster, {1, 2, 3})
    controller = wait_until("an active controller", lambda: controller_of(cluster))
    create_with_admin(admin_for(cluster), TOPIC, partitions=1, rf=3, config={"min.insync.replicas": "2"})
    view = wait_until("the topic with its full ISR on every node",
                      lambda: (lambda v: v if v and sorted(v[0][3]) == [1, 2, 3] else None)(
                          same_everywhere(cluster, TOPIC)))
    old_leader = view[0][1]
    victim = next(n for n in cluster if n.node_id == old_leader)
    survivors = [n for n in cluster if n is not victim]

    producer = AckedProducer(cluster, TOPIC, max_unacked=MAX_UNACKED)
    producer.run_until(f"{BEFORE_KILL} records acknowledged", lambda: len(producer.acked) >= BEFORE_KILL)
    assert not producer.failed, producer.failed

    victim.kill9()
    killed_at = time.monotonic()
    first_after = producer.sent  # records from here on are produced after the kill
    producer.run_until(f"{AFTER_KILL} records produced after the kill",
                       lambda: producer.sent - first_after >= AFTER_KILL)
    producer.flush()
    assert not producer.failed, producer.failed
    after = [f"record-{i}" for i in range(first_after, producer.sent)]
    assert all(v in producer.acked for v in after)
    failover_s = min(producer.acked[v] for v in after) - killed_at
    role = "also the active controller" if old_leader == controller else f"the controller is {controller}"
    print(f"failover: kill -9 of leader {old_leader} ({role}) to the next acknowledged record {failover_s:.2f}s "
          f"(broker.session.timeout.ms={SESSION_TIMEOUT_MS})")

    # Both survivors: a new leader from the ISR, the killed broker out of it.
    def failed_over(node):
        p = partition0(node)
        if not p:
            return None
        _error, leader, _replicas, isr = p
        return p if leader not in (-1, old_leader) and old_leader not in isr and leader in isr else None
    for n in survivors:
        p = wait_until(f"node {n.node_id}: a new leader from the ISR", lambda n=n: failed_over(n))
        assert sorted(p[3]) == sorted(s.node_id for s in survivors)

    # Every acknowledged record is there; duplicates (producer retries) are counted.
    acked = set(producer.acked)
    counts = read_back(survivors, acked)
    missing = acked - set(counts)
    assert not missing, f"{len(missing)} acknowledged records missing, e.g. {sorted(missing)[:5]}"
    duplicates = sum(c - 1 for v, c in counts.items() if v in acked)
    print(f"{len(acked)} records acknowledged, all read back; {duplicates} duplicates")

    # The killed node restarts, catches up and rejoins the ISR.
    victim.start()
    wait_until("the restarted broker back in the ISR on every node",
               lambda: all((lambda p: p and sorted(p[3]) == [1, 2, 3])(partition0(n)) for n in cluster))
