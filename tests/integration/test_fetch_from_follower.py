"""Fetch from the closest replica (KIP-392; issue 15 items 7 and 9), in a
cluster of three combined nodes on racks rack1..rack3 with
replica.selector.class=RackAwareReplicaSelector.

A confluent-kafka consumer with client.rack naming a follower's rack is sent
there by the leader (PreferredReadReplica) and reads from it. Shown by
behaviour, not by a counter: once the consumer has read most of the records,
the leader is paused (SIGSTOP) and the consumer still reads the rest,
which only the follower can give it. Without the setting the same consumer
stays on the leader and the pause stops it (the control case).

Every server listens on 127.0.0.1 and is stopped by PID; every wait has a
bound; the paused leader is resumed also when the test fails.
"""

import signal
import time

import pytest

from cluster_harness import (AckedProducer, admin_for, create_with_admin, running_cluster, same_everywhere,
                             wait_for_brokers, wait_until)

TOPIC = "closest-replica"
RECORDS = 1000
BEFORE_PAUSE = 700  # records read before the leader is paused; the other 300 need the follower
SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
# Long enough that the paused leader is not fenced (and the partition not
# moved) while the consumer reads the rest.
SESSION_TIMEOUT_MS = 12000


def read_while_leader_paused(nodes):
    """(records read before the pause, records read after it within 9 s)."""
    from confluent_kafka import Consumer, TopicPartition
    wait_for_brokers(nodes, {1, 2, 3})
    create_with_admin(admin_for(nodes), TOPIC, partitions=1, rf=3, config={"min.insync.replicas": "3"})
    view = wait_until("the full ISR on every node",
                      lambda: (lambda v: v if v and sorted(v[0][3]) == [1, 2, 3] else None)(
                          same_everywhere(nodes, TOPIC)))
    leader_id = view[0][1]
    leader = next(n for n in nodes if n.node_id == leader_id)
    follower = next(n for n in nodes if n.node_id != leader_id)
    producer = AckedProducer(nodes, TOPIC)
    producer.run_until(f"{RECORDS} acknowledged by all three replicas", lambda: producer.sent >= RECORDS)
    producer.flush()
    assert not producer.failed and len(producer.acked) == RECORDS

    consumer = Consumer({"bootstrap.servers": ",".join(n.bootstrap for n in nodes), "group.id": "closest",
                         "client.rack": f"rack{follower.node_id}", "enable.auto.commit": False,
                         "fetch.max.bytes": 4096, "message.max.bytes": 4096, "max.partition.fetch.bytes": 4096,
                         "fetch.wait.max.ms": 100, "fetch.error.backoff.ms": 10,
                         # Little read ahead (about 100 records): what the consumer has not polled yet is
                         # not already here when the leader is paused.
                         "queued.min.messages": 50, "queued.max.messages.kbytes": 4})
    before = after = 0
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        deadline = time.monotonic() + 30
        while before < BEFORE_PAUSE:
            assert time.monotonic() < deadline, f"read {before} of {BEFORE_PAUSE} before the pause"
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                before += 1
        leader.proc.send_signal(signal.SIGSTOP)
        try:
            deadline = time.monotonic() + 9
            while before + after < RECORDS and time.monotonic() < deadline:
                msg = consumer.poll(0.2)
                if msg is not None and not msg.error():
                    after += 1
        finally:
            leader.proc.send_signal(signal.SIGCONT)
    finally:
        consumer.close()
    return before, after, leader_id, follower.node_id


def test_a_consumer_with_client_rack_reads_from_the_follower_on_its_rack(request, tmp_path):
    extra = {"replica.selector.class": SELECTOR, "broker.session.timeout.ms": SESSION_TIMEOUT_MS}
    with running_cluster(request, tmp_path, extra) as nodes:
        before, after, leader, follower = read_while_leader_paused(nodes)
    print(f"leader {leader} paused after {before} records; {after} more read from follower {follower}")
    assert before + after == RECORDS, f"only {before} + {after} of {RECORDS}: not read from the follower"


@pytest.mark.parametrize("selector", [None, "org.apache.kafka.common.replica.LeaderSelector"])
def test_without_the_rack_aware_selector_the_consumer_stays_on_the_leader(request, tmp_path, selector):
    extra = {"broker.session.timeout.ms": SESSION_TIMEOUT_MS}
    if selector:
        extra["replica.selector.class"] = selector
    with running_cluster(request, tmp_path, extra) as nodes:
        before, after, _leader, _follower = read_while_leader_paused(nodes)
    # The consumer's fetch in flight when the pause began may still be
    # answered; nothing after it is.
    assert after < RECORDS - BEFORE_PAUSE, f"{after} records read while the leader was paused"
