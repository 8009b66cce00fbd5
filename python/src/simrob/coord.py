"""The General Robot Interface (GRI) of ``simrob coord``: robots and operators talking to the
Control Center and Time Server over TCP, one JSON object per line::

    {"from": 3, "to": 0, "msg": {"kind": "task_state", "robot": 3, "task": 7, ...}}

``from`` is the sender's id (0 = Control Center), ``to`` the receiver's (absent: everyone);
``msg.kind`` names the message (hello, welcome, refused, clock, task, task_state, status,
announce, bid, award, accept, decline, cancel, abort, clear, operator, report). Times are the
Time Server's seconds, positions metres. Tasks are ``{"goto": {"x": 1, "y": 2}}``,
``{"path": {"points": [[0, 0], [1, 1]]}}``, ``{"perceive": {"seconds": 2}}`` or
``{"pan_tilt": {"pan": 0.5, "tilt": 0, "seconds": 1}}``. Every message, field, range and
refusal: the documentation's "The coordination protocol (GRI)" (``docs/reference/gri.md``).
"""

from __future__ import annotations

import json
import socket
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, Iterable, List, Optional, Tuple, Union

from .agent import SimRobError, Timeout

CONTROL_CENTER = 0
Envelope = Dict[str, Any]


class CoordError(SimRobError):
    """The Control Center refused a request (``refused``: its reason is the message)."""


