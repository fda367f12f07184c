"""A cluster of three combined nodes (issue 14): process.roles=broker,controller
on each, controller.quorum.voters naming all three on their CONTROLLER
listeners, every node formatted with one cluster id (`samsa storage format`).

Checked with real processes and real clients: the quorum forms and every
node's Metadata lists the three brokers; an RF=3 topic created with
confluent-kafka's AdminClient and one auto-created by a kcat producer look
the same from every node (leaders, replicas, ISR); records produced with
acks=1 come back through the leader; kill -9 of the active controller while
topics are being created: another is active within the election timeout,
every acknowledged creation is there and none is half-made; a killed broker
is fenced (absent from Metadata) and comes back on restart; a node
formatted for another cluster is refused with a message that says so.

Metadata is asked of one node at a time over raw Metadata v4
(kafka_wire.py), so each node's own image is what is compared. Every server
listens on 127.0.0.1 and is stopped by PID. Every wait has a bound.
"""

import socket
import struct
import time

import kafka_wire
from cluster_harness import (CLUSTER_ID, ELECTION_TIMEOUT_MS, HEARTBEAT_MS, OTHER_CLUSTER_ID, SESSION_TIMEOUT_MS,
                             TIMEOUT_S, ClusterNode, acknowledged_creations, admin_for, brokers_seen,
                             cluster, controller_of,  # noqa: F401
                             create_with_admin, describe_cluster_v0, metadata_v4, same_everywhere, start_creations,
                             topic_view, stop_all, try_metadata, voters_of, wait_for_brokers, wait_until)
from harness import HOST

# ------------------------------------------------------------------ tests

def test_three_nodes_form_one_cluster_and_agree_on_an_rf3_topic(cluster):
    started = time.monotonic()
    wait_for_brokers(cluster, {1, 2, 3})
    formed_s = time.monotonic() - started
    m = metadata_v4(cluster[0])
    assert m["brokers"] == {n.node_id: (HOST, n.port, f"rack{n.node_id}") for n in cluster}
    controller = wait_until("one active controller named by every node", lambda: controller_of(cluster))
    assert controller in (1, 2, 3)
    print(f"quorum formed and 3 brokers unfenced in {formed_s:.2f}s; controller {controller}")

    for n in cluster:
        assert describe_cluster_v0(n) == (controller, {m.node_id: (HOST, m.port, f"rack{m.node_id}")
                                                       for m in cluster})
    admin = admin_for(cluster)

    create_with_admin(admin, "rf3")
    view = wait_until("rf3 the same on every node", lambda: same_everywhere(cluster, "rf3"))
    assert sorted(view) == [0, 1, 2]
    leaders = set()
    for index, (error, leader, replicas, isr) in view.items():
        assert error == 0
        assert sorted(replicas) == [1, 2, 3]
        assert sorted(isr) == [1, 2, 3]
        assert leader == replicas[0]
        leaders.add(leader)
    assert leaders == {1, 2, 3}  # leaders balanced over the three

    # kcat's producer auto-creates (default.replication.factor=3), through any node.
    import subprocess
    subprocess.run(["kcat", "-b", cluster[2].bootstrap, "-P", "-t", "auto-kcat", "-p", "0",
                    "-X", "request.required.acks=1"],
                   input=b"one\ntwo\nthree\n", check=True, timeout=TIMEOUT_S)
    auto = wait_until("auto-kcat the same on every node", lambda: same_everywhere(cluster, "auto-kcat"))
    assert all(sorted(p[2]) == [1, 2, 3] for p in auto.values())
    leader = auto[0][1]
    via_leader = next(n for n in cluster if n.node_id == leader)
    out = subprocess.run(["kcat", "-b", via_leader.bootstrap, "-C", "-t", "auto-kcat", "-p", "0", "-o",
                          "beginning", "-e", "-q"], check=True, timeout=TIMEOUT_S, capture_output=True).stdout
    assert out.split() == [b"one", b"two", b"three"]


