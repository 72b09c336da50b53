"""One HTTP exchange with a total deadline: connect, request, headers and body, whatever the server does.

:class:`Watchdog` is armed with a request's deadline. The connection (:func:`open_connection`, the standard
library's ``http.client`` with a hook after the TCP connect) hands it its socket before anything else is
sent — before a TLS handshake too — and the watchdog keeps its own duplicate of the descriptor. At the
deadline a thread shuts that socket down (``SHUT_RDWR``): any read or write blocked on it, in the handshake,
the status line, the headers or the body, returns at once, so a server that drips bytes, accepts and never
answers, or streams without end cannot stretch the deadline. :func:`time_left` also sets the socket's
timeout to the time left before each step.

Name resolution is the one step no socket exists for yet: :func:`resolve` runs ``getaddrinfo`` in a
daemon thread and waits for it only until the deadline, so a resolver that never answers costs the
request's ``timeout_s``, not the resolver's own timeouts. The caller pins the address it returns: every
later request of the run connects to that address (the ``Host`` header and the TLS server name stay the
URL's name), so a name cannot resolve elsewhere in the middle of a run.

Invariants: the watchdog shuts down only its own duplicate, which it closes in :meth:`Watchdog.stop`, so
it never touches a descriptor the process has closed and reused; it never touches a TLS object's state.

Side effects: one daemon thread per request, ended by :meth:`Watchdog.stop` or the deadline; one per
resolution, which a resolver that never answers leaves behind (blocked in ``getaddrinfo``, holding nothing).
"""

from __future__ import annotations

import http.client
import ipaddress
import os
import socket
import ssl
import threading
import time

__all__ = ["Watchdog", "open_connection", "resolve", "time_left"]


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


def resolve(host: str, port: int, deadline: float) -> str:
    """Return the first address ``host`` resolves to, waiting for the resolver no later than ``deadline``.

    Parameters
    ----------
    host : str
        A name or an IP address literal (returned as it is, without a lookup).
    port : int
        The port (``getaddrinfo`` wants it; it does not change the address).
    deadline : float
        A ``time.monotonic()``.

    Returns
    -------
    str
        An IPv4 or IPv6 address.

    Raises
    ------
    TimeoutError
        If the resolver has not answered by ``deadline`` (its thread is left to end on its own).
    OSError
        If the name does not resolve.
    """
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        pass
    found: dict[str, object] = {}
    done = threading.Event()

    def lookup() -> None:
        try:
            found["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            found["error"] = exc
        finally:
            done.set()

    threading.Thread(target=lookup, name="endpoint-resolve", daemon=True).start()
    if not done.wait(max(0.0, deadline - time.monotonic())):
        raise TimeoutError(f"the name {host[:100]!r} did not resolve in time")
    if "error" in found:
        raise found["error"]  # type: ignore[misc]
    infos = found["infos"]
    if not infos:  # type: ignore[truthy-bool]
        raise OSError(f"the name {host[:100]!r} resolves to no address")
    return str(infos[0][4][0])  # type: ignore[index]


class _Connection(http.client.HTTPConnection):
    watchdog: Watchdog
    address: str

    def connect(self) -> None:  # HTTPConnection.connect to the pinned address (no tunnel is ever used)
        self.sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.watchdog.arm(self.sock)


class _TLSConnection(http.client.HTTPSConnection):
    watchdog: Watchdog
    address: str

    def connect(self) -> None:
        _Connection.connect(self)  # type: ignore[arg-type]
        # Armed before the handshake (a dripped handshake is cut as well); the certificate is checked
        # against the URL's name, not the address.
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self.host)  # type: ignore[attr-defined]


def open_connection(
    https: bool, host: str, port: int | None, timeout: float, watchdog: Watchdog, address: str | None = None
) -> http.client.HTTPConnection:
    """Return an unconnected ``http.client`` connection whose socket ``watchdog`` watches from its connect.

    ``address`` (from :func:`resolve`) is where it connects; ``host`` names the server in the ``Host``
    header and the TLS handshake. Without ``address`` the host itself is connected to (an IP literal, or
    a name the system resolves without a deadline: for callers that resolved nothing).
    """
    conn: _Connection | _TLSConnection
    if https:
        conn = _TLSConnection(host, port, timeout=timeout, context=ssl.create_default_context())
    else:
        conn = _Connection(host, port, timeout=timeout)
    conn.watchdog = watchdog
    conn.address = address or conn.host
    return conn


def time_left(conn: http.client.HTTPConnection, deadline: float, timeout: float) -> None:
    """Set the socket's timeout to the time left before ``deadline``; raise :class:`TimeoutError` at it."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError(f"no complete response within {timeout:g} s (connect, headers and body)")
    if conn.sock is not None:
        conn.sock.settimeout(remaining)
