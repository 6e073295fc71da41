"""Free loopback ports and readiness waits for local services."""

from __future__ import annotations

import socket
import time
from typing import Callable, Iterable


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    return free_ports(1)[0]


def free_ports(count: int, avoid: Iterable[int] = ()) -> list[int]:
    """``count`` distinct TCP ports on 127.0.0.1 that nothing listens on right now, none of them in ``avoid``.

    The sockets stay bound until all are chosen, so the system cannot hand the same port out twice (one
    :func:`free_port` after another can: a server given a port by its caller and its other ports that way once
    found one of them taken by itself). For a server that listens on several ports.

    >>> a, b = free_ports(2, avoid=[free_port()])
    >>> a != b
    True
    """
    avoided = set(avoid)
    held: list[socket.socket] = []
    chosen: list[int] = []
    try:
        while len(chosen) < count:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            held.append(sock)
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            if port not in avoided:  # (an avoided one stays held, so it is not handed out again)
                chosen.append(port)
    finally:
        for sock in held:
            sock.close()
    return chosen


def wait_until(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.1) -> None:
    """Poll ``condition`` until it is true; raise TimeoutError naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except Exception as exc:  # the service is not up yet; remember why for the error
            last_error = exc
        time.sleep(interval)
    detail = f" (last error: {last_error})" if last_error else ""
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}{detail}")
