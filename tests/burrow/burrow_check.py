"""Produces to a topic, commits a group's offsets with a real librdkafka
group member that stays in the group, then waits for Burrow's HTTP lag
report to show exactly the expected committed offset and lag per partition
(Burrow reads them from the OffsetCommitKey/Value records it consumes from
__consumer_offsets). Usage: burrow_check.py BOOTSTRAP BURROW_URL"""

import json
import sys
import time
import urllib.request

from confluent_kafka import Consumer, Producer, TopicPartition

TOPIC, GROUP, PARTITIONS, PER_PARTITION = "burrow-topic", "burrow-group", 3, 100
COMMITTED = {0: 40, 1: 55, 2: 100}


def setup(bootstrap):
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(PER_PARTITION):
        for part in range(PARTITIONS):
            p.produce(TOPIC, value=f"{part}:{i}".encode(), partition=part)
    assert p.flush(30) == 0
    # A real group member (so group metadata records are written), which
    # commits chosen offsets and leaves.
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "session.timeout.ms": 6000})
    c.subscribe([TOPIC])
    deadline = time.monotonic() + 30
    while not c.assignment() and time.monotonic() < deadline:
        c.poll(0.2)
    assert len(c.assignment()) == PARTITIONS, c.assignment()
    c.commit(offsets=[TopicPartition(TOPIC, p, o) for p, o in COMMITTED.items()], asynchronous=False)
    return c


def check(url, member):
    expected = {p: PER_PARTITION - o for p, o in COMMITTED.items()}
    deadline = time.monotonic() + 90
    last = None
    while time.monotonic() < deadline:
        member.poll(0.2)  # stays in the group (heartbeats)
        try:
            with urllib.request.urlopen(f"{url}/v3/kafka/local/consumer/{GROUP}/lag", timeout=5) as r:
                last = json.load(r)
        except Exception as e:  # Burrow not ready, or the group not seen yet
            last = str(e)
            time.sleep(1)
            continue
        status = last.get("status") or {}
        partitions = status.get("partitions") or []
        got = {p["partition"]: p["current_lag"] for p in partitions if p.get("topic") == TOPIC}
        ends = {p["partition"]: (p.get("end") or {}).get("offset") for p in partitions if p.get("topic") == TOPIC}
        owners = {p.get("owner", "") for p in partitions}
        if (got == expected and ends == COMMITTED and status.get("totallag") == sum(expected.values())):
            print(f"burrow: group {GROUP} lag per partition {got}, total {status['totallag']}, "
                  f"committed {ends}, owners {owners}")
            return 0
        time.sleep(0.5)
    print(f"burrow never reported lag {expected}; last answer: {json.dumps(last)[:2000]}")
    return 1


if __name__ == "__main__":
    consumer = setup(sys.argv[1])
    try:
        status = check(sys.argv[2], consumer)
    finally:
        consumer.close()
    sys.exit(status)
