"""kcat (librdkafka 2.0.2) against Samsa: produce and consume every codec,
several partitions, exact content and per-partition order, before and
after a clean restart."""

import pytest

from clients import CODECS, create_topic, kcat_consume, kcat_roundtrip, keyed_lines


@pytest.mark.parametrize("codec", CODECS)
def test_kcat_roundtrip(broker, codec):
    topic = f"kcat-{codec}"
    create_topic(broker.bootstrap, topic, 3)
    kcat_roundtrip(broker.bootstrap, topic, 3, codec, per_partition=500)
    broker.restart()
    for p in range(3):
        got = kcat_consume(broker.bootstrap, topic, p)
        assert [text for _, text in got] == keyed_lines(codec, p, 500), f"partition {p} after restart"
