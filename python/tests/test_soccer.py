"""FutRob team messages: the codec, and a spy on a real UDP port."""

import socket
import struct
import subprocess

import pytest

from simrob import soccer
from simrob.server import find_binary
from simrob.soccer import BROADCAST, MessageError, Param, Spy, TeamMessage


def test_the_codec_is_four_little_endian_ints() -> None:
    m = TeamMessage(3, BROADCAST, Param.ACTION_TAKEN, 19)
    assert m.encode() == struct.pack("<4i", 3, 255, 20, 19)
    assert TeamMessage.decode(m.encode()) == m
    assert TeamMessage.decode(struct.pack("<4i", 1, 2, 10, -1)).value == -1
    with pytest.raises(MessageError):
        TeamMessage.decode(b"\x00" * 15)
    with pytest.raises(MessageError):
        TeamMessage.decode(struct.pack("<4i", 1, 2, 99, 0))
    assert Param.parse("COMM_PARAM_ROLE") is Param.ROLE and Param.parse("20") is Param.ACTION_TAKEN
    assert m.is_for(4) and not m.is_for(3) and not TeamMessage(1, 2, Param.ROLE, 1).is_for(4)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("0.0.0.0", 0))
        return int(s.getsockname()[1])


def test_the_spy_sees_what_is_sent_and_filters_as_a_robot() -> None:
    port = free_port()
    # Two spies share the port, as robots on one machine do; broadcasts reach both.
    with Spy(port) as all_, Spy(port, as_robot=2) as two:
        soccer.send(TeamMessage(1, 3, Param.BALL_DISTANCE, 120), port)
        soccer.send(TeamMessage(1, 2, Param.ROLE, 1), port)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
            s.sendto(b"garbage", ("127.255.255.255", port))
        soccer.send(TeamMessage(1, BROADCAST, Param.LEAVE, 0), port)
        seen = [all_.recv(5.0) for _ in range(3)]
        assert [m.param for m, _ in seen] == [Param.BALL_DISTANCE, Param.ROLE, Param.LEAVE]  # type: ignore[misc]
        assert all_.rejected == 1
        got = [two.recv(5.0) for _ in range(2)]
        assert [m.param for m, _ in got] == [Param.ROLE, Param.LEAVE]  # type: ignore[misc]


def test_messages_from_simrob_soccer_send_msg_decode() -> None:
    binary = find_binary()
    if subprocess.run([binary, "soccer", "--help"], capture_output=True).returncode != 0:
        pytest.skip("this simrob has no soccer subcommand")
    port = free_port()
    with Spy(port) as spy:
        subprocess.run(
            [binary, "soccer", "send-msg", "--src", "4", "--dest", "255", "--param", "ACTION_TAKEN",
             "--value", "19", "--team-port", str(port)],
            check=True, capture_output=True, timeout=30,
        )
        got = spy.recv(5.0)
    assert got is not None and got[0] == TeamMessage(4, BROADCAST, Param.ACTION_TAKEN, 19)
