"""KafkaJS 2.2.4 producers through a leader failover in a cluster of three
combined nodes (issues 15 item 7, 17 item 5; test_failover.py is the
confluent-kafka model): an RF=3 topic with min.insync.replicas=2 created by
KafkaJS's admin client, a producer with acks=-1 sending one record at a
time, kill -9 of the partition's leader, later its restart.

The producer runs with KafkaJS's defaults (its retry: 5 retries, from
300 ms, growing), plain or with `idempotent: true` (and
maxInFlightRequests 1, which KafkaJS requires with it). Checked: no send
fails but as docs/compatibility.md says (KafkaJS retries the retriable
errors itself, what it met is printed from its log with `pytest -s`; a send
whose retries are all spent on connection errors to the dead leader before
the new one is known is resent, as an application would), it carries on with the new leader, every
acknowledged record is in the log at the offset KafkaJS was told
(plain: duplicates from its retries counted and allowed; idempotent:
every record exactly once, in the order sent), and the restarted node
rejoins the ISR while the producer goes on.

Every server listens on 127.0.0.1 and every process is stopped by PID;
every wait has a bound.
"""

import collections
import contextlib
import json
import re
import time

import pytest

from cluster_harness import (SESSION_TIMEOUT_MS, TIMEOUT_S, cluster, read_partition,  # noqa: F401
                             same_everywhere, wait_for_brokers, wait_until)
from kafkajs_client import KafkaJSProcess, of, run_kafkajs

TOPIC = "kjs-failover"
BEFORE_KILL = 100   # records acknowledged before the kill
AFTER_KILL = 100    # records acknowledged after the kill, before the restart
AFTER_RESTART = 50  # records acknowledged once the restarted node is back in the ISR


def full_isr(nodes):
    view = same_everywhere(nodes, TOPIC)
    return view if view and sorted(view[0][3]) == [1, 2, 3] else None


def acked(producer):
    return producer.snapshot("acked")


def acked_after(producer, moment):
    return [e for e in acked(producer) if e["at"] > moment]


def first_ack_sent_after(producer, moment):
    """When the first record sent after `moment` was acknowledged: by a live
    node, so the new leader is known by then (an ack seen just after the
    kill may be the dead leader's last answer, still in the socket)."""
    return next(e["at"] for e in acked(producer) if e["at"] - e["ms"] / 1000 > moment)


def errors_logged(stderr_path):
    """What KafkaJS logged while retrying: error text -> count."""
    counts = collections.Counter()
    for line in stderr_path.read_text().splitlines():
        m = re.match(r"(ERROR|WARN) \[(\w*)\] (\{.*\})$", line)
        if m:
            log = json.loads(m.group(3))
            counts[f"{m.group(2)}: {log.get('error') or log.get('message')}"] += 1
    return counts


CONNECTION_ERRORS = ("KafkaJSConnectionError", "KafkaJSConnectionClosedError")


def retries_spent_on_the_dead_leader(failure, killed_at, first_ack_after_kill):
    error, cause = failure["error"], failure["error"].get("cause") or {}
    return (error["name"] == "KafkaJSNumberOfRetriesExceeded" and cause.get("name") in CONNECTION_ERRORS
            and cause.get("retriable") and killed_at < failure["at"] <= first_ack_after_kill)


@pytest.mark.parametrize("idempotent", [False, True], ids=["acks-all", "idempotent"])
def test_a_kafkajs_producer_carries_on_through_kill9_of_the_leader(cluster, tmp_path, idempotent):
    wait_for_brokers(cluster, {1, 2, 3})
    brokers = [n.bootstrap for n in cluster]
    created = run_kafkajs("create-topic", {"brokers": brokers, "topic": TOPIC, "partitions": 1, "replicationFactor": 3,
                                    "config": {"min.insync.replicas": "2"}})
    assert of(created, "created")[0]["created"] is True
    view = wait_until("the topic with its full ISR on every node", lambda: full_isr(cluster))
    old_leader = view[0][1]
    victim = next(n for n in cluster if n.node_id == old_leader)
    survivors = [n for n in cluster if n is not victim]

    stderr_path = tmp_path / "producer.stderr"
    with contextlib.ExitStack() as stack:
        producer = KafkaJSProcess("produce-stream", {"brokers": brokers, "topic": TOPIC, "idempotent": idempotent},
                                  stderr_path)
        stack.callback(producer.stop)
        producer.wait_for(f"{BEFORE_KILL} records acknowledged", lambda p: len(acked(p)) >= BEFORE_KILL)

        victim.kill9()
        killed_at = time.monotonic()
        producer.wait_for(f"{AFTER_KILL} records acknowledged after the kill",
                          lambda p: len(acked_after(p, killed_at)) >= AFTER_KILL, timeout_s=TIMEOUT_S)
        failover_s = acked_after(producer, killed_at)[0]["at"] - killed_at

        victim.start()
        wait_until("the restarted node back in the ISR on every node", lambda: full_isr(cluster))
        back_at = time.monotonic()
        producer.wait_for(f"{AFTER_RESTART} records acknowledged with the node back",
                          lambda p: len(acked_after(p, back_at)) >= AFTER_RESTART)
        assert producer.stop() == 0, producer.snapshot()[-3:]

    # A send KafkaJS gives up on is resent by client.js; it is allowed only
    # as docs/compatibility.md describes it: its retries spent on connection
    # errors (retriable) to the killed leader, before the new leader's first
    # acknowledgement.
    first_ack_after_kill = first_ack_sent_after(producer, killed_at)
    failed = producer.snapshot("failed")
    unexplained = [e for e in failed if not retries_spent_on_the_dead_leader(e, killed_at, first_ack_after_kill)]
    assert not unexplained, f"{len(unexplained)} sends failed otherwise, e.g. {unexplained[:3]}"
    [done] = producer.snapshot("done")
    acks = acked(producer)
    assert len(acks) == done["sent"], "every record sent was acknowledged"
    assert all(e["errorCode"] == 0 for e in acks)

    # Every acknowledged record is in the log at the offset KafkaJS was given.
    log = read_partition(survivors, TOPIC)
    at_offset = dict(log)
    wrong = [e for e in acks if at_offset.get(int(e["offset"])) != e["value"]]
    assert not wrong, f"{len(wrong)} acknowledged records not at their offset, e.g. {wrong[:3]}"
    values = [v for _, v in log]
    sent = [f"record-{i}" for i in range(done["sent"])]
    if idempotent:
        assert values == sent, "not every record exactly once in the order sent"
        duplicates = 0
    else:
        assert set(values) == set(sent)
        duplicates = len(values) - len(set(values))
    print(f"kafkajs {'idempotent' if idempotent else 'acks=-1'}: kill -9 of leader {old_leader} to the next "
          f"acknowledgement {failover_s:.2f}s (broker.session.timeout.ms={SESSION_TIMEOUT_MS}); "
          f"{len(acks)} records acknowledged, all read back, {duplicates} duplicates; "
          f"{len(failed)} sends failed after KafkaJS's retries and were resent; "
          f"KafkaJS retried after: {dict(errors_logged(stderr_path))}")
