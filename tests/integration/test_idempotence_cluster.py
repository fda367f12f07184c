"""Idempotent producer across a failover (issue 17): three combined nodes,
an RF=3 topic with min.insync.replicas=2, confluent-kafka with
enable.idempotence=True and acks=all, kill -9 of the partition's leader
while records are in flight. The producer's retries of batches the old
leader had appended reach the new leader, whose producer state (applied by
the follower's appends) answers them as duplicates: every acknowledged
record is read back exactly once, in the order produced."""

import time

from cluster_harness import (TIMEOUT_S, AckedProducer, admin_for, cluster,  # noqa: F401
                             create_with_admin, same_everywhere, wait_for_brokers, wait_until)

TOPIC = "idem-failover"
BEFORE_KILL = 2000
AFTER_KILL = 2000


def read_in_order(nodes, expected, timeout_s=TIMEOUT_S):
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": ",".join(n.bootstrap for n in nodes), "group.id": "idem-check",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    values = []
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        deadline = time.monotonic() + timeout_s
        while not expected.issubset(values) and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            values.append(msg.value().decode())
        # Whatever follows the last expected record (nothing should) is read too.
        end = time.monotonic() + 2
        while time.monotonic() < end:
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                values.append(msg.value().decode())
    finally:
        consumer.close()
    return values


def test_kill9_of_the_leader_every_acknowledged_record_exactly_once_in_order(cluster):
    wait_for_brokers(cluster, {1, 2, 3})
    create_with_admin(admin_for(cluster), TOPIC, partitions=1, rf=3, config={"min.insync.replicas": "2"})
    view = wait_until("the topic with its full ISR on every node",
                      lambda: (lambda v: v if v and sorted(v[0][3]) == [1, 2, 3] else None)(
                          same_everywhere(cluster, TOPIC)))
    victim = next(n for n in cluster if n.node_id == view[0][1])
    survivors = [n for n in cluster if n is not victim]

    producer = AckedProducer(cluster, TOPIC, max_unacked=1000, config={"enable.idempotence": True})
    producer.run_until(f"{BEFORE_KILL} records acknowledged", lambda: len(producer.acked) >= BEFORE_KILL)
    victim.kill9()
    try:
        first_after = producer.sent
        producer.run_until(f"{AFTER_KILL} records after the kill", lambda: producer.sent - first_after >= AFTER_KILL)
        producer.flush()
        assert not producer.failed, list(producer.failed.items())[:3]

        values = read_in_order(survivors, set(producer.acked))
        duplicates = len(values) - len(set(values))
        assert duplicates == 0, f"{duplicates} duplicates"
        assert values == [f"record-{i}" for i in range(producer.sent)], "not every record once in order"
        print(f"{len(values)} records, each once and in order")
    finally:
        victim.start()  # every node stops cleanly at the end
