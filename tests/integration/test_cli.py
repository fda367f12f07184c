"""The samsa CLI against a real Samsa broker: topic create/list/describe/
delete and produce/consume (plain, keyed, compressed, with a group), data
surviving a restart."""

import re
import time

from clients import check_cli_roundtrip, cli_consume, cli_produce, samsa

DESCRIBE_HEADER = re.compile(
    r"^Topic: (\S+)(\tTopicId: \S+)?\tPartitionCount: (\d+)\tReplicationFactor: (\d+)"
    r"\tConfigs: (.*)$")
DESCRIBE_PARTITION = re.compile(
    r"^\tTopic: (\S+)\tPartition: (\d+)\tLeader: (\d+)\tReplicas: ([\d,]+)\tIsr: ([\d,]+)$")


def topics(broker):
    return samsa("topic", "list", "-b", broker.bootstrap).stdout.decode().split()


def test_topic_lifecycle(broker):
    b = broker.bootstrap
    out = samsa("topic", "create", "-b", b, "--topic", "orders", "--partitions", "3",
                "--replication-factor", "1", "--config", "retention.ms=3600000",
                "--config", "cleanup.policy=delete")
    assert out.stdout.decode() == "Created topic orders.\n"
    assert "orders" in topics(broker)

    lines = samsa("topic", "describe", "-b", b, "--topic", "orders").stdout.decode().splitlines()
    header = DESCRIBE_HEADER.match(lines[0])
    assert header, lines[0]
    assert header.group(1) == "orders" and header.group(3) == "3" and header.group(4) == "1"
    assert "retention.ms=3600000" in header.group(5).split(",")
    assert len(lines) == 4
    for p, line in enumerate(lines[1:]):
        m = DESCRIBE_PARTITION.match(line)
        assert m, line
        assert m.group(1) == "orders" and int(m.group(2)) == p
        assert m.group(4) == m.group(3) and m.group(5) == m.group(3)  # single broker: itself

    again = samsa("topic", "create", "-b", b, "--topic", "orders", "--partitions", "1", check=False)
    assert again.returncode == 1 and "TOPIC_ALREADY_EXISTS" in again.stderr.decode()
    samsa("topic", "create", "-b", b, "--topic", "orders", "--partitions", "1", "--if-not-exists")

    assert samsa("topic", "delete", "-b", b, "--topic", "orders").stdout == b"Deleted topic orders.\n"
    deadline = time.monotonic() + 15
    while "orders" in topics(broker):
        assert time.monotonic() < deadline, "deleted topic still listed after 15 s"
        time.sleep(0.2)
    missing = samsa("topic", "describe", "-b", b, "--topic", "orders", check=False)
    assert missing.returncode == 1 and "does not exist" in missing.stderr.decode()
    gone = samsa("topic", "delete", "-b", b, "--topic", "orders", check=False)
    assert gone.returncode == 1
    samsa("topic", "delete", "-b", b, "--topic", "orders", "--if-exists")


def test_produce_consume_and_restart(broker):
    b = broker.bootstrap
    samsa("topic", "create", "-b", b, "--topic", "events", "--partitions", "3")
    lines = [f"user{i % 5}:event-{i}" for i in range(2000)]
    cli_produce(b, "events", lines, "--key-separator", ":", "--compression", "zstd")
    read = ["--from-beginning", "--max-messages", str(len(lines)), "--timeout-ms", "30000"]
    check_cli_roundtrip(lines, cli_consume(b, "events", *read, key_separator=":"))
    broker.restart()
    check_cli_roundtrip(lines, cli_consume(b, "events", *read, key_separator=":"))


def test_group_consume_resumes(broker):
    b = broker.bootstrap
    samsa("topic", "create", "-b", b, "--topic", "jobs", "--partitions", "2")
    first = [f"k{i}:job-{i}" for i in range(100)]
    cli_produce(b, "jobs", first, "--key-separator", ":")
    got = cli_consume(b, "jobs", "--group", "workers", "--from-beginning", "--max-messages", "100",
                      "--timeout-ms", "30000", key_separator=":")
    check_cli_roundtrip(first, got)
    second = [f"k{i}:job-{i}" for i in range(100, 150)]
    cli_produce(b, "jobs", second, "--key-separator", ":")
    # The group resumes from its committed offsets: only the new records.
    rest = cli_consume(b, "jobs", "--group", "workers", "--max-messages", "50",
                       "--timeout-ms", "30000", key_separator=":")
    assert sorted(f"{k}:{v}" for _, _, k, v in rest) == sorted(second)


def test_plain_lines_to_one_partition(broker):
    b = broker.bootstrap
    samsa("topic", "create", "-b", b, "--topic", "plain", "--partitions", "2")
    cli_produce(b, "plain", ["alpha", "", "gamma"], "--partition", "1", "--acks", "1")
    out = samsa("consume", "-b", b, "--topic", "plain", "--from-beginning", "--max-messages", "3",
                "--timeout-ms", "30000").stdout.decode()
    assert out == "alpha\n\ngamma\n"
    got = cli_consume(b, "plain", "--partition", "1", "--offset", "2", "--max-messages", "1",
                      "--timeout-ms", "30000")
    assert got == [(1, 2, "null", "gamma")]
