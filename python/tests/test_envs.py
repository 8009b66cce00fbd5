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
    with pytest.raises(ValueError, match="max_episode_steps .*: a positive number of steps"):
        cls(num_envs=2, max_episode_steps=max_steps)


def _first_truncation(envs, n):
    envs.reset(seed=1)
    for k in range(1, 1000):
        _, _, term, trunc, _ = envs.step(np.zeros((n, 2)))
        if trunc.any() or term.any():
            return k
    return None


@pytest.mark.parametrize("env_id", simrob_gym.ENV_IDS)
def test_make_vec_takes_max_episode_steps_as_gymnasium_passes_it(env_id):
    # Gymnasium passes the registered limit, or the caller's, as max_episode_steps: a batch
    # once took max_steps and dropped every other keyword.
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point",
                        max_episode_steps=7)
    assert _first_truncation(envs, 2) == 7
    envs.close()
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point",
                        max_episode_steps=np.int64(4))
    assert _first_truncation(envs, 2) == 4
    envs.close()
    with pytest.raises(TypeError, match="frame_skp"):
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", frame_skp=3)
    with pytest.raises(ValueError, match="render_mode"):
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point",
                     render_mode="human")


def _steer(obs):
    """Actions that drive each SumBot at its ball."""
    turn = np.clip(3.0 * np.arctan2(obs[:, 5], obs[:, 4]), -1, 1)
    return np.stack([0.6 - turn, 0.6 + turn], axis=1)


def _until_one_ends(envs, obs, limit=2000):
    for _ in range(limit):
        obs, rew, term, trunc, info = envs.step(_steer(obs))
        if (term | trunc).any():
            return obs, rew, term, trunc, info
    raise AssertionError("no episode ended")


def test_next_step_autoreset_is_the_default_as_in_gymnasium():
    envs = simrob_gym.SumBotBallVectorEnv(num_envs=3)
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    obs, _ = envs.reset(seed=3)
    obs, rew, term, trunc, _ = _until_one_ends(envs, obs)
    done = term | trunc
    assert term.any(), "the steering controller reaches a ball"
    # The step after an episode ends starts the next: a fresh observation, reward 0, not done;
    # the other worlds step on.
    nxt, rew2, term2, trunc2, _ = envs.step(_steer(obs))
    assert (rew2[done] == 0).all() and not term2[done].any() and not trunc2[done].any()
    assert not np.array_equal(nxt[done], obs[done])
    assert (rew2[~done] != 0).all()
    envs.close()


def test_gymnasiums_observation_wrappers_take_the_batch():
    from gymnasium.wrappers import vector as vw

    envs = vw.NormalizeObservation(
        gym.make_vec("simrob/SumBotBall-v0", num_envs=4, vectorization_mode="vector_entry_point")
    )
    envs.reset(seed=0)
    obs, *_ = envs.step(np.zeros((4, 2), dtype=np.float32))
    assert obs.shape == (4, simrob.sim.SUMBOT_OBS)
    envs.close()


def test_same_step_autoreset_hands_the_last_observation_as_gymnasium_does():
    envs = simrob_gym.SumBotBallVectorEnv(
        num_envs=3, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    obs, _ = envs.reset(seed=3)
    obs, rew, term, trunc, info = _until_one_ends(envs, obs)
    done = term | trunc
    assert info["final_obs"].dtype == object and (info["_final_obs"] == done).all()
    for i in np.flatnonzero(done):
        last = info["final_obs"][i]
        assert last.shape == (simrob.sim.SUMBOT_OBS,) and last[6] < 0.12  # at the ball
        assert obs[i][6] >= 0.3  # the next episode's start: the ball 0.3 m away at least
    envs.close()


def test_same_step_final_info_is_a_dict_of_arrays_as_gymnasiums():
    # It was an object array of dicts; Gymnasium 1.x's SyncVectorEnv gives a dict (of arrays,
    # each with its `_key` mask: empty here, the environments have no infos) and
    # `_final_info` saying which worlds ended.
    def ended(envs):
        envs.reset(seed=0)
        for _ in range(3):
            _, _, term, trunc, info = envs.step(np.zeros((2, 2), dtype=np.float32))
        assert (term | trunc).all()
        return info

    ours = ended(simrob_gym.NomadVectorEnv(
        num_envs=2, max_episode_steps=3, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP))
    theirs = ended(gym.make_vec(
        "simrob/Nomad-v0", num_envs=2, vectorization_mode="sync", max_episode_steps=3,
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}))
    assert set(ours) == set(theirs) == {"final_obs", "_final_obs", "final_info", "_final_info"}
    for key in theirs:
        assert type(ours[key]) is type(theirs[key]), key
    assert ours["final_info"] == theirs["final_info"] == {}
    assert (ours["_final_info"] == theirs["_final_info"]).all()
    assert ours["final_obs"].dtype == theirs["final_obs"].dtype == object


