"""Agent-steps per second: the environments in this process (one environment, and a batch of
worlds stepped in one call into Rust) beside the same control loop over the network with the
network client (the SimRob server over UDP for the SumBot, the Mobile Robot Simulator over
TCP for the Nomad). A benchmark, not a test: it prints a Markdown table with wall and
processor seconds (the network rows count the server's too) and what the runs did.

    python python/benchmarks/agent_steps.py [--steps N] [--simrob PATH/TO/simrob]

The network runs need a ``simrob`` binary (``--simrob``, ``SIMROB_BIN`` or the PATH; build it
with ``cargo build --release``); without one they are left out.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import simrob  # noqa: F401  (registers the environments)
from simrob import sim
from simrob.pettingzoo import drones, futrob

REPO = Path(__file__).resolve().parents[2]
ROWS: list[tuple] = []


def cpu_seconds() -> float:
    """Processor seconds of this process and of its finished children (a server it ran)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(label: str, mode: str, agent_steps_fn):
    w0, c0 = time.perf_counter(), cpu_seconds()
    agent_steps, outcome = agent_steps_fn()
    wall, cpu = time.perf_counter() - w0, cpu_seconds() - c0
    ROWS.append((label, mode, agent_steps, wall, cpu, agent_steps / wall, agent_steps / cpu, outcome))
    print(f"  {label:<18} {mode:<26} {agent_steps / cpu:>12,.0f} agent-steps/s of processor time ({outcome})", flush=True)


def single(env_id: str, steps: int):
    def run():
        env = gym.make(env_id)
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        actions = rng.uniform(-1, 1, size=(1024, 2)).astype(np.float32)
        episodes = reached = 0
        for k in range(steps):
            _, _, term, trunc, _ = env.step(actions[k % 1024])
            if term or trunc:
                episodes += 1
                reached += int(term)
                env.reset()
        env.close()
        return steps, f"{episodes} episodes ended, {reached} terminated"
    return run


