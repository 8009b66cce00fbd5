"""A Nomad-200 robot on the Mobile Robot Simulator (TCP, one line per message).

Units are the simulator's: inches, degrees, y pointing down, a positive turn rate turning
right. Each method sends one request line and reads its one reply line; a reply ``E …`` raises
:class:`MrsError` with the server's explanation.
"""

from __future__ import annotations

import socket
from typing import Any, List, Optional, Tuple, Union

from .agent import SimRobError, Timeout

SONARS = 16
BUMPERS = 20
MAX_VEL = 99.9


class MrsError(SimRobError):
    """The server answered ``E <what was wrong>``, or a reply had an unexpected shape."""


def _field(tenths: int) -> str:
    return ("-" if tenths < 0 else "+") + f"{abs(tenths):03d}"


def _pos_field(s: str) -> float:
    return int(s) / 10.0


class MrsClient:
    """One robot: a TCP connection to ``simrob mrs``."""

    def __init__(self, address: Union[str, Tuple[str, int]] = ("127.0.0.1", 7020), timeout: float = 5.0) -> None:
        if isinstance(address, str):
            host, _, port = address.rpartition(":")
            address = (host or "127.0.0.1", int(port))
        self._sock = socket.create_connection(address, timeout=timeout)
        self._file = self._sock.makefile("rwb")

    def close(self) -> None:
        self._file.close()
        self._sock.close()

    def __enter__(self) -> "MrsClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def request(self, line: str) -> str:
        """Sends one request line and returns the reply line (without its newline)."""
        self._file.write(line.encode() + b"\n")
        self._file.flush()
        try:
            reply = self._file.readline()
        except socket.timeout:
            raise Timeout(f"no reply to {line!r}") from None
        if not reply:
            raise MrsError(f"the server closed the connection after {line!r}")
        text = reply.decode().rstrip("\r\n")
        if text.startswith("E "):
            raise MrsError(text[2:])
        return text

    def _expect(self, line: str, reply: str) -> None:
        got = self.request(line)
        if got != reply:
            raise MrsError(f"{line!r}: expected {reply!r}, got {got!r}")

    def set_vel(self, forward: float, turn: float) -> None:
        """Forward speed (in/s) and turn rate (deg/s, positive = right), each ±99.9."""
        tenths = [int(round(max(-MAX_VEL, min(MAX_VEL, v)) * 10)) for v in (forward, turn)]
        self._expect("V" + _field(tenths[0]) + _field(tenths[1]), "V")

    def stop(self) -> None:
        self._expect("A", "A")

    def get_sonar(self, i: int) -> int:
        """Sonar ``i`` (0 ahead, then every 22.5° clockwise): inches from the surface."""
        if not 0 <= i < SONARS:
            raise ValueError(f"no sonar {i}: sonars are 0 … 15")
        reply = self.request(f"S{i:02d}")
        if not (reply.startswith(f"S{i:02d}") and len(reply) == 6):
            raise MrsError(f"unexpected sonar reply {reply!r}")
        return int(reply[3:])

    def get_sonars(self) -> List[int]:
        """All 16 sonars at once (simrob's ``#SONARS``)."""
        reply = self.request("#SONARS")
        return [int(v) for v in reply.split()[1:]]

    def get_bumper(self) -> bool:
        """Is any bumper closed?"""
        reply = self.request("B")
        if reply not in ("B0", "B1"):
            raise MrsError(f"unexpected bumper reply {reply!r}")
        return reply == "B1"

    def get_bumper_rel(self) -> Optional[int]:
        """The lowest closed bumper (0 … 19), or None."""
        reply = self.request("R")
        return None if reply == "R-1" else int(reply[1:])

    def get_bumpers(self) -> List[bool]:
        """All 20 bumpers (simrob's ``#BUMPERS``)."""
        return [c == "1" for c in self.request("#BUMPERS").split()[1]]

    def get_pos(self) -> Tuple[float, float, float]:
        """Odometry: x, y (inches), heading (degrees, 0 = +x, clockwise)."""
        reply = self.request("P")
        if not (reply.startswith("P") and len(reply) == 16):
            raise MrsError(f"unexpected position reply {reply!r}")
        b = reply[1:]
        return (_pos_field(b[:5]), _pos_field(b[5:10]), _pos_field(b[10:]))

    def message(self, text: str) -> None:
        """Shows ``text`` on the server."""
        self._expect("M" + text.replace("\n", " "), "M")

    def place(self, x: float, y: float, heading: float) -> None:
        """Moves the robot (simrob's ``#PLACE``)."""
        self._expect(f"#PLACE {x} {y} {heading}", "#PLACE")

    def step(self, n: int = 1) -> float:
        """Stepped servers (``simrob mrs --stepped``): advances ``n`` steps; returns the
        simulated time in seconds."""
        reply = self.request(f"#STEP {int(n)}")
        return float(reply.split()[1])
