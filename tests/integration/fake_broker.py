#!/usr/bin/python3
"""A stand-in for `samsa server`, used only by test_harness.py to check the
harness itself (start, readiness, restart, kill -9, stop, logs) without
depending on the real broker. Takes the same `server --override k=v`
arguments; understands listeners and log.dirs, and three of its own:
fake.exit.status=N (exit at once), fake.ignore.sigterm=true, and
fake.ready.delay.ms=N (listen only after N ms). Answers every request with
an empty ApiVersions v0 response. Bounded: exits by itself after 300 s.
"""

import os
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_wire  # noqa: E402


def parse(argv):
    if len(argv) < 2 or argv[1] != "server":
        sys.exit("usage: fake_broker.py server --override key=value ...")
    settings = {}
    args = argv[2:]
    for i in range(0, len(args) - 1, 2):
        if args[i] != "--override":
            sys.exit(f"unexpected argument {args[i]}")
        key, value = args[i + 1].split("=", 1)
        settings[key] = value
    return settings


def serve(conn):
    with conn:
        conn.settimeout(30)
        try:
            while True:
                head = kafka_wire.recv_exact(conn, 4, 30)
                if head is None:
                    return
                size = int.from_bytes(head, "big", signed=True)
                payload = kafka_wire.recv_exact(conn, size, 30)
                if payload is None:
                    return
                correlation_id = payload[4:8]
                conn.sendall(kafka_wire.frame(correlation_id + b"\x00\x00" + b"\x00\x00\x00\x00"))
        except (OSError, TimeoutError):
            return


def main():
    settings = parse(sys.argv)
    print(f"fake broker starting with {settings}", file=sys.stderr, flush=True)
    if "fake.exit.status" in settings:
        print("fake broker: failing on purpose", file=sys.stderr, flush=True)
        sys.exit(int(settings["fake.exit.status"]))
    if settings.get("fake.ignore.sigterm") == "true":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    time.sleep(int(settings.get("fake.ready.delay.ms", "0")) / 1000)
    with open(os.path.join(settings["log.dirs"], "starts"), "a") as f:
        f.write(f"{os.getpid()}\n")
    host_port = settings["listeners"].split("://", 1)[1]
    host, port = host_port.rsplit(":", 1)
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, int(port)))
    server.listen()
    server.settimeout(1)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            conn, _ = server.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
