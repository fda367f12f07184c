"""kafka-python (python3-kafka 2.0.2) producing with acks='all' through a
leader failover in a cluster of three combined nodes (issue 15 item 7; the
confluent-kafka model is test_failover.py): an RF=3 topic with
min.insync.replicas=2, one record at a time, kill -9 of the partition's
leader, later its restart.

kafka-python's defaults are kept but acks: its `retries` is 0, so a send
that meets the failover fails at once and is sent again by the test, as an
application would, after kafka-python's own retry_backoff_ms (100). Each
such failure must be an error kafka-python marks retriable and must fall
between the kill and the new leader's first acknowledgement
(docs/compatibility.md). Checked too: every acknowledged record is in the
log at the offset kafka-python was given (duplicates counted and allowed),
and the restarted node rejoins the ISR while the producer goes on.

Every server listens on 127.0.0.1 and is stopped by PID; every wait has a
bound.
"""

import collections
import time

from kafka import KafkaProducer

from cluster_harness import (SESSION_TIMEOUT_MS, TIMEOUT_S, admin_for, cluster, create_with_admin,  # noqa: F401
                             read_partition, same_everywhere, wait_for_brokers, wait_until)

TOPIC = "kpy-failover"
BEFORE_KILL = 100
AFTER_KILL = 100
AFTER_RESTART = 50
RETRY_BACKOFF_S = 0.1  # kafka-python's retry_backoff_ms


def full_isr(nodes):
    view = same_everywhere(nodes, TOPIC)
    return view if view and sorted(view[0][3]) == [1, 2, 3] else None


class OneAtATime:
    """Sends record-0, record-1, ... one at a time, each until acknowledged:
    acked value -> (offset, sent at, acknowledged at); failures [(value, error, time)]."""

    def __init__(self, nodes):
        self.producer = KafkaProducer(bootstrap_servers=[n.bootstrap for n in nodes], acks="all")
        self.acked = {}
        self.failures = []
        self.next = 0

    def run_until(self, what, condition, timeout_s=TIMEOUT_S):
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert time.monotonic() < deadline, f"timed out after {timeout_s}s waiting for {what}"
            value = f"record-{self.next}"
            sent_at = time.monotonic()
            try:
                metadata = self.producer.send(TOPIC, value=value.encode(), partition=0).get(timeout=TIMEOUT_S)
                self.acked[value] = (metadata.offset, sent_at, time.monotonic())
                self.next += 1
            except Exception as e:  # judged below: only kafka-python's retriable errors pass
                self.failures.append((value, e, time.monotonic()))
                time.sleep(RETRY_BACKOFF_S)

    def acked_after(self, moment):
        return sorted(t for _, _, t in self.acked.values() if t > moment)

    def first_ack_sent_after(self, moment):
        """When the first record sent after `moment` was acknowledged: by a
        live node, so the new leader is known by then."""
        return min(t for _, sent, t in self.acked.values() if sent > moment)

    def close(self):
        self.producer.close(timeout=10)


def test_a_kafka_python_producer_carries_on_through_kill9_of_the_leader(cluster):
    wait_for_brokers(cluster, {1, 2, 3})
    create_with_admin(admin_for(cluster), TOPIC, partitions=1, rf=3, config={"min.insync.replicas": "2"})
    view = wait_until("the topic with its full ISR on every node", lambda: full_isr(cluster))
    old_leader = view[0][1]
    victim = next(n for n in cluster if n.node_id == old_leader)
    survivors = [n for n in cluster if n is not victim]

    producer = OneAtATime(cluster)
    try:
        producer.run_until(f"{BEFORE_KILL} records acknowledged", lambda: len(producer.acked) >= BEFORE_KILL)
        assert not producer.failures, producer.failures[:3]
        victim.kill9()
        killed_at = time.monotonic()
        producer.run_until(f"{AFTER_KILL} records acknowledged after the kill",
                           lambda: len(producer.acked_after(killed_at)) >= AFTER_KILL)
        first_ack_after_kill = producer.first_ack_sent_after(killed_at)
        victim.start()
        back = []
        producer.run_until("the restarted node back in the ISR on every node",
                           lambda: back or (full_isr(cluster) and back.append(time.monotonic())))
        producer.run_until(f"{AFTER_RESTART} records acknowledged with the node back",
                           lambda: len(producer.acked_after(back[0])) >= AFTER_RESTART)
    finally:
        producer.close()

    unexplained = [(v, repr(e)) for v, e, t in producer.failures
                   if not (getattr(e, "retriable", False) and killed_at < t <= first_ack_after_kill)]
    assert not unexplained, f"{len(unexplained)} sends failed otherwise, e.g. {unexplained[:3]}"

    log = read_partition(survivors, TOPIC)
    at_offset = dict(log)
    wrong = [(v, o) for v, (o, _, _) in producer.acked.items() if at_offset.get(o) != v]
    assert not wrong, f"{len(wrong)} acknowledged records not at their offset, e.g. {wrong[:3]}"
    values = [v for _, v in log]
    assert set(values) == {f"record-{i}" for i in range(producer.next)}
    kinds = collections.Counter(type(e).__name__ for _, e, _ in producer.failures)
    print(f"kafka-python acks=all: kill -9 of leader {old_leader} to the next acknowledgement "
          f"{first_ack_after_kill - killed_at:.2f}s (broker.session.timeout.ms={SESSION_TIMEOUT_MS}); "
          f"{len(producer.acked)} records acknowledged, all read back, {len(values) - len(set(values))} duplicates; "
          f"{len(producer.failures)} failed sends resent: {dict(kinds)}")