def _disabled(mode="vector"):
    if mode == "vector":
        return simrob_gym.NomadVectorEnv(
            num_envs=2, max_episode_steps=3, autoreset_mode=gym.vector.AutoresetMode.DISABLED)
    return gym.make_vec("simrob/Nomad-v0", num_envs=2, vectorization_mode="sync",
                        max_episode_steps=3,
                        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.DISABLED})


def test_a_partial_reset_returns_the_other_worlds_current_observations():
    # The worlds a reset_mask leaves out were zeros; SyncVectorEnv returns where they are.
    for mode in ("vector", "sync"):
        envs = _disabled(mode)
        envs.reset(seed=1)
        envs.step(np.zeros((2, 2), dtype=np.float32))
        obs, *_ = envs.step(np.full((2, 2), 0.5, dtype=np.float32))
        again, _ = envs.reset(options={"reset_mask": np.array([True, False])})
        assert np.array_equal(again[1], obs[1]) and again[1].any(), mode
        assert not np.array_equal(again[0], obs[0]), mode
        envs.close()


@pytest.mark.parametrize(
    "mask",
    [
        np.array([True, False]),
        np.array([1, 0]),
        np.array([1.0, 0.0]),
        [True, False],
        np.array([True]),
        np.array([False, False]),
        np.array([[True, False]]),
    ],
    ids=["bool", "int", "float", "list", "short", "none", "2d"],
)
def test_a_reset_mask_is_taken_or_refused_as_gymnasium_does(mask):
    def outcome(mode):
        envs = _disabled(mode)
        envs.reset(seed=0)
        try:
            envs.reset(options={"reset_mask": mask})
            return None
        except (TypeError, ValueError) as e:
            return type(e)
        finally:
            envs.close()

    assert outcome("vector") is outcome("sync")


def test_a_list_of_seeds_seeds_each_world_as_gymnasium_does():
    envs = simrob_gym.NomadVectorEnv(num_envs=2)
    obs, _ = envs.reset(seed=[11, 12])
    for i, seed in enumerate((11, 12)):
        one = simrob_gym.NomadEnv()
        first, _ = one.reset(seed=seed)
        assert np.array_equal(obs[i], first)
        one.close()
    again, _ = envs.reset(seed=[11, 12])
    assert np.array_equal(obs, again)
    envs.reset(seed=[None, 12])
    with pytest.raises(ValueError, match="seed"):
        envs.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="seed"):
        envs.reset(seed=[1, -2])
    envs.close()


def test_disabled_autoreset_leaves_the_reset_to_the_caller():
    envs = simrob_gym.NomadVectorEnv(
        num_envs=2, max_episode_steps=3, autoreset_mode=gym.vector.AutoresetMode.DISABLED
    )
    envs.reset(seed=0)
    for _ in range(3):
        _, _, _, trunc, _ = envs.step(np.zeros((2, 2)))
    assert trunc.all()
    with pytest.raises(RuntimeError, match="episode has ended"):
        envs.step(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="reset_mask"):
        envs.reset(options={"reset_mask": np.array([1, 0])})
    obs, _ = envs.reset(options={"reset_mask": np.array([True, True])})
    assert obs.shape == (2, simrob.sim.NOMAD_OBS)
    envs.step(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="autoreset_mode"):
        simrob_gym.NomadVectorEnv(num_envs=2, autoreset_mode="sometimes")
    envs.close()


