"""The Gymnasium and PettingZoo environments through their API checkers, and their
reproducibility."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

import simrob  # noqa: E402  (registers the environments)
from simrob import gym as simrob_gym  # noqa: E402
from simrob import pettingzoo as simrob_pz  # noqa: E402


@pytest.mark.parametrize("env_id", simrob_gym.ENV_IDS)
def test_gymnasium_env_checker_passes(env_id):
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("env_id", simrob_gym.ENV_IDS)
def test_same_seed_same_episode(env_id):
    def episode(seed):
        env = gym.make(env_id)
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        trace = [obs]
        total = 0.0
        for _ in range(60):
            obs, r, term, trunc, _ = env.step(env.action_space.sample())
            trace.append(obs)
            total += r
            if term or trunc:
                break
        env.close()
        return np.array(trace), total

    a, ra = episode(5)
    b, rb = episode(5)
    c, _ = episode(6)
    assert np.array_equal(a, b) and ra == rb
    assert not np.array_equal(a[0], c[0])


def test_sumbot_driving_at_the_ball_earns_reward():
    env = gym.make("simrob/SumBotBall-v0")
    obs, _ = env.reset(seed=0)
    total = 0.0
    for _ in range(400):
        ahead, left = obs[4], obs[5]
        turn = float(np.clip(3.0 * np.arctan2(left, ahead), -1, 1))
        obs, r, term, trunc, _ = env.step(np.array([0.6 - turn, 0.6 + turn], dtype=np.float32))
        total += r
        if term or trunc:
            break
    assert term, "a steering controller reaches the ball"
    assert total > 10.0


@pytest.mark.parametrize("env_id", simrob_gym.ENV_IDS)
def test_vector_env_steps_a_batch_in_rust(env_id):
    envs = gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point")
    obs, _ = envs.reset(seed=1)
    assert obs.shape == (4,) + envs.single_observation_space.shape
    for _ in range(5):
        obs, rew, term, trunc, info = envs.step(envs.action_space.sample())
    assert obs.shape[0] == 4 and rew.shape == (4,)
    # A batch world and a single environment agree on the same seeds' worlds.
    envs.close()


def test_bad_actions_raise():
    env = gym.make("simrob/Nomad-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        env.step(np.array([np.nan, 0.0]))
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.unwrapped.step(np.zeros(2))


@pytest.mark.parametrize("cls", [simrob_gym.SumBotBallVectorEnv, simrob_gym.NomadVectorEnv])
@pytest.mark.parametrize("max_steps", [0, -1, 2.5, float("nan"), "100", True])
def test_a_vector_env_refuses_a_step_limit_that_is_not_a_positive_count(cls, max_steps):
    # 0 or -1 once cut every episode after its first step, NaN never; silently.
    with pytest.raises(ValueError, match="max_steps .*: a positive number of steps"):
        cls(num_envs=2, max_steps=max_steps)


@pytest.mark.parametrize("module", simrob_pz.MODULES)
def test_pettingzoo_parallel_api_test_passes(module):
    from pettingzoo.test import parallel_api_test

    mod = importlib.import_module(f"simrob.pettingzoo.{module}")
    parallel_api_test(mod.parallel_env(), num_cycles=1000)


@pytest.mark.parametrize("module", simrob_pz.MODULES)
def test_pettingzoo_parallel_seed_test_passes(module):
    from pettingzoo.test import parallel_seed_test

    mod = importlib.import_module(f"simrob.pettingzoo.{module}")
    parallel_seed_test(lambda: mod.parallel_env())


def test_drones_are_reproducible_and_reward_flying_home():
    from simrob.pettingzoo import drones

    def run(seed):
        env = drones.parallel_env(n=12)
        obs, _ = env.reset(seed=seed)
        rewards = []
        arrived = 0
        for _ in range(300):
            if not env.agents:
                break
            # Fly straight at the target (the first two observations are the offset).
            actions = {a: np.clip(obs[a][:2] * 4.0, -1, 1) for a in env.agents}
            obs, rew, term, trunc, info = env.step(actions)
            rewards.append(sum(rew.values()))
            arrived += sum(i["arrived"] for i in info.values())
        env.close()
        return rewards, arrived

    r1, a1 = run(2)
    r2, a2 = run(2)
    assert r1 == r2 and a1 == a2
    assert a1 > 0, "drones flying at their targets arrive"
    env = drones.parallel_env(n=3)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step({"drone_0": np.zeros(3)})
    # A bad action among good ones is named; nothing is stepped.
    with pytest.raises(ValueError, match=r"drone_2: an action of shape \(2, 1\)"):
        env.step({"drone_0": np.zeros(2), "drone_1": [0.5, -0.5], "drone_2": np.zeros((2, 1))})
    with pytest.raises(ValueError):
        env.step({"drone_0": np.zeros(2), "drone_1": "up"})
    with pytest.raises(ValueError, match="no agent"):
        env.step({"drone_9": np.zeros(2)})
    assert env._cycles == 0
    # Lists, tuples and arrays alike; agents left out stand still.
    obs, rew, term, trunc, info = env.step({"drone_0": (1.0, 0.0), "drone_2": [0.0, 1.0]})
    assert set(obs) == set(rew) == set(term) == set(trunc) == set(info) == set(env.possible_agents)
    assert all(isinstance(r, float) for r in rew.values())
    assert all(type(t) is bool and type(i["crashed"]) is bool for t, i in zip(term.values(), info.values()))
    env.close()
