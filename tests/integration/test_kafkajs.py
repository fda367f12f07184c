"""KafkaJS 2.2.4 (tests/kafkajs: package-lock.json, client.js) against one
Samsa broker, with KafkaJS's defaults (it negotiates its own API versions
from ApiVersions): the admin client (createTopics, listTopics,
fetchTopicMetadata), a producer with acks=-1 to 3 partitions, a consumer
group that reads every record once and commits, a second run of the group
that resumes from the committed offsets, and a second member joining that
makes the group rebalance so the two split the partitions.
"""

import contextlib

from kafkajs_client import KafkaJSProcess, of, run_kafkajs

PARTITIONS = 3
RECORDS = 600


def args_for(broker, **extra):
    return {"brokers": [broker.bootstrap], **extra}


def create(broker, topic):
    return run_kafkajs("admin", args_for(broker, topic=topic, partitions=PARTITIONS))


def produce(broker, topic, count, prefix="record"):
    events = run_kafkajs("produce", args_for(broker, topic=topic, partitions=PARTITIONS, count=count,
                                             prefix=prefix))
    acked = of(events, "acked")
    assert sum(e["records"] for e in acked) == count
    assert all(p["errorCode"] == 0 for e in acked for p in e["partitions"])
    return acked


def values(events):
    return [e["value"] for e in of(events, "message")]


def test_admin_creates_lists_and_describes_a_topic(broker):
    events = create(broker, "kjs-admin")
    assert of(events, "created")[0]["created"] is True
    assert of(events, "created-again")[0]["created"] is False  # TOPIC_ALREADY_EXISTS
    assert "kjs-admin" in of(events, "topics")[0]["topics"]
    [topic] = of(events, "metadata")[0]["topics"]
    assert topic["name"] == "kjs-admin"
    partitions = sorted(topic["partitions"], key=lambda p: p["partition"])
    assert [p["partition"] for p in partitions] == list(range(PARTITIONS))
    for p in partitions:
        assert p["errorCode"] == 0 and p["leader"] == 1 and p["replicas"] == [1] and p["isr"] == [1], p


def test_a_group_reads_every_record_once_and_resumes_from_its_commits(broker):
    topic = "kjs-group"
    create(broker, topic)
    acked = produce(broker, topic, RECORDS)
    # KafkaJS's partitioner is not used (each record names its partition): i % 3.
    offsets = {}
    for e in acked:
        for p in e["partitions"]:
            offsets.setdefault(p["partition"], []).append(int(p["baseOffset"]))
    assert sorted(offsets) == list(range(PARTITIONS))

    first = run_kafkajs("consume-group", args_for(broker, topic=topic, group="kjs-g1", expect=RECORDS))
    got = values(first)
    assert sorted(got) == sorted(f"record-{i}" for i in range(RECORDS)), "each record exactly once"
    for e in of(first, "message"):
        assert int(e["value"].split("-")[1]) % PARTITIONS == e["partition"]
        assert e["key"] == "key-" + e["value"].split("-")[1]
    per_partition = {}
    for e in of(first, "message"):
        per_partition.setdefault(e["partition"], []).append(int(e["offset"]))
    assert all(o == list(range(len(o))) for o in per_partition.values()), "in offset order, from 0"

    # The group's committed offsets: a second run reads only what was produced since.
    produce(broker, topic, 30, prefix="later")
    second = run_kafkajs("consume-group", args_for(broker, topic=topic, group="kjs-g1", expect=30, idleMs=3000))
    assert sorted(values(second)) == sorted(f"later-{i}" for i in range(30))


def assignment_of(member, topic):
    joins = member.snapshot("joined")
    return sorted(joins[-1]["memberAssignment"].get(topic, [])) if joins else None


def test_a_second_member_makes_the_group_rebalance_and_split_the_partitions(broker, tmp_path):
    topic = "kjs-rebalance"
    create(broker, topic)
    produce(broker, topic, 60)
    args = args_for(broker, topic=topic, group="kjs-g2")
    with contextlib.ExitStack() as stack:
        a = KafkaJSProcess("consume-until-stopped", args, tmp_path / "a.stderr")
        stack.callback(a.stop)
        a.wait_for("member a with every partition", lambda m: assignment_of(m, topic) == list(range(PARTITIONS)))
        a.wait_for("member a reading all 60 records", lambda m: len(m.snapshot("message")) >= 60)

        b = KafkaJSProcess("consume-until-stopped", args, tmp_path / "b.stderr")
        stack.callback(b.stop)

        def split(_):
            ours, theirs = assignment_of(a, topic), assignment_of(b, topic)
            return ours and theirs and len(a.snapshot("joined")) >= 2 and \
                sorted(ours + theirs) == list(range(PARTITIONS))
        a.wait_for("a rebalance giving each member its share", split)
        ours, theirs = assignment_of(a, topic), assignment_of(b, topic)
        assert not set(ours) & set(theirs), (ours, theirs)

        # Records produced now reach the member that owns their partition, once.
        produce(broker, topic, 30, prefix="split")

        def delivered(_):
            return [e for m in (a, b) for e in m.snapshot("message") if e["value"].startswith("split-")]
        a.wait_for("the 30 new records", lambda _: len(delivered(_)) >= 30)
        for member, owned in ((a, ours), (b, theirs)):
            for e in member.snapshot("message"):
                if e["value"].startswith("split-"):
                    assert e["partition"] in owned
        assert sorted(e["value"] for e in delivered(None)) == sorted(f"split-{i}" for i in range(30))
        assert not of(a.snapshot() + b.snapshot(), "crash")
    assert a.proc.returncode == 0 and b.proc.returncode == 0
