"""The examples run against the real binary and do what they say."""

import sys
from pathlib import Path

from simrob import MrsClient, server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import sumbot_lockstep  # noqa: E402
import wall_follower  # noqa: E402


def test_the_lockstep_sumbot_reaches_the_ball(sim: server.Process) -> None:
    assert sumbot_lockstep.drive(sim.address, limit=3000) <= sumbot_lockstep.TOUCH


def test_the_lockstep_sumbot_runs_twice_against_one_server(sim: server.Process) -> None:
    # A researcher runs the controller again against the server that keeps running: the
    # first run unregistered when it stopped, the second registers and drives again.
    for _ in range(2):
        assert sumbot_lockstep.drive(sim.address, limit=3000) <= sumbot_lockstep.TOUCH


def test_the_wall_follower_never_bumps(mrs_sim: server.Process) -> None:
    with MrsClient(mrs_sim.address) as robot:
        robot.place(40, 150, 270)
        start = robot.get_pos()
        assert wall_follower.follow(robot, cycles=300) == 0
        x, y, _ = robot.get_pos()
        assert abs(x - start[0]) + abs(y - start[1]) > 50, "it went somewhere"
