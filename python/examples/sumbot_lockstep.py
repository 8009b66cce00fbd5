"""A lockstep SumBot controller: the server waits for this agent every iteration, so the run
is the same whatever the machine's load. The SumBot (entity 3) turns towards the ball
(entity 8) and drives until it touches it.

    python python/examples/sumbot_lockstep.py            # starts its own simrob serve
    python python/examples/sumbot_lockstep.py 127.0.0.1:5005
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Tuple

from simrob import Agent, Broadcast, server

ROBOT, BALL, TOUCH = 3, 8, 0.09  # entity ids; metres
SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "soccer.xml"


def steer(robot: Tuple[float, float], yaw: float, ball: Tuple[float, float]) -> Tuple[float, float]:
    """Wheel speeds (rad/s) towards the ball: the SumBot drives along its local -X."""
    heading = yaw + math.pi
    bearing = math.atan2(ball[1] - robot[1], ball[0] - robot[0])
    error = (bearing - heading + math.pi) % (2 * math.pi) - math.pi
    turn = 3.0 if abs(error) > 2.5 else max(-3.0, min(3.0, -3.0 * error))
    ahead = 6.0 * max(0.0, math.cos(error))
    return ahead + turn, ahead - turn


def drive(address: Tuple[str, int], limit: int = 3000) -> float:
    with Agent(address) as agent:
        print(agent.register("python-driver", sync=True))
        agent.set_sync_mode(True)
        agent.initialize()
        distance = math.inf

        def act(b: Broadcast, a: Agent) -> bool:
            nonlocal distance
            robot, ball = b.entity(ROBOT), b.entity(BALL)
            distance = math.hypot(ball.position[0] - robot.position[0], ball.position[1] - robot.position[1])
            if b.iteration % 100 == 0:
                print(f"iteration {b.iteration:5}: robot at ({robot.position[0]:6.3f}, {robot.position[1]:6.3f}), {distance:.3f} m from the ball")
            if distance <= TOUCH:
                return False
            left, right = steer(robot.position[:2], robot.rotation[2], ball.position[:2])
            a.motors(ROBOT, {0: left, 1: right}, confirm=False)
            return True

        last = agent.lockstep(act, max_iterations=limit)
        print(f"{'touched' if distance <= TOUCH else 'did not reach'} the ball at iteration {last} ({distance:.3f} m)")
        return distance


if __name__ == "__main__":
    if len(sys.argv) > 1:
        host, _, port = sys.argv[1].rpartition(":")
        drive((host, int(port)))
    else:
        with server.serve("--scenario", str(SCENARIO)) as sim:
            drive(sim.address)
