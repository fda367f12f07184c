"""Eligible leader replicas (KIP-966) and availability with two of three
brokers down, on a split cluster (issue 15 items 6 and 9): three
controller-only voters (ids 1-3) that stay up, three broker-only nodes
(ids 4-6), a topic with replicas [4, 5, 6], RF=3, min.insync.replicas=2.

- KIP-966's scenario: records acknowledged with acks=all (confluent-kafka);
  broker 6 stops (SIGTERM, controlled shutdown: the ISR is [4, 5], still at
  min ISR), then broker 5 (the ISR is [4], below min ISR: 5 joins the ELR;
  the leader no longer advances the HW), then the last ISR member, 4, is
  killed with kill -9. Broker 5 (shut down cleanly) comes back: with ELR it
  is elected, and with 6 back in the ISR every acknowledged record is read
  back. With eligible.leader.replicas.enable=false the same steps leave the
  partition offline: 5 is outside the ISR, and only 4 (dead) may lead.
- Two of three brokers killed with kill -9 while the quorum stays up: a raw
  acks=-1 Produce (kafka_wire) is answered NOT_ENOUGH_REPLICAS, acks=1 is
  acknowledged; restarted, the ISR is whole again, acks=-1 succeeds and the
  acks=1 records are read back (strict min ISR, KAFKA-15583 / KIP-966: they
  become visible to consumers once the ISR is back at min ISR, as in
  Kafka 4.1).

Every server listens on 127.0.0.1 and is stopped by PID; every wait has a bound.
"""

import time

import pytest

import kafka_wire
from cluster_harness import (SESSION_TIMEOUT_MS, AckedProducer, admin_for, create_with_admin, read_partition,
                             running_split_cluster, topic_view, wait_for_brokers, wait_until)

TOPIC = "elr"
NOT_ENOUGH_REPLICAS = 19
BEFORE = 100  # records acknowledged before the brokers go


def partition0(broker):
    """(leader, isr) of TOPIC-0 as `broker` sees it, None if it cannot tell."""
    view = topic_view(broker, TOPIC)
    if not view or 0 not in view:
        return None
    _error, leader, _replicas, isr = view[0]
    return leader, sorted(isr)


def split_cluster(request, tmp_path, elr):
    return running_split_cluster(request, tmp_path, brokers=3, extra={
        "default.replication.factor": 3, "offsets.topic.replication.factor": 3,
        "eligible.leader.replicas.enable": "true" if elr else "false",
        # The preferred-leader rebalance would move leadership back to 4
        # mid-test; this test is about elections, not balance.
        "auto.leader.rebalance.enable": "false"})


def create_topic(brokers):
    wait_for_brokers(brokers, {4, 5, 6})  # registered and unfenced: placeable
    create_with_admin(admin_for(brokers), TOPIC, assignment=[[4, 5, 6]], config={"min.insync.replicas": "2"})
    wait_until("the topic led by 4 with the whole ISR",
               lambda: all(partition0(b) == (4, [4, 5, 6]) for b in brokers))


def produce_acked(brokers, count):
    producer = AckedProducer(brokers, TOPIC)
    producer.run_until(f"{count} records acknowledged", lambda: len(producer.acked) >= count)
    producer.flush()
    assert not producer.failed, producer.failed
    return set(producer.acked)


@pytest.mark.parametrize("elr", [True, False], ids=["elr", "no-elr"])
def test_an_eligible_leader_replica_leads_when_the_whole_isr_is_gone(request, tmp_path, elr):
    with split_cluster(request, tmp_path, elr) as (_controllers, brokers):
        b4, b5, b6 = brokers
        create_topic(brokers)
        acked = produce_acked(brokers, BEFORE)

        assert b6.stop() == 0
        wait_until("6 out of the ISR", lambda: partition0(b4) == (4, [4, 5]))
        assert b5.stop() == 0
        wait_until("5 out of the ISR: below min ISR", lambda: partition0(b4) == (4, [4]))
        b4.kill9()  # the last ISR member
        b5.start()  # an ELR member, shut down cleanly
        if elr:
            wait_until("5 elected from the ELR", lambda: partition0(b5) == (5, [5]),
                       timeout_s=SESSION_TIMEOUT_MS / 1000 + 30)
        else:
            # 4's fencing (the session timeout) and 5's unfencing are both
            # past once 5 sees the partition leaderless; then it must stay so.
            wait_until("4 fenced: the partition leaderless", lambda: partition0(b5) == (-1, [4]),
                       timeout_s=SESSION_TIMEOUT_MS / 1000 + 30)
            b6.start()
            deadline = time.monotonic() + 2 * SESSION_TIMEOUT_MS / 1000
            while time.monotonic() < deadline:
                assert partition0(b5) in ((-1, [4]), None), "without ELR no replica outside the ISR may lead"
                time.sleep(0.1)
            b4.start()  # only the last ISR member brings the partition back
            wait_until("4 leads again", lambda: partition0(b5) is not None and partition0(b5)[0] == 4)
            return
        # 6 back in the ISR: at min ISR again, the HW covers every record.
        b6.start()
        wait_until("6 back in the ISR", lambda: partition0(b5) == (5, [5, 6]))
        values = {v for _, v in read_partition([b5, b6], TOPIC)}
        missing = acked - values
        assert not missing, f"{len(missing)} acknowledged records lost, e.g. {sorted(missing)[:5]}"
        b4.start()  # back after kill -9: an unclean shutdown, it rejoins as a follower
        wait_until("4 back in the ISR", lambda: partition0(b5) == (5, [4, 5, 6]))


def produce_raw(broker, acks, value):
    """One record with a raw Produce v3: the partition's error code."""
    batch = kafka_wire.record_batch([(None, value)], int(time.time() * 1000))
    payload = kafka_wire.roundtrip(broker, kafka_wire.produce_v3(7, TOPIC, 0, batch, acks=acks, timeout_ms=5000))
    _correlation, results = kafka_wire.parse_produce_v3(payload)
    assert len(results) == 1, results
    return results[0][2]


def test_two_brokers_down_refuse_acks_all_and_take_acks_1(request, tmp_path):
    with split_cluster(request, tmp_path, elr=True) as (_controllers, brokers):
        b4, b5, b6 = brokers
        create_topic(brokers)
        assert produce_raw(b4, -1, b"before") == 0
        b5.kill9()
        b6.kill9()
        wait_until("5 and 6 fenced out of the ISR", lambda: partition0(b4) == (4, [4]),
                   timeout_s=SESSION_TIMEOUT_MS / 1000 + 30)
        assert produce_raw(b4, -1, b"refused") == NOT_ENOUGH_REPLICAS
        ones = [f"acks1-{i}".encode() for i in range(5)]
        for value in ones:
            assert produce_raw(b4, 1, value) == 0, "acks=1 needs only the leader"
        b5.start()
        b6.start()
        wait_until("5 and 6 back in the ISR", lambda: partition0(b4) == (4, [4, 5, 6]))
        assert produce_raw(b4, -1, b"after") == 0
        values = [v for _, v in read_partition(brokers, TOPIC)]
        assert values == ["before"] + [v.decode() for v in ones] + ["after"], values
