"""Client-side round trips shared by the tests against Samsa and the tests
against librdkafka's mock cluster (test_mock.py), so the client half of
every check is proven before the broker is."""

import collections

from harness import roundtrip_bin, run, samsa_bin

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def create_topic(bootstrap, topic, partitions, config=None, timeout_s=30):
    """Creates a topic with confluent_kafka's AdminClient (bounded wait)."""
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, partitions, 1, config=config or {})],
                                  operation_timeout=timeout_s, request_timeout=timeout_s)
    futures[topic].result(timeout=timeout_s + 5)


def keyed_lines(tag, partition, count):
    """Distinct key:value lines with some bulk so batches compress."""
    return [f"k{partition}-{i}:{tag}-p{partition}-r{i}-" + "x" * (i % 50) for i in range(count)]


def kcat_produce(bootstrap, topic, partition, lines, codec):
    run(["kcat", "-P", "-b", bootstrap, "-t", topic, "-p", str(partition), "-K", ":",
         "-X", f"compression.codec={codec}"],
        input=("\n".join(lines) + "\n").encode(), timeout=120)


def kcat_consume(bootstrap, topic, partition):
    """(offset, "key:value") pairs of one partition, from the beginning to its end."""
    out = run(["kcat", "-C", "-b", bootstrap, "-t", topic, "-p", str(partition), "-o", "beginning",
               "-e", "-q", "-f", "%o %k:%s\n"], timeout=120).stdout.decode()
    records = []
    for line in out.splitlines():
        offset, text = line.split(" ", 1)
        records.append((int(offset), text))
    return records


def kcat_roundtrip(bootstrap, topic, partitions, codec, per_partition=200):
    """Produces known lines to each partition with kcat, reads each partition
    back with kcat and checks exact content, order and offsets 0..n-1."""
    expected = {p: keyed_lines(codec, p, per_partition) for p in range(partitions)}
    for p, lines in expected.items():
        kcat_produce(bootstrap, topic, p, lines, codec)
    for p, lines in expected.items():
        got = kcat_consume(bootstrap, topic, p)
        assert [text for _, text in got] == lines, f"partition {p} content differs"
        assert [offset for offset, _ in got] == list(range(len(lines))), f"partition {p} offsets"


def rdkafka_roundtrip(bootstrap, topic, mode="both", partitions=4, records=100000, create=False,
                      compression="none", timeout_s=120):
    cmd = [roundtrip_bin(), "--bootstrap", bootstrap, "--topic", topic, "--mode", mode,
           "--partitions", str(partitions), "--records", str(records),
           "--compression", compression, "--timeout-s", str(timeout_s)]
    if create:
        cmd.append("--create")
    return run(cmd, timeout=timeout_s * 3 + 30).stdout.decode()


def samsa(*args, input=None, timeout=60, check=True):
    return run([samsa_bin(), *map(str, args)], input=input, timeout=timeout, check=check)


def cli_produce(bootstrap, topic, lines, *extra):
    samsa("produce", "--bootstrap-server", bootstrap, "--topic", topic, *extra,
          input=("\n".join(lines) + "\n").encode())


def cli_consume(bootstrap, topic, *extra, key_separator="\t", timeout=60):
    """Consumed records as (partition, offset, key, value) using
    --print-partition --print-offset --print-key."""
    out = samsa("consume", "--bootstrap-server", bootstrap, "--topic", topic, "--print-partition",
                "--print-offset", "--print-key", "--key-separator", key_separator, *extra,
                timeout=timeout).stdout.decode()
    records = []
    for line in out.splitlines():
        partition, offset, rest = line.split("\t", 2)
        key, value = rest.split(key_separator, 1)
        records.append((int(partition.removeprefix("Partition:")),
                        int(offset.removeprefix("Offset:")), key, value))
    return records


def check_cli_roundtrip(produced, consumed):
    """produced: "key:value" lines in send order; consumed: cli_consume()
    output. Every line arrives once; in each partition offsets run 0..n-1
    and lines keep their send order; a key stays in one partition."""
    by_partition = collections.defaultdict(list)
    for partition, offset, key, value in consumed:
        by_partition[partition].append((offset, f"{key}:{value}"))
    assert sorted(f"{k}:{v}" for _, _, k, v in consumed) == sorted(produced)
    send_order = {line: i for i, line in enumerate(produced)}
    key_partition = {}
    for partition, records in by_partition.items():
        assert [o for o, _ in records] == list(range(len(records))), f"offsets of {partition}"
        positions = [send_order[line] for _, line in records]
        assert positions == sorted(positions), f"partition {partition} out of order"
        for _, line in records:
            key = line.split(":", 1)[0]
            assert key_partition.setdefault(key, partition) == partition, f"key {key} split"
