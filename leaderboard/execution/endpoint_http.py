"""One HTTP exchange with a total deadline: connect, request, headers and body, whatever the server does.

:class:`Watchdog` is armed with a request's deadline. The connection (:func:`open_connection`, the standard
library's ``http.client`` with a hook after the TCP connect) hands it its socket before anything else is
sent — before a TLS handshake too — and the watchdog keeps its own duplicate of the descriptor. At the
deadline a thread shuts that socket down (``SHUT_RDWR``): any read or write blocked on it, in the handshake,
the status line, the headers or the body, returns at once, so a server that drips bytes, accepts and never
answers, or streams without end cannot stretch the deadline. :func:`time_left` also sets the socket's
timeout to the time left before each step.

Invariants: the watchdog shuts down only its own duplicate, which it closes in :meth:`Watchdog.stop`, so
it never touches a descriptor the process has closed and reused; it never touches a TLS object's state.

Side effects: one daemon thread per request, ended by :meth:`Watchdog.stop` or the deadline.
"""

from __future__ import annotations

import http.client
import os
import socket
import ssl
import threading
import time

__all__ = ["Watchdog", "open_connection", "time_left"]


class Watchdog:
    """Shut a request's socket down at ``deadline`` (module docstring).

    Parameters
    ----------
    deadline : float
        A ``time.monotonic()``.
    """

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.fired = False
        self._done, self._lock = threading.Event(), threading.Lock()
        self._sock: socket.socket | None = None
        threading.Thread(target=self._watch, name="endpoint-watchdog", daemon=True).start()

    def arm(self, sock: socket.socket) -> None:
        """Watch ``sock`` (a connected socket), shutting it down at once when the deadline has passed."""
        with self._lock:
            if self._done.is_set():
                return
            self._sock = socket.socket(fileno=os.dup(sock.fileno()))
            if self.fired:
                self._shut_down()

    def _watch(self) -> None:
        if self._done.wait(max(0.0, self.deadline - time.monotonic())):
            return
        with self._lock:
            if not self._done.is_set():
                self.fired = True
                self._shut_down()

    def _shut_down(self) -> None:
        try:
            if self._sock is not None:
                self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # not connected any more: nothing to cut
            pass

    def stop(self) -> None:
        """End the watch (the request is over) and close the duplicate descriptor."""
        with self._lock:
            self._done.set()
            if self._sock is not None:
                self._sock.close()
                self._sock = None


class _Connection(http.client.HTTPConnection):
    watchdog: Watchdog

    def connect(self) -> None:
        super().connect()
        self.watchdog.arm(self.sock)


class _TLSConnection(http.client.HTTPSConnection):
    watchdog: Watchdog

    def connect(self) -> None:  # HTTPSConnection.connect without a proxy tunnel (none is ever used)
        http.client.HTTPConnection.connect(self)
        self.watchdog.arm(self.sock)  # before the handshake: a dripped handshake is cut as well
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self.host)  # type: ignore[attr-defined]


def open_connection(
    https: bool, host: str, port: int | None, timeout: float, watchdog: Watchdog
) -> http.client.HTTPConnection:
    """Return an unconnected ``http.client`` connection whose socket ``watchdog`` watches from its connect."""
    conn: _Connection | _TLSConnection
    if https:
        conn = _TLSConnection(host, port, timeout=timeout, context=ssl.create_default_context())
    else:
        conn = _Connection(host, port, timeout=timeout)
    conn.watchdog = watchdog
    return conn


def time_left(conn: http.client.HTTPConnection, deadline: float, timeout: float) -> None:
    """Set the socket's timeout to the time left before ``deadline``; raise :class:`TimeoutError` at it."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError(f"no complete response within {timeout:g} s (connect, headers and body)")
    if conn.sock is not None:
        conn.sock.settimeout(remaining)