def test_a_single_env_refuses_a_step_after_its_episode_ended():
    env = simrob_gym.SumBotBallEnv()
    obs, _ = env.reset(seed=3)
    for _ in range(2000):
        obs, r, term, _, _ = env.step(_steer(obs[None, :])[0])
        if term:
            break
    assert term
    # Once, a step after the end paid the +10 of reaching the ball again, every step.
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(np.zeros(2))
    env.reset(seed=4)
    env.step(np.zeros(2))
    env.close()


def test_a_single_env_refuses_a_step_after_the_truncation_it_reported():
    env = simrob_gym.NomadEnv(max_episode_steps=3)
    env.reset(seed=1)
    ends = [env.step(np.zeros(2))[2:4] for _ in range(3)]
    assert ends == [(False, False), (False, False), (False, True)]
    with pytest.raises(RuntimeError, match="truncated"):
        env.step(np.zeros(2))
    env.reset(seed=2)
    env.step(np.zeros(2))
    env.close()
    # Constructed directly without it, nothing truncates; `gymnasium.make` adds a TimeLimit.
    assert simrob_gym.NomadEnv()._max_steps is None
    with pytest.raises(ValueError, match="max_episode_steps"):
        simrob_gym.NomadEnv(max_episode_steps=0)


@pytest.mark.parametrize(
    "action",
    [np.zeros((1, 2)), np.zeros((2, 1)), np.zeros(3), np.array([0.5 + 1j, 0.0]), ["a", "b"]],
    ids=["1x2", "2x1", "3", "complex", "strings"],
)
def test_a_single_env_refuses_an_action_of_the_wrong_shape_or_not_real(action):
    env = simrob_gym.SumBotBallEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(action)
    env.step(np.zeros(2, dtype=np.float32))
    env.step([1, -1])
    env.close()


def test_a_vector_env_refuses_actions_not_of_its_shape():
    envs = simrob_gym.SumBotBallVectorEnv(num_envs=1)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        envs.step(np.zeros(2))
    with pytest.raises(ValueError, match="complex"):
        envs.step(np.zeros((1, 2), dtype=complex))
    envs.step(np.zeros((1, 2)))
    envs.close()


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


def test_pettingzoo_counts_are_whole_numbers_not_bools():
    from simrob.pettingzoo import drones, futrob

    env = drones.parallel_env(n=np.int64(2), max_cycles=np.int64(5))
    with pytest.raises(RuntimeError, match="call reset before step"):
        env.step({})
    env.reset(seed=0)
    env.step({})
    for mod in (drones, futrob):
        with pytest.raises(ValueError, match="max_cycles True"):
            mod.parallel_env(max_cycles=True)


def test_nomad_observations_stay_within_their_bounds():
    # The space said (-inf, inf) though every component is bounded.
    env = simrob_gym.NomadEnv(max_episode_steps=200)
    space = env.observation_space
    assert np.isfinite(space.low).all() and np.isfinite(space.high).all()
    rng = np.random.default_rng(0)
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        assert space.contains(obs), obs
        for _ in range(200):
            obs, _, term, trunc, _ = env.step(rng.uniform(-1, 1, 2))
            assert space.contains(obs), obs
            if term or trunc:
                break
    env.close()
    envs = simrob_gym.NomadVectorEnv(num_envs=3)
    obs, _ = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    envs.close()


def test_mrs_world_reads_every_robots_sensors_at_once():
    w = simrob.sim.MrsWorld()
    ids = [w.add_robot(x, y, 0.0) for x, y in ((60, 60), (150, 150), (240, 240))]
    w.set_velocity(ids[0], 20.0, 5.0)
    w.step(300)
    order, _ = w.poses()
    sonars, bumpers = w.all_sonars(), w.all_bumpers()
    assert sonars.shape == (3, 16) and sonars.dtype == np.float64
    assert bumpers.shape == (3, 20) and bumpers.dtype == np.bool_
    for row, r in enumerate(order):
        assert np.array_equal(sonars[row], w.sonars(int(r)))
        assert np.array_equal(bumpers[row], w.bumpers(int(r)))
    empty = simrob.sim.MrsWorld()
    assert empty.all_sonars().shape == (0, 16) and empty.all_bumpers().shape == (0, 20)
