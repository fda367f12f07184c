"""The samsa CLI, kcat and rdkafka_roundtrip against librdkafka's mock
cluster: proves the client half of the integration tests (and the CLI)
independently of the Samsa broker. Always registered in ctest."""

import socket
import time

import pytest

import kafka_wire

from clients import (CODECS, check_cli_roundtrip, cli_consume, cli_produce, kcat_roundtrip,
                     rdkafka_roundtrip, samsa)
from harness import free_port, run


def keyed(tag, count):
    return [f"user{i % 7}:{tag}-{i}" for i in range(count)]


@pytest.mark.parametrize("args", [[], ["topic"], ["produce"], ["consume"],
                                  ["topic", "create"], ["topic", "list"],
                                  ["topic", "describe"], ["topic", "delete"]])
def test_help(args):
    result = samsa(*args, "--help")
    assert result.stdout.decode().startswith("Usage: samsa")


@pytest.mark.parametrize("args,message", [
    ([], "Usage: samsa"),
    (["nope"], "unknown command 'nope'"),
    (["topic"], "Usage: samsa topic"),
    (["topic", "nope"], "unknown action 'nope'"),
    (["produce"], "missing required option --topic"),
    (["consume", "--topic"], "needs a value"),
    (["consume", "--topic", "t", "--bogus"], "unknown option '--bogus'"),
    (["consume", "--topic", "t", "--max-messages", "x"], "expects an integer"),
    (["produce", "--topic", "t", "--compression", "brotli"], "unknown --compression"),
    (["topic", "create", "--topic", "t", "--partitions", "0"], "must be between"),
])
def test_usage_errors(args, message):
    result = samsa(*args, check=False)
    assert result.returncode == 2
    assert message in result.stderr.decode()


def test_unreachable_broker_is_a_clear_error():
    bootstrap = f"127.0.0.1:{free_port()}"
    result = samsa("topic", "list", "--bootstrap-server", bootstrap, "--timeout-ms", "1500",
                   check=False)
    assert result.returncode == 1
    assert "samsa topic list: cannot fetch metadata" in result.stderr.decode()


def test_topic_list_and_describe(mock_cluster):
    cluster = mock_cluster({"alpha": 3, "beta": 1})
    listed = samsa("topic", "list", "-b", cluster.bootstrap).stdout.decode()
    assert listed == "alpha\nbeta\n"
    # The mock has no controller, so DescribeConfigs waits out --timeout-ms.
    described = samsa("topic", "describe", "-b", cluster.bootstrap, "--topic", "alpha",
                      "--timeout-ms", "2000")
    lines = described.stdout.decode().splitlines()
    # The mock has no topic ids and no DescribeConfigs: both are left out.
    assert lines[0] == "Topic: alpha\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: "
    assert "warning: configs unavailable" in described.stderr.decode()
    assert lines[1:] == [f"\tTopic: alpha\tPartition: {p}\tLeader: 1\tReplicas: 1\tIsr: 1"
                         for p in range(3)]
    everything = samsa("topic", "describe", "-b", cluster.bootstrap, "--timeout-ms", "2000")
    everything = everything.stdout.decode()
    assert [l.split("\t")[0] for l in everything.splitlines() if l.startswith("Topic:")] == [
        "Topic: alpha", "Topic: beta"]


def test_topic_errors_are_reported(mock_cluster):
    cluster = mock_cluster({"alpha": 1})
    missing = samsa("topic", "describe", "-b", cluster.bootstrap, "--topic", "nope", check=False)
    assert missing.returncode == 1
    assert "topic 'nope' does not exist" in missing.stderr.decode()
    # The mock does not implement CreateTopics: the failure must surface.
    create = samsa("topic", "create", "-b", cluster.bootstrap, "--topic", "new", "--partitions",
                   "2", "--timeout-ms", "2000", check=False)
    assert create.returncode == 1
    assert create.stderr.decode().startswith("samsa topic create: ")


@pytest.mark.parametrize("codec", CODECS)
def test_cli_produce_consume_roundtrip(mock_cluster, codec):
    cluster = mock_cluster({"events": 3})
    lines = keyed(codec, 500)
    cli_produce(cluster.bootstrap, "events", lines, "--key-separator", ":", "--compression", codec)
    consumed = cli_consume(cluster.bootstrap, "events", "--from-beginning", "--max-messages",
                           len(lines), "--timeout-ms", "20000", key_separator=":")
    check_cli_roundtrip(lines, consumed)
    assert len({p for p, _, _, _ in consumed}) > 1, "keys should spread over partitions"