def test_produce_acks1_and_consume_through_the_leader(cluster):
    from confluent_kafka import Consumer, Producer
    wait_for_brokers(cluster, {1, 2, 3})
    create_with_admin(admin_for(cluster), "roundtrip", partitions=1)
    view = wait_until("roundtrip the same on every node", lambda: same_everywhere(cluster, "roundtrip"))
    producer = Producer({"bootstrap.servers": cluster[0].bootstrap, "acks": 1})
    delivered = []
    for i in range(100):
        producer.produce("roundtrip", f"v{i}".encode(), partition=0,
                         on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(TIMEOUT_S) == 0
    assert delivered == [None] * 100
    consumer = Consumer({"bootstrap.servers": cluster[1].bootstrap, "group.id": "g-roundtrip",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        from confluent_kafka import TopicPartition
        consumer.assign([TopicPartition("roundtrip", 0, 0)])
        values = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(values) < 100 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                values.append(msg.value().decode())
        assert values == [f"v{i}" for i in range(100)]
    finally:
        consumer.close()
    assert view[0][1] in (1, 2, 3)


def test_killing_the_active_controller_while_creating_topics(cluster):
    wait_for_brokers(cluster, {1, 2, 3})
    admin = admin_for(cluster)
    acknowledged = []
    for i in range(5):
        create_with_admin(admin, f"before-{i}")
        acknowledged.append(f"before-{i}")
    old = wait_until("an active controller", lambda: controller_of(cluster))
    victim = next(n for n in cluster if n.node_id == old)
    survivors = [n for n in cluster if n is not victim]
    # Creations in flight while the controller dies: each either acknowledged or failed.
    futures = start_creations(admin, [f"during-{i}" for i in range(10)])
    victim.kill9()
    killed_at = time.monotonic()
    new = wait_until("another active controller",
                     lambda: (c := controller_of(survivors)) is not None and c != old and c)
    election_s = time.monotonic() - killed_at
    print(f"election after kill -9 of controller {old}: node {new} active in {election_s:.2f}s "
          f"(election timeout {ELECTION_TIMEOUT_MS} ms)")
    assert election_s < 10 * ELECTION_TIMEOUT_MS / 1000  # liveness bound, generous
    acknowledged += acknowledged_creations(futures)
    admin2 = admin_for(survivors)
    for i in range(3):
        create_with_admin(admin2, f"after-{i}")
        acknowledged.append(f"after-{i}")
    for n in survivors:
        # A survivor applies what committed once it hears of the commit: wait for it, bounded.
        m = wait_until(f"node {n.node_id} has every acknowledged topic",
                       lambda n=n: (m := try_metadata(n)) and all(t in m["topics"] for t in acknowledged) and m)
        for name, (error, partitions) in m["topics"].items():
            expected = 2 if name.startswith("during-") else 3
            if name.startswith(("before-", "during-", "after-")):
                assert error == 0 and sorted(partitions) == list(range(expected)), (name, m["topics"][name])
    # The fencing time: the killed node leaves Metadata once its session expires.
    fenced_s = wait_until("the killed node gone from Metadata",
                          lambda: all(old not in brokers_seen(n) for n in survivors)
                          and time.monotonic() - killed_at)
    print(f"broker {old} fenced {fenced_s:.2f}s after kill -9 (broker.session.timeout.ms={SESSION_TIMEOUT_MS})")
    victim.start()
    wait_for_brokers(cluster, {1, 2, 3})
    for name in acknowledged:
        assert wait_until(f"{name} on the restarted node", lambda name=name: topic_view(victim, name))


def test_a_killed_broker_is_fenced_and_returns_on_restart(cluster):
    wait_for_brokers(cluster, {1, 2, 3})
    controller = wait_until("an active controller", lambda: controller_of(cluster))
    victim = next(n for n in cluster if n.node_id != controller)
    others = [n for n in cluster if n is not victim]
    victim.kill9()
    killed_at = time.monotonic()
    wait_for_brokers(others, {n.node_id for n in others}, timeout_s=SESSION_TIMEOUT_MS / 1000 + TIMEOUT_S)
    fenced_s = time.monotonic() - killed_at
    print(f"broker {victim.node_id} fenced {fenced_s:.2f}s after kill -9 "
          f"(broker.session.timeout.ms={SESSION_TIMEOUT_MS})")
    # Not before its session could expire: its last heartbeat was at most one interval before the kill.
    assert fenced_s >= (SESSION_TIMEOUT_MS - HEARTBEAT_MS) / 1000 * 0.95
    victim.start()
    wait_for_brokers(cluster, {1, 2, 3})


def test_a_node_formatted_for_another_cluster_is_refused(tmp_path):
    nodes = [ClusterNode(tmp_path, i, None, CLUSTER_ID if i < 3 else OTHER_CLUSTER_ID) for i in (1, 2, 3)]
    voters = voters_of(nodes)
    for n in nodes:
        n.write_config(voters)
    try:
        for n in nodes:
            n.start()
        wait_for_brokers(nodes[:2], {1, 2})
        stray = nodes[2]
        refusal = f"its cluster id {OTHER_CLUSTER_ID} is not the cluster's (INCONSISTENT_CLUSTER_ID)"
        wait_until("the controller's refusal in the stray node's log", lambda: refusal in stray.log_tail(2000))
        log = stray.log_tail(2000)
        assert "format them with the cluster's id (samsa storage format --cluster-id ID --config FILE" in log, log
        assert 3 not in brokers_seen(nodes[0])
    finally:
        for n in nodes:
            n.stop()


def delete_topics_v1(node, names, timeout_ms=15000):
    """Raw DeleteTopics v1 to one node: {name: error_code}."""
    body = struct.pack(">i", len(names)) + b"".join(kafka_wire.string(n) for n in names)
    body += struct.pack(">i", timeout_ms)
    payload = kafka_wire.request(20, 1, 9, body)
    with socket.create_connection((node.host, node.port), timeout=TIMEOUT_S) as s:
        s.sendall(payload)
        response = kafka_wire.recv_frame(s, TIMEOUT_S)
    assert response is not None, f"node {node.node_id} closed the connection"
    r = kafka_wire.Reader(response)
    assert r.i32() == 9
    r.i32()  # throttle_time_ms
    return {r.string(): r.i16() for _ in range(r.i32())}


def test_metadata_changes_through_a_node_that_is_not_the_controller(cluster):
    """Such a node forwards them to the active controller (as Kafka's
    brokers do), so a client may send them to any node."""
    from confluent_kafka.admin import ConfigResource, NewPartitions
    wait_for_brokers(cluster, {1, 2, 3})
    controller = wait_until("an active controller", lambda: controller_of(cluster))
    other = next(n for n in cluster if n.node_id != controller)
    only_other = admin_for([other])

    create_with_admin(only_other, "grow", partitions=2)
    wait_until("grow on every node", lambda: same_everywhere(cluster, "grow"))
    assert delete_topics_v1(other, ["grow"]) == {"grow": 0}
    wait_until("grow gone from every node", lambda: all(
        "grow" not in (try_metadata(n) or {"topics": {"grow": 0}})["topics"] for n in cluster))

    create_with_admin(only_other, "more", partitions=2)
    wait_until("more on every node", lambda: same_everywhere(cluster, "more"))
    only_other.create_partitions([NewPartitions("more", 4)])["more"].result(timeout=TIMEOUT_S)
    view = wait_until("more with 4 partitions on every node",
                      lambda: (v := same_everywhere(cluster, "more")) and len(v) == 4 and v)
    assert all(sorted(p[2]) == [1, 2, 3] for p in view.values())

    resource = ConfigResource(ConfigResource.Type.TOPIC, "more", set_config={"retention.ms": "123456"})
    only_other.alter_configs([resource])[resource].result(timeout=TIMEOUT_S)
    for n in cluster:
        admin = admin_for([n])  # kept alive until its futures are resolved

        def retention(admin=admin):
            r = ConfigResource(ConfigResource.Type.TOPIC, "more")
            configs = admin.describe_configs([r])[r].result(timeout=TIMEOUT_S)
            return configs["retention.ms"].value == "123456"
        wait_until(f"retention.ms on node {n.node_id}", retention)


def test_the_first_group_request_creates_the_offsets_topic_on_any_node(cluster):
    from confluent_kafka import Consumer
    wait_for_brokers(cluster, {1, 2, 3})
    controller = wait_until("an active controller", lambda: controller_of(cluster))
    other = next(n for n in cluster if n.node_id != controller)
    consumer = Consumer({"bootstrap.servers": other.bootstrap, "group.id": "g-any-node",
                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe(["no-such-topic-yet"])
        consumer.poll(0.5)
        view = wait_until("__consumer_offsets the same on every node",
                          lambda: same_everywhere(cluster, "__consumer_offsets"), interval_s=0.2)
    finally:
        consumer.close()
    assert all(sorted(p[2]) == [1, 2, 3] for p in view.values())  # offsets.topic.replication.factor=3


def test_kafka_python_admin_creates_and_deletes_through_the_cluster(cluster):
    """kafka-python's KafkaAdminClient sends CreateTopics and DeleteTopics
    to Metadata's controller_id (and refreshes it on NOT_CONTROLLER)."""
    from kafka.admin import KafkaAdminClient, NewTopic
    wait_for_brokers(cluster, {1, 2, 3})
    wait_until("an active controller", lambda: controller_of(cluster))
    admin = KafkaAdminClient(bootstrap_servers=[n.bootstrap for n in cluster], request_timeout_ms=TIMEOUT_S * 1000)
    try:
        admin.create_topics([NewTopic("kp", 2, 3)], timeout_ms=TIMEOUT_S * 1000)
        view = wait_until("kp the same on every node", lambda: same_everywhere(cluster, "kp"))
        assert all(sorted(p[2]) == [1, 2, 3] for p in view.values())
        admin.delete_topics(["kp"], timeout_ms=TIMEOUT_S * 1000)
        wait_until("kp gone from every node", lambda: all(
            "kp" not in (try_metadata(n) or {"topics": {"kp": 0}})["topics"] for n in cluster))
    finally:
        admin.close()


def test_a_node_not_caught_up_with_the_metadata_log_serves_no_client_request(tmp_path):
    # One node of three alone: no quorum, so it never catches up. Kafka's
    # broker would not process requests on its listeners; Samsa answers
    # ApiVersions (the process is up) and closes the connection on anything
    # else, so a client tries another broker instead of reading an empty image.
    nodes = [ClusterNode(tmp_path, i, None) for i in (1, 2, 3)]
    voters = voters_of(nodes)
    for n in nodes:
        n.write_config(voters)
    try:
        nodes[0].start()  # returns once ApiVersions is answered
        for _ in range(5):
            assert try_metadata(nodes[0]) is None, "Metadata answered before the node caught up"
        nodes[1].start()
        wait_until("node 1 serving Metadata once the quorum formed", lambda: try_metadata(nodes[0]))
    finally:
        stop_all(nodes)
