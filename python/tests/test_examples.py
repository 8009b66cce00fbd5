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


def test_the_ppo_example_gradients_match_finite_differences() -> None:
    import numpy as np
    import pytest

    pytest.importorskip("gymnasium")
    import ppo_sumbot

    rng = np.random.default_rng(0)
    net = ppo_sumbot.Mlp([5, 7, 6, 3], rng, 1.0)
    x = rng.standard_normal((4, 5))
    w = rng.standard_normal((4, 3))

    def loss() -> float:
        return float((net.forward(x)[0] * w).sum())

    _, acts = net.forward(x)
    grads = net.backward(acts, w)
    for p, g in zip(net.params, grads):
        for idx in [(0,) * p.ndim, tuple(s - 1 for s in p.shape)]:
            old = p[idx]
            p[idx] = old + 1e-6
            up = loss()
            p[idx] = old - 1e-6
            down = loss()
            p[idx] = old
            assert g[idx] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-6)


def test_the_ppo_example_trains_a_few_steps() -> None:
    import math

    import pytest

    pytest.importorskip("gymnasium")
    import ppo_sumbot

    rows = ppo_sumbot.train(1, 2048, num_envs=8, n_steps=128, window=1024, log=lambda *_: None)
    assert [r["steps"] for r in rows] == [1024, 2048]
    assert all(r["episodes"] == 0 or math.isfinite(r["mean_return"]) for r in rows)


def test_the_guides_lockstep_example_prints_what_it_says(monkeypatch, capsys) -> None:
    # docs/experiments.md's Python example, run as written: the same position every run.
    repo = Path(__file__).resolve().parents[2]
    guide = (repo / "docs" / "experiments.md").read_text()
    block = guide.split("## From Python", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    expected = [line[2:].split(":")[0] for line in block.splitlines() if line.startswith("# (")]
    assert len(expected) == 1, block
    monkeypatch.chdir(repo)
    for _ in range(2):
        exec(compile(block, "docs/experiments.md", "exec"), {})
        assert capsys.readouterr().out.strip() == expected[0]
