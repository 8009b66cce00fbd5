"""A Nomad-200 against a real, stepped `simrob mrs`."""

import pytest

from simrob import MrsClient, MrsError
from simrob.server import Process


def test_the_simulators_calls(mrs_sim: Process) -> None:
    with MrsClient(mrs_sim.address) as robot:
        robot.place(150, 150, 0)
        assert robot.get_pos() == (150.0, 150.0, 0.0)
        sonars = robot.get_sonars()
        assert len(sonars) == 16 and all(5 <= s <= 110 for s in sonars)
        assert robot.get_sonar(0) == sonars[0]
        assert robot.get_bumper() is False and robot.get_bumper_rel() is None
        robot.set_vel(10, 0)
        t = robot.step(100)  # 100 steps of 10 ms: 1 s at 10 in/s
        assert t == pytest.approx(1.0)
        x, y, heading = robot.get_pos()
        assert x == pytest.approx(160.0, abs=0.2) and y == pytest.approx(150.0, abs=0.2)
        robot.stop()
        robot.message("hello from Python")


def test_bad_requests_raise_with_the_servers_reason(mrs_sim: Process) -> None:
    with MrsClient(mrs_sim.address) as robot:
        with pytest.raises(ValueError):
            robot.get_sonar(16)
        with pytest.raises(MrsError) as e:
            robot.request("S99")
        assert "sonar" in str(e.value)
        assert robot.get_pos()  # the connection stays usable


def test_driving_into_a_wall_closes_a_bumper(mrs_sim: Process) -> None:
    with MrsClient(mrs_sim.address) as robot:
        robot.place(150, 150, 0)
        ahead = robot.get_sonar(0)
        robot.set_vel(50, 0)
        for _ in range(100):
            robot.step(10)
            if robot.get_bumper():
                break
        assert robot.get_bumper(), f"no bumper after driving {ahead} in"
        assert robot.get_bumper_rel() is not None