def test_cli_produce_to_partition_and_null_keys(mock_cluster):
    cluster = mock_cluster({"events": 3})
    cli_produce(cluster.bootstrap, "events", ["one", "", "three"], "--partition", "2", "--acks", "1")
    consumed = cli_consume(cluster.bootstrap, "events", "--partition", "2", "--from-beginning",
                           "--max-messages", "3", "--timeout-ms", "20000")
    assert consumed == [(2, 0, "null", "one"), (2, 1, "null", ""), (2, 2, "null", "three")]
    tail = cli_consume(cluster.bootstrap, "events", "--partition", "2", "--offset", "1",
                       "--max-messages", "2", "--timeout-ms", "20000")
    assert [v for _, _, _, v in tail] == ["", "three"]


def test_cli_missing_key_separator_fails(mock_cluster):
    cluster = mock_cluster({"events": 1})
    result = samsa("produce", "-b", cluster.bootstrap, "--topic", "events", "--key-separator", ":",
                   input=b"a:1\nno separator\n", check=False)
    assert result.returncode == 1
    assert "line 2 has no key separator ':'" in result.stderr.decode()
    # The line before the bad one was sent.
    consumed = cli_consume(cluster.bootstrap, "events", "--from-beginning", "--max-messages", "1",
                           "--timeout-ms", "20000")
    assert [(k, v) for _, _, k, v in consumed] == [("a", "1")]


def test_cli_consume_group_commits(mock_cluster):
    cluster = mock_cluster({"events": 2})
    lines = keyed("group", 100)
    cli_produce(cluster.bootstrap, "events", lines, "--key-separator", ":")
    first = cli_consume(cluster.bootstrap, "events", "--group", "readers", "--from-beginning",
                        "--max-messages", len(lines), "--timeout-ms", "30000", key_separator=":")
    check_cli_roundtrip(lines, first)
    # The group committed its position on close: nothing is left to read.
    started = time.monotonic()
    again = cli_consume(cluster.bootstrap, "events", "--group", "readers", "--from-beginning",
                        "--timeout-ms", "3000")
    assert again == []
    assert time.monotonic() - started < 30


def test_cli_consume_idle_timeout(mock_cluster):
    cluster = mock_cluster({"empty": 1})
    result = samsa("consume", "-b", cluster.bootstrap, "--topic", "empty", "--from-beginning",
                   "--timeout-ms", "1000", timeout=30)
    assert result.stdout == b""
    assert "Processed a total of 0 messages" in result.stderr.decode()


@pytest.mark.parametrize("codec", CODECS)
def test_kcat_roundtrip(mock_cluster, codec):
    cluster = mock_cluster({"kcat": 3})
    kcat_roundtrip(cluster.bootstrap, "kcat", 3, codec)


def test_rdkafka_roundtrip(mock_cluster):
    cluster = mock_cluster({"rt": 4})
    out = rdkafka_roundtrip(cluster.bootstrap, "rt", records=100000, partitions=4,
                            compression="lz4")
    assert "verified 100000 records" in out
    again = rdkafka_roundtrip(cluster.bootstrap, "rt", mode="consume", records=100000, partitions=4)
    assert "verified 100000 records" in again


def test_rdkafka_roundtrip_detects_a_mismatch(mock_cluster):
    """The checker must be able to fail: the topic holds more records than
    it is told to expect, and fewer partitions than it expects."""
    cluster = mock_cluster({"rt": 2})
    rdkafka_roundtrip(cluster.bootstrap, "rt", records=1000, partitions=2)
    with pytest.raises(AssertionError, match="extra records|has offsets"):
        rdkafka_roundtrip(cluster.bootstrap, "rt", mode="consume", records=999, partitions=2)


def test_raw_wire_encoder(mock_cluster):
    """kafka_wire.py (used by test_bad_input.py) speaks correctly: ApiVersions
    v0 parses, and a hand-built Produce v3 batch is accepted and decodes in
    librdkafka with CRC checking on."""
    cluster = mock_cluster({"raw": 1})
    host, port = cluster.bootstrap.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(kafka_wire.api_versions_v0(3))
        correlation_id, error, versions = kafka_wire.parse_api_versions_v0(kafka_wire.recv_frame(s))
        assert (correlation_id, error) == (3, 0) and kafka_wire.API_PRODUCE in versions
        batch = kafka_wire.record_batch([(b"k", b"raw-ok"), (None, b"second")], 1_700_000_000_000)
        s.sendall(kafka_wire.produce_v3(41, "raw", 0, batch))
        assert kafka_wire.parse_produce_v3(kafka_wire.recv_frame(s)) == (41, [("raw", 0, 0, 0)])
    out = run(["kcat", "-C", "-b", cluster.bootstrap, "-t", "raw", "-o", "beginning", "-e", "-q",
               "-X", "check.crcs=true", "-f", "%o|%k|%s|%T\n"], timeout=60).stdout.decode()
    assert out == "0|k|raw-ok|1700000000000\n1||second|1700000000000\n"
