#!/bin/bash
# Burrow (LinkedIn's lag monitor, Debian package `burrow`) against Samsa:
# Burrow consumes __consumer_offsets itself and decodes Kafka's key/value
# formats, so a correct lag report checks those records byte for byte.
# Burrow 1.2 wants a ZooKeeper for its own bookkeeping (Debian `zookeeper`).
# Everything listens on 127.0.0.1, lives in a temp dir, and is stopped by PID.
#
# Usage: tests/burrow/run_burrow_check.sh [path/to/samsa]   (exit 0 = pass)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SAMSA=${1:-${SAMSA_BIN:-$HERE/../../build/samsa}}
for tool in /usr/bin/Burrow /usr/share/zookeeper/bin/zkServer.sh /usr/bin/java; do
  [ -x "$tool" ] || { echo "missing $tool (install: apt-get install burrow zookeeper)"; exit 1; }
done

WORK=$(mktemp -d /tmp/samsa-burrow.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 300); do
    (echo > /dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "port $1 never opened ($2)"; return 1
}
fail() { echo "FAIL: $1"; for f in "$WORK"/*.log; do echo "--- $f"; tail -40 "$f"; done; exit 1; }

KAFKA_PORT=$(free_port); ZK_PORT=$(free_port); HTTP_PORT=$(free_port)

"$SAMSA" server --override "listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT" --override "log.dirs=$WORK/data" \
  --override group.initial.rebalance.delay.ms=0 --override num.partitions=3 > "$WORK/samsa.log" 2>&1 &
PIDS+=($!)
wait_port "$KAFKA_PORT" samsa || fail "samsa did not start"

cat > "$WORK/zoo.cfg" <<CFG
tickTime=2000
dataDir=$WORK/zk
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok
CFG
mkdir -p "$WORK/zk"
ZOO_LOG_DIR=$WORK ZOO_LOG4J_PROP="INFO,CONSOLE" JVMFLAGS="-Xmx128m" \
  /usr/share/zookeeper/bin/zkServer.sh start-foreground "$WORK/zoo.cfg" > "$WORK/zookeeper.log" 2>&1 &
PIDS+=($!)
# Ready = it answers "ruok" (an open port alone is not enough for Burrow).
zk_ready() {
  /usr/bin/python3 - "$ZK_PORT" <<'PY'
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
    s.sendall(b"ruok")
    sys.exit(0 if s.recv(4) == b"imok" else 1)
except OSError:
    sys.exit(1)
PY
}
for _ in $(seq 300); do zk_ready && break; sleep 0.1; done
zk_ready || fail "zookeeper did not start"

# Burrow's consumer module needs __consumer_offsets to exist when it starts
# (it exits otherwise, against Kafka too). The broker creates it on the first
# group request, as Kafka does: make one (an offset lookup writes nothing).
/usr/bin/python3 - "127.0.0.1:$KAFKA_PORT" <<'PY' || fail "could not create __consumer_offsets"
import sys
from confluent_kafka import Consumer, TopicPartition
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "burrow-check-probe"})
try:
    c.committed([TopicPartition("burrow-check-probe", 0)], timeout=30)
finally:
    c.close()
PY

mkdir -p "$WORK/burrow"
cat > "$WORK/burrow/burrow.toml" <<CFG
[general]
pidfile="$WORK/burrow/burrow.pid"

[logging]
level="info"

[zookeeper]
servers=["127.0.0.1:$ZK_PORT"]
timeout=6
root-path="/burrow"

[client-profile.samsa]
client-id="burrow-samsa"
kafka-version="1.0.0"

[cluster.local]
class-name="kafka"
servers=["127.0.0.1:$KAFKA_PORT"]
client-profile="samsa"
topic-refresh=2
offset-refresh=2

[consumer.local]
class-name="kafka"
cluster="local"
servers=["127.0.0.1:$KAFKA_PORT"]
client-profile="samsa"
offsets-topic="__consumer_offsets"
start-latest=false

[httpserver.default]
address="127.0.0.1:$HTTP_PORT"

[storage.default]
class-name="inmemory"
workers=4
intervals=10
expire-group=604800
min-distance=1
CFG
# Burrow exits if its first ZooKeeper session fails (ZooKeeper may answer
# ruok a moment before it accepts sessions): start it again, a few times.
burrow_up=0
for attempt in 1 2 3 4 5; do
  (cd "$WORK/burrow" && exec /usr/bin/Burrow --config-dir "$WORK/burrow") >> "$WORK/burrow.log" 2>&1 &
  BURROW_PID=$!
  PIDS+=($BURROW_PID)
  for _ in $(seq 100); do
    (echo > /dev/tcp/127.0.0.1/"$HTTP_PORT") 2>/dev/null && { burrow_up=1; break; }
    kill -0 "$BURROW_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ "$burrow_up" = 1 ] && break
  sleep 2
done
[ "$burrow_up" = 1 ] || fail "burrow did not start"
/usr/bin/python3 "$HERE/burrow_check.py" "127.0.0.1:$KAFKA_PORT" "http://127.0.0.1:$HTTP_PORT" || fail "lag report"
# Every offset record must have decoded. (Burrow 1.2 reads GroupMetadataValue
# only up to v1 and warns about the v3 that Kafka >= 2.3 and Samsa write;
# that only loses Burrow's owner column, as it does against Kafka itself.)
if grep -E '"failed to decode"' "$WORK/burrow.log" | grep -v '"message_type":"metadata"'; then
  fail "Burrow could not decode some __consumer_offsets records"
fi
echo "PASS: Burrow reports the group's lag from Samsa's __consumer_offsets"
