"""A TCP proxy on 127.0.0.1 in front of a real server, that can break connections on cue.

``drop_next_reply()`` arms it: the next bytes the server sends on any connection are thrown
away and that connection is closed, so the client has sent its request and the server has
acted on it (a PostgreSQL statement committed) but the client never hears so;
``drop_reply_to(b"COMMIT")`` does the same to the first reply after a client message holding
those bytes. ``down`` refuses new connections (closed at once) while set, as an unreachable
server does. ``sent`` holds every byte clients sent, to tell what went over the wire.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

__all__ = ["TcpProxy"]


class TcpProxy:
    """Forwards ``127.0.0.1:<port>`` to ``host:target_port``, one thread per direction."""

    def __init__(self, host: str, target_port: int) -> None:
        self.target = (host, target_port)
        self.down = False
        #: connections clients opened (refused ones too, while ``down``)
        self.connections = 0
        self.dropped = threading.Event()
        #: every byte the clients sent, in order
        self.sent = bytearray()
        self._armed = threading.Event()
        self._arm_on: bytes | None = None
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._closing = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def drop_next_reply(self) -> None:
        """Drop the next server reply and close its connection (see the module)."""
        self.dropped.clear()
        self._armed.set()

    def drop_reply_to(self, marker: bytes) -> None:
        """Drop the first server reply after a client message holding ``marker`` (e.g. the
        reply to ``COMMIT``: the server committed, the client never hears so)."""
        self.dropped.clear()
        self._arm_on = marker

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            if self.down:
                client.close()
                continue
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            threading.Thread(target=self._pipe, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, True), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, replies: bool) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if not replies:
                    self.sent += data
                    if self._arm_on is not None and self._arm_on in data:
                        self._arm_on = None
                        self._armed.set()
                elif self._armed.is_set():
                    self._armed.clear()
                    self.dropped.set()
                    break
                sink.sendall(data)
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self._closing = True
        self._listener.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
