"""One consumer-group member in its own process (for kill -9 tests).

Usage: group_worker.py BOOTSTRAP TOPIC GROUP OUT_FILE [key=value librdkafka settings...]

Writes one line per record, "partition offset value", flushed before the
offset is stored for commit (so a kill -9 can cause redelivery, never a
skip), and "# assigned p,p,..." / "# revoked ..." lines on rebalances.
SIGTERM closes the consumer cleanly (LeaveGroup for dynamic members).
"""

import signal
import sys

from confluent_kafka import Consumer, KafkaException


def main():
    bootstrap, topic, group, out_path = sys.argv[1:5]
    settings = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.offset.store": False,
        "auto.commit.interval.ms": 200,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
    }
    for kv in sys.argv[5:]:
        key, value = kv.split("=", 1)
        settings[key] = value
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    out = open(out_path, "a", buffering=1)

    def on_assign(consumer, partitions):
        out.write("# assigned " + ",".join(str(p.partition) for p in partitions) + "\n")

    def on_revoke(consumer, partitions):
        out.write("# revoked " + ",".join(str(p.partition) for p in partitions) + "\n")

    consumer = Consumer(settings)
    consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    while not stopping:
        msgs = consumer.consume(num_messages=1000, timeout=0.2)
        lines = []
        for m in msgs:
            if m.error():
                if m.error().fatal():
                    raise KafkaException(m.error())
                continue
            lines.append(f"{m.partition()} {m.offset()} {m.value().decode()}\n")
        if lines:
            out.write("".join(lines))
            out.flush()
            for m in msgs:
                if not m.error():
                    consumer.store_offsets(message=m)
    consumer.close()
    out.write("# closed\n")
    out.close()


if __name__ == "__main__":
    main()
