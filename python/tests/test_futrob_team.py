"""FutRob's team task (``simrob.pettingzoo.futrob``): goals scored in the physics reward the
teams, FutRob's own rules play the opponents, episodes replay from their seed, and bad input
raises."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from simrob.pettingzoo import futrob  # noqa: E402

A = futrob.ACTIONS.index
BALL_KNOWN = futrob.PREDICATES.index("ballLastPosValid") - len(futrob.PREDICATES)


def striker(obs: np.ndarray) -> int:
    """FutRob's penalty-kick rules in two lines: look for the ball until its position is
    known, then ``kickBall`` (approach, align to the goal, kick)."""
    return A("kickBall") if obs[BALL_KNOWN] > 0 else A("findBall")


def play(seed: int, steps: int, **kwargs):
    """Cyan's agents play ``striker``, magenta's stand still; returns per step the rewards,
    the infos, and the final state and score."""
    env = futrob.parallel_env(players_per_team=1, max_cycles=steps, **kwargs)
    obs, _ = env.reset(seed=seed)
    trace = []
    while env.agents:
        actions = {
            a: striker(obs[a]) if a.startswith("cyan") else A("none") for a in env.agents
        }
        obs, rew, term, trunc, info = env.step(actions)
        trace.append((rew, term, trunc, info))
    state, score = env.state(), env.score()
    env.close()
    return trace, state, score


def test_a_kicked_ball_over_the_goal_line_is_a_goal_for_the_kicking_team():
    goals = 0
    for seed in (1, 2, 3):
        trace, state, score = play(seed, 1500)
        rew, term, trunc, info = trace[-1]
        if score == (1, 0):
            goals += 1
            # The ball is over magenta's goal line (x = 4.5 m) between the posts.
            assert state[0] > 4.5 and abs(state[1]) < 1.3
            assert rew == {"cyan_0": 1.0, "magenta_0": -1.0}
            assert all(term.values()) and not any(trunc.values())
            assert info["cyan_0"]["goal"] == "cyan"
            # No reward before the goal (no shaping asked for).
            assert all(r == {"cyan_0": 0.0, "magenta_0": 0.0} for r, *_ in trace[:-1])
        else:
            assert score == (0, 0) and all(trunc.values()) and not any(term.values())
            assert len(trace) == 1500
    assert goals >= 1, "FutRob's kickBall, chosen by an agent, scores within 5 simulated minutes"


def test_shaping_rewards_the_balls_progress_towards_the_opponents_goal():
    trace, state, _ = play(1, 100, shaping=1.0)
    cyan = sum(r["cyan_0"] for r, *_ in trace)
    magenta = sum(r["magenta_0"] for r, *_ in trace)
    # The ball starts on the centre spot: the summed progress is where it is now.
    assert cyan == pytest.approx(state[0], abs=1e-4)
    assert magenta == pytest.approx(-cyan)


def test_episodes_replay_from_their_seed():
    def run(seed):
        env = futrob.parallel_env(players_per_team=2)
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(5)
        seen = [np.concatenate([obs[a] for a in env.agents])]
        for _ in range(40):
            actions = {a: int(rng.integers(len(futrob.ACTIONS))) for a in env.agents}
            obs, *_ = env.step(actions)
            seen.append(np.concatenate([obs[a] for a in env.possible_agents]))
        state = env.state()
        env.close()
        return np.array(seen), state

    a, sa = run(7)
    b, sb = run(7)
    c, _ = run(8)
    assert np.array_equal(a, b) and np.array_equal(sa, sb)
    assert not np.array_equal(a, c)


def test_observations_are_in_the_teams_frame():
    env = futrob.parallel_env(players_per_team=3)
    obs, _ = env.reset(seed=4)
    assert env.possible_agents == [
        "cyan_0", "cyan_1", "cyan_2", "magenta_0", "magenta_1", "magenta_2",
    ]
    assert env.players["cyan_0"] == ("cyan", 3, "goalkeeper")
    assert env.players["magenta_2"] == ("magenta", 8, "field player")
    for a in env.agents:
        o = obs[a]
        assert o.shape == env.observation_space(a).shape == (13 + 5 * 5 + 38,)
        # Everyone starts in their own half facing the opponents' goal (+x in the team's
        # frame), standing.
        assert o[0] < 0 and o[2] > 0.95 and o[4] == 1.0
    # The keepers stand on their goal lines: -4.2 m in their team's frame.
    for a in ("cyan_0", "magenta_0"):
        assert obs[a][0] * 4.5 == pytest.approx(-4.2, abs=0.06)
    state = env.state()
    assert state.shape == env.state_space.shape
    # Ground truth: cyan's keeper at x < 0, magenta's at x > 0.
    assert state[4] < -4 and state[4 + 5 * 3] > 4
    env.close()


def test_futrob_rules_play_the_opponents():
    env = futrob.parallel_env(players_per_team=2, opponent="futrob")
    assert env.possible_agents == ["cyan_0", "cyan_1"]
    env.reset(seed=3)
    before = env.state()
    for _ in range(50):
        env.step({a: A("none") for a in env.agents})
    after = env.state()
    # Magenta's robots (the last two) moved on their own rules; cyan's held still.
    magenta = slice(4 + 5 * 2, 4 + 5 * 4)
    cyan = slice(4, 4 + 5 * 2)
    assert np.abs(after[magenta] - before[magenta]).max() > 0.1
    assert np.abs(after[cyan] - before[cyan]).max() < 0.05
    env.close()


def test_bad_input_raises_and_changes_nothing():
    env = futrob.parallel_env(players_per_team=1)
    env.reset(seed=0)
    state = env.state()
    for bad in (len(futrob.ACTIONS), -1, 2.5, "kick", np.array([1, 2])):
        with pytest.raises(ValueError):
            env.step({"cyan_0": bad, "magenta_0": 0})
    with pytest.raises(ValueError, match="no agent"):
        env.step({"blue_0": 0})
    assert np.array_equal(env.state(), state)
    for kwargs in (
        {"players_per_team": 4},
        {"opponent": "humans"},
        {"profile": "noisy"},
        {"step_ms": 15},
        {"shaping": float("nan")},
        {"max_cycles": 0},
    ):
        with pytest.raises(ValueError):
            futrob.parallel_env(**kwargs)
    # An error quotes what it was given, not a megabyte of it.
    with pytest.raises(ValueError) as refused:
        futrob.parallel_env(opponent="x" * 10**6)
    assert len(str(refused.value)) < 200 and "1000000 characters" in str(refused.value)
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step({"cyan_0": 0, "magenta_0": 0})
