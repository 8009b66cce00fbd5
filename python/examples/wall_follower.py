"""A wall follower on the Mobile Robot Simulator: the Nomad-200 keeps the wall on its left at
about 20 inches, using the left sonars (12: 90° to the left, 13, 14: ahead-left) and the one
ahead. The server is stepped, so the run is reproducible.

    python python/examples/wall_follower.py            # starts its own simrob mrs
"""

from __future__ import annotations

from pathlib import Path

from simrob import MrsClient, server

MAP = Path(__file__).resolve().parents[2] / "maps" / "example.txt"
TARGET = 20.0  # inches from the wall
CRUISE = 15.0  # in/s


def follow(robot: MrsClient, cycles: int = 600) -> int:
    """Runs ``cycles`` control cycles of 0.1 s; returns how many found a bumper closed."""
    bumps = 0
    for cycle in range(cycles):
        s = robot.get_sonars()
        front = min(s[15], s[0], s[1])
        left = min(s[12], s[13])
        if front < 25:
            forward, turn = 0.0, 45.0  # wall ahead: turn right on the spot
        elif left > 60:
            forward, turn = CRUISE * 0.6, -30.0  # lost the wall: curve left to find it
        else:
            error = left - TARGET  # positive: too far from the wall
            forward, turn = CRUISE, max(-30.0, min(30.0, -2.0 * error))
        robot.set_vel(forward, turn)
        robot.step(10)
        if robot.get_bumper():
            bumps += 1
        if cycle % 50 == 0:
            x, y, heading = robot.get_pos()
            print(f"t = {cycle / 10:5.1f} s: at ({x:5.1f}, {y:5.1f}) in, heading {heading:5.1f}°, wall {left} in to the left")
    robot.stop()
    return bumps


if __name__ == "__main__":
    with server.mrs("--map", str(MAP), "--stepped") as sim, MrsClient(sim.address) as robot:
        robot.place(40, 150, 270)  # next to the left outer wall, facing up (-y)
        bumps = follow(robot)
        print(f"done: {bumps} cycles with a bumper closed")
