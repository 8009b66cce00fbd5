"""FutRob team messages: the 16-byte codec, a spy that listens on the team port, and a
sender. The wire format is four little-endian 32-bit signed integers — source id,
destination id (255 = every robot), param, value — exactly 16 bytes; anything else is refused."""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass
from enum import IntEnum
from typing import Optional, Tuple, Union

from ._udp import recvfrom_before

MESSAGE_LEN = 16
BROADCAST = 255
DEFAULT_PORT = 10020
"""The team-message UDP port FutRob robots use unless configured otherwise."""

_FORMAT = struct.Struct("<4i")


class Param(IntEnum):
    """What a message says (its value's meaning in the comment)."""

    START = 1  # the sender started (role)
    ROLE = 2  # 1 = goalkeeper, 2 = field player
    BALL_IN_SIGHT = 3  # 0/1
    BALL_DISTANCE = 4  # cm
    ASK_ROLE = 5  # "what is your role?"
    GK_POS_X = 6  # keeper's offset from the goal centre, cm
    GK_POS_Y = 7  # keeper's distance out from the goal line, cm
    EXIT = 8  # internal: unblocks a receiver
    BALL_IS_MINE = 9  # 0/1
    PARTNER_DISTANCE = 10  # cm, -1 = not in sight
    OPPONENT_DISTANCE = 11  # cm, -1 = not in sight
    MY_GOAL_DISTANCE = 12  # cm, -1 = not in sight
    OPP_GOAL_DISTANCE = 13  # cm, -1 = not in sight
    LEAVE = 14  # the sender leaves the game
    ACTION_TAKEN = 20  # the action the sender decided (action code)

    @property
    def wire_name(self) -> str:
        return f"COMM_PARAM_{self.name}"

    @classmethod
    def parse(cls, text: Union[str, int]) -> "Param":
        """A param from its code (``20``) or name (``ACTION_TAKEN``, ``COMM_PARAM_ACTION_TAKEN``)."""
        if isinstance(text, int) or str(text).strip().lstrip("-").isdigit():
            return cls(int(text))
        name = str(text).strip().upper()
        return cls[name[len("COMM_PARAM_"):] if name.startswith("COMM_PARAM_") else name]


class MessageError(ValueError):
    """A datagram that is not a team message."""


@dataclass(frozen=True)
class TeamMessage:
    source: int
    destination: int
    param: Param
    value: int

    def encode(self) -> bytes:
        return _FORMAT.pack(self.source, self.destination, int(self.param), self.value)

    @classmethod
    def decode(cls, data: bytes) -> "TeamMessage":
        if len(data) != MESSAGE_LEN:
            raise MessageError(f"a team message is {MESSAGE_LEN} bytes, this one {len(data)}")
        source, destination, code, value = _FORMAT.unpack(data)
        try:
            param = Param(code)
        except ValueError:
            raise MessageError(f"unknown param {code}") from None
        return cls(source, destination, param, value)

    def is_for(self, robot: int) -> bool:
        """Would robot ``robot`` accept it (addressed to it or to everyone, not its own)?"""
        return self.source != robot and self.destination in (robot, BROADCAST)

    def __str__(self) -> str:
        to = "all" if self.destination == BROADCAST else str(self.destination)
        return f"{self.source} -> {to}: {self.param.wire_name} = {self.value}"


def team_socket(port: int = DEFAULT_PORT, host: str = "0.0.0.0") -> socket.socket:
    """A UDP socket on the team port that other processes on this machine can share."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if hasattr(socket, "SO_REUSEPORT"):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    s.bind((host, port))
    return s


class Spy:
    """Listens on the team port and hands out every team message (or those robot ``as_robot``
    would accept). Datagrams that are not team messages are counted in :attr:`rejected`."""

    def __init__(self, port: int = DEFAULT_PORT, as_robot: Optional[int] = None, host: str = "0.0.0.0") -> None:
        self.sock = team_socket(port, host)
        self.as_robot = as_robot
        self.rejected = 0

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def recv(self, timeout: float = 2.0) -> Optional[Tuple[TeamMessage, Tuple[str, int]]]:
        """The next message and its sender, or None after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            got = recvfrom_before(self.sock, deadline, 64)
            if got is None:
                return None
            data, sender = got
            try:
                m = TeamMessage.decode(data)
            except MessageError:
                self.rejected += 1
                continue
            if self.as_robot is None or m.is_for(self.as_robot):
                return m, sender

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Spy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def send(message: TeamMessage, port: int = DEFAULT_PORT, to: str = "127.255.255.255") -> None:
    """Sends one team message (to every robot on this machine by default)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        s.sendto(message.encode(), (to, port))
