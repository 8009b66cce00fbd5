"""Receiving datagrams with a deadline, as the SimRob agent and the soccer team listener do."""

from __future__ import annotations

import socket
import time
from typing import Any, Optional, Tuple


def recvfrom_before(sock: socket.socket, deadline: float, size: int) -> Optional[Tuple[bytes, Any]]:
    """The next datagram on ``sock`` (at most ``size`` bytes) and its sender, or None once
    ``deadline`` (a ``time.monotonic()`` time) has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        return None
    sock.settimeout(left)
    try:
        return sock.recvfrom(size)
    except socket.timeout:
        return None
