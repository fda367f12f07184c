"""CutProxy: a TCP forwarder on 127.0.0.1 that can be cut (every
connection through it closed, new ones closed at once) and healed. Put
between one node and another node's controller listener (each node's own
controller.quorum.voters naming the proxies), it isolates a node's
controller traffic without a network namespace. Threads only; close() stops
them all.
"""

import socket
import threading

from harness import HOST


class CutProxy:
    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.create_server((HOST, 0))
        self.port = self.listener.getsockname()[1]
        self.cut_now = False
        self.lock = threading.Lock()
        self.sockets = set()
        self.closed = False
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def cut(self):
        with self.lock:
            self.cut_now = True
            for s in self.sockets:
                _close(s)
            self.sockets.clear()

    def heal(self):
        with self.lock:
            self.cut_now = False

    def close(self):
        self.closed = True
        self.cut()
        _close(self.listener)
        self.acceptor.join(timeout=5)

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.cut_now:
                    _close(client)
                    continue
            try:
                upstream = socket.create_connection((HOST, self.target_port), timeout=2)
                upstream.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self.lock:
                self.sockets.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        _close(src)
        _close(dst)


def _close(s):
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