def batch(env_id: str, steps: int, n: int):
    def run():
        envs = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
        envs.reset(seed=0)
        rng = np.random.default_rng(0)
        actions = rng.uniform(-1, 1, size=(16, n, 2))
        ended = 0
        rounds = max(1, steps // n)
        for k in range(rounds):
            _, _, term, trunc, _ = envs.step(actions[k % 16])
            ended += int(term.sum() + trunc.sum())
        envs.close()
        return rounds * n, f"{ended} episodes ended"
    return run


def swarm(steps: int, n: int):
    def run():
        env = drones.parallel_env(n=n)
        obs, _ = env.reset(seed=0)
        done = 0
        arrived = crashed = 0
        while done < steps:
            if not env.agents:
                obs, _ = env.reset()
            actions = {a: np.clip(obs[a][:2] * 4.0, -1, 1) for a in env.agents}
            done += len(actions)
            obs, _, _, _, info = env.step(actions)
            arrived += sum(i["arrived"] for i in info.values())
            crashed += sum(i["crashed"] for i in info.values())
        env.close()
        return done, f"{arrived} arrived, {crashed} crashed"
    return run


def team(steps: int, per_team: int):
    """FutRob's team task, both teams agents choosing random FutRob actions (a step is
    200 simulated ms: 20 physics iterations of every humanoid, camera and brain)."""

    def run():
        env = futrob.parallel_env(players_per_team=per_team)
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        done = goals = 0
        while done < steps:
            if not env.agents:
                env.reset()
            actions = {a: int(rng.integers(len(futrob.ACTIONS))) for a in env.agents}
            done += len(actions)
            _, _, term, _, _ = env.step(actions)
            goals += int(any(term.values()))
        env.close()
        return done, f"{goals} goals, {done // (2 * per_team) * 0.2:.0f} simulated s"
    return run


def sumbot_udp(binary: str, steps: int):
    from simrob import Agent, server

    def run():
        with server.serve("--scenario", str(REPO / "scenarios" / "soccer.xml")) as p:
            with Agent(p.address) as agent:
                agent.register("bench", sync=True)
                agent.set_sync_mode(True)
                agent.initialize()
                rng = np.random.default_rng(0)
                actions = rng.uniform(-1, 1, size=(1024, 2)) * 30.0
                count = 0

                def act(b, a):
                    nonlocal count
                    robot, ball = b.entity(3), b.entity(8)
                    math.hypot(ball.position[0] - robot.position[0], ball.position[1] - robot.position[1])
                    l, r = actions[count % 1024]
                    a.motors(3, {0: float(l), 1: float(r)}, confirm=False)
                    count += 1
                    return count < steps

                agent.lockstep(act, max_iterations=steps + 10)
        return count, "lockstep, one iteration per step"
    return run


def nomad_tcp(binary: str, steps: int):
    from simrob import MrsClient, server

    def run():
        with server.mrs("--map", str(REPO / "maps" / "example.txt"), "--stepped") as p:
            with MrsClient(p.address) as robot:
                rng = np.random.default_rng(0)
                actions = rng.uniform(-1, 1, size=(1024, 2))
                for k in range(steps):
                    sonars = robot.get_sonars()
                    bumpers = robot.get_bumpers()
                    del sonars, bumpers
                    f, t = actions[k % 1024]
                    robot.set_vel(24.0 * f, 60.0 * t)
                    robot.step(10)
        return steps, "stepped server, sonars + bumpers + velocity + #STEP per step"
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20000, help="the scale of the in-process runs, in agent-steps: the SumBot's single env runs a quarter of it, the Nomad's batch and the drones five times it, the FutRob team a twentieth (their steps cost that differently); the other runs N each")
    ap.add_argument("--net-steps", type=int, default=2000, help="agent-steps per network run")
    ap.add_argument("--batch", type=int, default=64, help="worlds in a batch")
    ap.add_argument("--drones", type=int, default=100, help="drones in the swarm environment")
    ap.add_argument("--simrob", default=os.environ.get("SIMROB_BIN") or shutil.which("simrob"))
    args = ap.parse_args()

    print("SumBot")
    timed("SumBotBall-v0", "in-process, 1 env", single("simrob/SumBotBall-v0", args.steps // 4))
    timed("SumBotBall-v0", f"in-process, batch of {args.batch}", batch("simrob/SumBotBall-v0", args.steps, args.batch))
    print("Nomad")
    timed("Nomad-v0", "in-process, 1 env", single("simrob/Nomad-v0", args.steps))
    timed("Nomad-v0", f"in-process, batch of {args.batch}", batch("simrob/Nomad-v0", args.steps * 5, args.batch))
    print("Drones")
    timed("drones (PettingZoo)", f"in-process, {args.drones} agents", swarm(args.steps * 5, args.drones))
    print("FutRob team")
    timed("futrob (PettingZoo)", "in-process, 2 vs 2 agents", team(args.steps // 20, 2))
    binary = args.simrob
    if binary and Path(binary).is_file():
        os.environ["SIMROB_BIN"] = str(Path(binary).resolve())
        print("Network")
        timed("SumBotBall-v0", "UDP, network client", sumbot_udp(binary, args.net_steps))
        timed("Nomad-v0", "TCP, network client", nomad_tcp(binary, args.net_steps))
    else:
        print("(no simrob binary: the network runs are left out)")

    print()
    print(f"load average {os.getloadavg()[0]:.1f}; {platform.node()}: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print()
    print("| environment | loop | agent-steps | wall s | processor s | agent-steps/s (wall) | agent-steps/s (processor) | outcome |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for label, mode, n, wall, cpu, ws, cs, outcome in ROWS:
        print(f"| {label} | {mode} | {n:,} | {wall:.2f} | {cpu:.2f} | {ws:,.0f} | {cs:,.0f} | {outcome} |")


if __name__ == "__main__":
    main()
