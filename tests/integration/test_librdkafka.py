"""rdkafka_roundtrip (librdkafka C API) against Samsa: 100,000 records over
4 partitions, verified exactly (content, offsets, order, high watermarks):
fresh, after a clean restart, and after kill -9 + restart."""

from clients import rdkafka_roundtrip

RECORDS = 100000


def test_fresh_then_clean_restart_then_kill9(broker):
    out = rdkafka_roundtrip(broker.bootstrap, "rt", records=RECORDS, create=True)
    assert f"verified {RECORDS} records" in out
    broker.restart()
    assert f"verified {RECORDS} records" in rdkafka_roundtrip(
        broker.bootstrap, "rt", mode="consume", records=RECORDS)
    broker.kill9_restart()
    assert f"verified {RECORDS} records" in rdkafka_roundtrip(
        broker.bootstrap, "rt", mode="consume", records=RECORDS)


def test_acknowledged_records_survive_kill9(broker):
    """Everything acknowledged (acks=all) before the kill is there after it."""
    rdkafka_roundtrip(broker.bootstrap, "acked", mode="produce", records=RECORDS,
                      compression="zstd", create=True)
    broker.kill9_restart()
    assert f"verified {RECORDS} records" in rdkafka_roundtrip(
        broker.bootstrap, "acked", mode="consume", records=RECORDS)