class GriConnection:
    """One TCP connection to the Control Center: send messages, receive envelopes. Messages
    that arrive while waiting for something else are kept for :meth:`recv`."""

    def __init__(self, address: Union[str, Tuple[str, int]], timeout: float = 5.0) -> None:
        if isinstance(address, str):
            host, _, port = address.rpartition(":")
            address = (host or "127.0.0.1", int(port))
        self.timeout = timeout
        self._sock = socket.create_connection(address, timeout=timeout)
        self._buf = b""
        self._kept: Deque[Envelope] = deque()

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> "GriConnection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def send(self, sender: int, msg: Dict[str, Any], to: Optional[int] = None) -> None:
        env: Envelope = {"from": sender, "msg": msg}
        if to is not None:
            env["to"] = to
        self._sock.sendall(json.dumps(env, separators=(",", ":")).encode() + b"\n")

    def _read(self, deadline: float) -> Optional[Envelope]:
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._sock.settimeout(left)
            try:
                chunk = self._sock.recv(65536)
            except socket.timeout:
                return None
            if not chunk:
                raise CoordError("the Control Center closed the connection")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        env = json.loads(line)
        if not isinstance(env, dict) or "msg" not in env:
            raise CoordError(f"not a GRI message: {line[:200]!r}")
        return env

    def recv(self, timeout: Optional[float] = None) -> Optional[Envelope]:
        """The next envelope, or None after ``timeout`` seconds."""
        if self._kept:
            return self._kept.popleft()
        return self._read(time.monotonic() + (self.timeout if timeout is None else timeout))

    def wait_for(
        self, kinds: Iterable[str], where: Callable[[Dict[str, Any]], bool] = lambda m: True,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """The next message of one of ``kinds`` that satisfies ``where``, among those kept
        first (others are kept); a ``refused`` raises :class:`CoordError` with the Control
        Center's reason."""
        wanted = set(kinds)
        for i, env in enumerate(self._kept):
            msg = env["msg"]
            if msg.get("kind") in wanted and where(msg):
                del self._kept[i]
                return msg
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        kept: List[Envelope] = []
        try:
            while True:
                env = self._read(deadline)
                if env is None:
                    raise Timeout(f"no {' or '.join(sorted(wanted))} within {limit} s")
                msg = env["msg"]
                if msg.get("kind") == "refused" and "refused" not in wanted:
                    raise CoordError(str(msg.get("reason")))
                if msg.get("kind") in wanted and where(msg):
                    return msg
                kept.append(env)
        finally:
            self._kept.extend(kept)


class Robot(GriConnection):
    """A robot: says hello with its capabilities, then receives tasks, auctions and the
    clock, and reports task states, bids and status."""

    def __init__(
        self, address: Union[str, Tuple[str, int]], robot: int, name: str = "", kind: str = "python",
        world: str = "simrob", capabilities: Iterable[str] = ("movement",), speed: float = 0.3,
        timeout: float = 5.0,
    ) -> None:
        super().__init__(address, timeout)
        self.robot = robot
        self.info = {
            "robot": robot, "name": name or f"robot {robot}", "kind": kind, "world": world,
            "capabilities": list(capabilities), "speed": speed,
        }

    def hello(self) -> None:
        """Joins the team; raises :class:`CoordError` if the Control Center refuses."""
        self.send(self.robot, {"kind": "hello", "info": self.info}, CONTROL_CENTER)
        self.wait_for(["welcome"], lambda m: m.get("robot") == self.robot)

    def bye(self) -> None:
        self.send(self.robot, {"kind": "bye", "robot": self.robot}, CONTROL_CENTER)

    def next_task(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The next task given to this robot (``{"id": …, "kind": {…}, "world": …}``: a task
        carries the world of the robot it was given to, and stays in that world)."""
        return self.wait_for(["task"], timeout=timeout)["task"]

    def task_state(self, task: int, state: str, time_s: float, synced: bool = True, **extra: Any) -> None:
        """Reports ``state`` (queued, running, ended, aborted, failed, blocked) of ``task``."""
        self.send(self.robot, {
            "kind": "task_state", "robot": self.robot, "task": task,
            "state": {"state": state, **extra}, "time": time_s, "synced": synced,
        }, CONTROL_CENTER)

    def bid(self, auction: int, cost: Optional[float]) -> None:
        """Bids ``cost`` in ``auction`` (None refuses)."""
        msg: Dict[str, Any] = {"kind": "bid", "auction": auction, "robot": self.robot}
        if cost is not None:
            msg["cost"] = cost
        self.send(self.robot, msg, CONTROL_CENTER)

    def accept(self, auction: int) -> None:
        self.send(self.robot, {"kind": "accept", "auction": auction, "robot": self.robot}, CONTROL_CENTER)

    def decline(self, auction: int, reason: str) -> None:
        self.send(self.robot, {"kind": "decline", "auction": auction, "robot": self.robot, "reason": reason}, CONTROL_CENTER)


# Log lines an operator that follows the logs receives as reports (not answers).
_LOG_PREFIXES = ("tasks.log\t", "status.log\t", "states.log\t")


class Operator(GriConnection):
    """An operator: sends, submits and announces tasks, aborts and clears them, switches the
    allocation policy, lists robots and tasks. Each request waits for the Control Center's
    answer and returns its text (``task 4 submitted (hungarian)``); an answer ``error: …``
    raises :class:`CoordError` with the reason. Log lines of ``follow`` are kept for
    :meth:`wait_for`."""

    def command(self, op: str, timeout: Optional[float] = None, **fields: Any) -> str:
        """Sends the operator's request ``op`` and returns the Control Center's answer."""
        self.send(CONTROL_CENTER, {"kind": "operator", "command": {"op": op, **fields}}, CONTROL_CENTER)
        answer = self.wait_for(
            ["report"], lambda m: not str(m.get("text", "")).startswith(_LOG_PREFIXES), timeout=timeout
        )
        text = str(answer["text"])
        if text.startswith("error: "):
            raise CoordError(text[len("error: "):])
        return text

    def send_task(self, robot: int, kind: Dict[str, Any], task_id: int = 0, **spec: Any) -> str:
        """Sends a task straight to ``robot`` (``task_id`` 0: the Control Center picks one)."""
        return self.command("send", robot=robot, task={"id": task_id, "kind": kind, **spec})

    def submit(self, kind: Dict[str, Any], task_id: int = 0, **spec: Any) -> str:
        return self.command("submit", task={"id": task_id, "kind": kind, **spec})

    def announce(self, kind: Dict[str, Any], task_id: int = 0, **spec: Any) -> str:
        return self.command("announce", task={"id": task_id, "kind": kind, **spec})

    def abort(self, task: int) -> str:
        return self.command("abort", task=task)

    def clear(self, task: int) -> str:
        return self.command("clear", task=task)

    def mode(self, policy: str) -> str:
        """``cnp``, ``hungarian`` or ``greedy``."""
        return self.command("mode", policy=policy)

    def report(self, op: str, timeout: Optional[float] = None) -> str:
        """Asks ``robots`` or ``tasks`` and returns the report's text."""
        return self.command(op, timeout=timeout)
