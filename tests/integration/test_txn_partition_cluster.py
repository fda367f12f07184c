"""The partition side of transactions on three combined nodes (RF=3): the
followers copy the transactional and control batches byte for byte like
any batch and derive the same state (the abort's .txnindex entry on every
node), and after kill -9 of the leader the new leader answers
read_committed as the old one did: the committed records, none of the
aborted ones, and the LSO still held by a transaction left open.

Both partitions are placed [1, 2, 3] so node 1 leads both; every server is
stopped by PID; every wait has a bound."""

from cluster_harness import (admin_for, cluster, create_with_admin, same_everywhere, topic_view,  # noqa: F401
                             wait_for_brokers, wait_until)
from kafka_wire import init_producer_id
from txn_wire import READ_COMMITTED, consume_confluent, latest_offset, send, write_markers

TOPIC = "txn3"


def test_markers_replicate_and_read_committed_survives_failover(cluster):
    wait_for_brokers(cluster, {1, 2, 3})
    create_with_admin(admin_for(cluster), TOPIC, assignment=[[1, 2, 3], [1, 2, 3]],
                      config={"min.insync.replicas": "2"})
    wait_until("both partitions led by node 1 with the full ISR everywhere",
               lambda: (lambda v: v if v and all(p[1] == 1 and sorted(p[3]) == [1, 2, 3] for p in v.values())
                        else None)(same_everywhere(cluster, TOPIC)))
    leader = next(n for n in cluster if n.node_id == 1)
    survivors = [n for n in cluster if n is not leader]

    pid, epoch = init_producer_id(leader)
    send(leader, TOPIC, 0, ["c0", "c1"], (pid, epoch, 0), transactional=True)
    send(leader, TOPIC, 1, ["a0", "a1"], (pid, epoch, 0), transactional=True)
    assert write_markers(leader, pid, epoch, True, TOPIC, [0]) == {0: 0}  # answered once replicated (acks=-1)
    assert write_markers(leader, pid, epoch, False, TOPIC, [1]) == {1: 0}
    send(leader, TOPIC, 0, ["open"], (pid, epoch, 2), transactional=True)  # left open
    want = {0: ["c0", "c1"], 1: []}
    assert consume_confluent(leader.bootstrap, TOPIC, [0, 1], "read_committed", 2) == want

    # Every follower derived the abort from the replicated marker.
    for n in survivors:
        index = n.data_dir / "logs" / f"{TOPIC}-1" / "00000000000000000000.txnindex"
        wait_until(f"node {n.node_id}: the abort in its .txnindex",
                   lambda index=index: index.exists() and index.stat().st_size == 34)

    leader.kill9()
    wait_until("a new leader of both partitions on the survivors",
               lambda: all((lambda v: v and all(p[1] in (2, 3) for p in v.values()))(topic_view(n, TOPIC))
                           for n in survivors))
    bootstrap = ",".join(n.bootstrap for n in survivors)
    new_leader = next(n for n in survivors if n.node_id == topic_view(survivors[0], TOPIC)[0][1])
    assert latest_offset(new_leader, TOPIC, 0, READ_COMMITTED) == 3  # c0 c1 marker | open
    assert latest_offset(new_leader, TOPIC, 1, READ_COMMITTED) == 3  # a0 a1 marker
    assert consume_confluent(bootstrap, TOPIC, [0, 1], "read_committed", 2) == want
    assert consume_confluent(bootstrap, TOPIC, [0, 1], "read_uncommitted", 5) == \
        {0: ["c0", "c1", "open"], 1: ["a0", "a1"]}

    # The killed node restarts and catches up as a follower, markers included.
    leader.start()
    wait_until("node 1 back in both ISRs",
               lambda: (lambda v: v and all(sorted(p[3]) == [1, 2, 3] for p in v.values()))(
                   same_everywhere(cluster, TOPIC)))
    assert (leader.data_dir / "logs" / f"{TOPIC}-1" / "00000000000000000000.txnindex").stat().st_size == 34
