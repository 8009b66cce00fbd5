"""Gymnasium environments, stepped in Rust, registered under the ``simrob/`` namespace when
``simrob`` is imported with gymnasium installed:

- ``simrob/SumBotBall-v0`` (:class:`SumBotBallEnv`): the SumBot drives to the ball on the
  SimRob manual's soccer field, continuous wheel speeds.
- ``simrob/Nomad-v0`` (:class:`NomadEnv`): a Nomad-200 drives to a goal on a Mobile Robot
  Simulator map, 16 sonars and the 20-bumper ring in, speed and turn rate out.

:class:`SumBotBallVectorEnv` and :class:`NomadVectorEnv` step a batch of worlds in one call
into Rust (``gymnasium.make_vec("simrob/…", num_envs=N, vectorization_mode="vector_entry_point")``
builds them). Observations, actions and rewards are tabled in ``docs/python.md``.
"""

from __future__ import annotations

import numbers
from typing import Any, Optional

try:
    import gymnasium as gym
except ModuleNotFoundError as _e:  # the `gym` extra not installed
    if _e.name != "gymnasium":
        raise
    from .sim import _missing

    raise _missing("gymnasium", "[gym]", "simrob.gym") from _e
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.utils import seeding
from gymnasium.vector.utils import batch_space

from . import _native

#: Episode lengths the registered environments are truncated at.
SUMBOT_MAX_STEPS = 500
NOMAD_MAX_STEPS = 400


def _seed_from(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**63 - 1))


def _real(action: Any) -> np.ndarray:
    """``action`` as a float64 array; complex numbers, strings or objects are a ``ValueError``."""
    try:
        a = np.asarray(action)
    except ValueError as e:
        raise ValueError(f"an action that is not an array of numbers: {e}") from None
    if a.dtype.kind not in "biuf":
        raise ValueError(f"an action of {a.dtype}: real numbers are wanted")
    return a.astype(np.float64)


def _action(action: Any) -> np.ndarray:
    """A single environment's action: shape (2,) exactly, as a (1, 2) batch."""
    a = _real(action)
    if a.shape != (2,):
        raise ValueError(f"an action of shape {a.shape}: expected (2,)")
    return a.reshape(1, 2)


def _actions(actions: Any, n: int) -> np.ndarray:
    """A vector environment's actions: shape (n, 2) exactly."""
    a = _real(actions)
    if a.shape != (n, 2):
        raise ValueError(f"actions of shape {a.shape}: expected ({n}, 2)")
    return a


def _nomad_space() -> spaces.Box:
    """The Nomad observation's true bounds: sonars ÷ their range, bumpers and the distance
    to the goal ÷ the map's diagonal in [0, 1]; the bearing's cos and sin and the commanded
    speed and turn rate (fractions of their maxima) in [-1, 1]."""
    low = np.zeros(_native.NOMAD_OBS, dtype=np.float32)
    low[37:] = -1.0
    return spaces.Box(low, np.ones(_native.NOMAD_OBS, dtype=np.float32), dtype=np.float32)


class _Single(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, core: Any, obs_dim: int, max_episode_steps: Any = None,
                 render_mode: Optional[str] = None):
        try:
            if max_episode_steps is not None:
                max_episode_steps = _whole("max_episode_steps", max_episode_steps)
            if render_mode is not None:
                raise ValueError(f"render_mode {render_mode!r}: these environments do not render")
        except ValueError:
            core.close()
            raise
        self.render_mode = None
        self._core = core
        self._max_steps = max_episode_steps
        self._steps = 0
        self._ended: Optional[str] = None
        self.observation_space = spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        obs = self._core.reset(0, _seed_from(self.np_random))
        self._ended = None
        self._steps = 0
        return obs, {}

    def step(self, action):
        if self._ended is not None:
            raise RuntimeError(f"the episode has ended ({self._ended}): call reset() first")
        obs, reward, terminated = self._core.step(_action(action))
        self._steps += 1
        term = bool(terminated[0])
        trunc = not term and self._max_steps is not None and self._steps >= self._max_steps
        if term or trunc:
            self._ended = "terminated" if term else "truncated"
        return obs[0], float(reward[0]), term, trunc, {}

    def close(self):
        self._core.close()


class SumBotBallEnv(_Single):
    """The SumBot (entity 3) drives to the ball (entity 8) on the soccer field.

    Each step holds wheel joints 0 and 1 at ``action * max_wheel_speed`` rad/s for
    ``frame_skip`` iterations of 0.01 s. A reset rebuilds the scene with the ball at a
    random place (from the seed) at least 0.3 m from the robot. Constructed directly, an
    episode is truncated only at ``max_episode_steps`` when given (``gymnasium.make`` adds
    its own ``TimeLimit`` at the registered 500 steps instead); a step after the episode
    terminated or was truncated here is a ``RuntimeError``.
    """

    def __init__(self, frame_skip: int = 2, max_wheel_speed: float = 30.0,
                 max_episode_steps: Optional[int] = None, render_mode=None):
        core = _native.SumBotBall(1, frame_skip, max_wheel_speed)
        super().__init__(core, _native.SUMBOT_OBS, max_episode_steps, render_mode)


class NomadEnv(_Single):
    """A Nomad-200 drives to a goal on a Mobile Robot Simulator map (the built-in example
    map unless ``map`` names a map file); start pose and goal are drawn from the seed.
    Truncation and the step after the end as :class:`SumBotBallEnv`'s (``gymnasium.make``'s
    ``TimeLimit`` is at 400 steps)."""

    def __init__(
        self,
        map: Optional[str] = None,
        dt: float = 0.1,
        max_speed: float = 24.0,
        max_turn: float = 60.0,
        max_episode_steps: Optional[int] = None,
        render_mode=None,
    ):
        core = _native.NomadGoal(1, map, dt, max_speed, max_turn)
        super().__init__(core, _native.NOMAD_OBS, max_episode_steps, render_mode)
        self.observation_space = _nomad_space()


def _whole(name: str, value: Any) -> int:
    """``value`` as a positive whole number (an ``int`` or numpy integer, not a bool)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and value > 0:
        return int(value)
    raise ValueError(f"{name} {value!r}: a positive number of steps")


class _Batch(VectorEnv):
    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, core: Any, obs_dim: int, num_envs: int, max_episode_steps: Any,
                 autoreset_mode: Any, render_mode: Optional[str]):
        try:
            max_episode_steps = _whole("max_episode_steps", max_episode_steps)
            if render_mode is not None:
                raise ValueError(f"render_mode {render_mode!r}: these environments do not render")
            try:
                mode = AutoresetMode(autoreset_mode)
            except ValueError:
                modes = ", ".join(m.value for m in AutoresetMode)
                raise ValueError(f"autoreset_mode {autoreset_mode!r}: one of {modes}") from None
        except ValueError:
            core.close()
            raise
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.num_envs = num_envs
        self._core = core
        self._max_steps = max_episode_steps
        self.render_mode = None
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        self.single_action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._steps = np.zeros(num_envs, dtype=np.int64)
        # Worlds whose episode ended at the last step: the next step resets them (NEXT_STEP),
        # or the caller does (DISABLED: ``reset(options={"reset_mask": ...})``).
        self._ended = np.zeros(num_envs, dtype=np.bool_)
        # Each world's latest observation: what a reset that leaves it out returns for it.
        self._obs = np.zeros(self.observation_space.shape, dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        seeds = None
        if isinstance(seed, (list, tuple)):
            # As Gymnasium's SyncVectorEnv: one seed (or None) a world; world i then starts as
            # a single environment reset with seed[i] does.
            if len(seed) != self.num_envs:
                raise ValueError(
                    f"seed: a list of {len(seed)} seeds for {self.num_envs} worlds "
                    "(one a world, or a single int)"
                )
            seeds = list(seed)
            for s in seeds:
                if s is not None and not (isinstance(s, numbers.Integral)
                                          and not isinstance(s, (bool, np.bool_)) and s >= 0):
                    raise ValueError(f"seed {s!r} in {seed!r}: a whole number of at least 0 or None")
            if all(s is not None for s in seeds):
                entropy = [int(s) for s in seeds]
                self._np_random = np.random.Generator(
                    np.random.PCG64(np.random.SeedSequence(entropy)))
                self._np_random_seed = entropy[0]
            else:
                super().reset(seed=None)
        else:
            super().reset(seed=seed)
        mask = None if options is None else options.get("reset_mask")
        if mask is None:
            mask = np.ones(self.num_envs, dtype=np.bool_)
        else:
            # What Gymnasium's SyncVectorEnv takes: a numpy bool array of shape (num_envs,)
            # with a world to reset.
            if not isinstance(mask, np.ndarray):
                raise TypeError(
                    f"reset_mask: a numpy bool array of shape ({self.num_envs},) is wanted, "
                    f"not {type(mask).__name__}"
                )
            if mask.shape != (self.num_envs,):
                raise ValueError(
                    f"reset_mask of shape {mask.shape}: ({self.num_envs},) is wanted"
                )
            if mask.dtype != np.bool_:
                raise TypeError(f"reset_mask of {mask.dtype}: a bool array is wanted")
            if not mask.any():
                raise ValueError("reset_mask names no world to reset: at least one True is wanted")
        for i in np.flatnonzero(mask):
            if seeds is not None and seeds[i] is not None:
                rng, _ = seeding.np_random(seeds[i])
                world_seed = _seed_from(rng)
            else:
                world_seed = _seed_from(self.np_random)
            self._obs[i] = self._core.reset(int(i), world_seed)
        self._steps[mask] = 0
        self._ended[mask] = False
        return self._obs.copy(), {}

    def step(self, actions):
        a = _actions(actions, self.num_envs)
        mode = self.autoreset_mode
        if mode == AutoresetMode.DISABLED and self._ended.any():
            i = int(np.flatnonzero(self._ended)[0])
            raise RuntimeError(
                f"world {i}'s episode has ended: reset it first "
                '(reset(options={"reset_mask": ...}); autoreset_mode DISABLED)'
            )
        restart = self._ended.copy() if mode == AutoresetMode.NEXT_STEP else None
        if restart is not None and restart.any():
            obs, reward, terminated = self._core.step(a, ~restart)
        else:
            obs, reward, terminated = self._core.step(a)
        self._steps += 1
        truncated = (self._steps >= self._max_steps) & ~terminated
        done = terminated | truncated
        infos: dict = {}
        if restart is not None and restart.any():
            for i in np.flatnonzero(restart):
                obs[i] = self._core.reset(int(i), _seed_from(self.np_random))
                self._steps[i] = 0
            truncated[restart] = False
            done[restart] = False
        if mode == AutoresetMode.SAME_STEP and done.any():
            # As Gymnasium's SyncVectorEnv: the last observations in an object array, the
            # last infos (empty here) as a dict of arrays, each with its `_key` mask.
            final = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final[i] = obs[i].copy()
                obs[i] = self._core.reset(int(i), _seed_from(self.np_random))
                self._steps[i] = 0
            infos.update(final_obs=final, _final_obs=done.copy(),
                         final_info={}, _final_info=done.copy())
        else:
            self._ended = done
        self._obs = obs.copy()
        return obs, reward, terminated, truncated, infos

    def close_extras(self, **kwargs):
        self._core.close()


class SumBotBallVectorEnv(_Batch):
    """``num_envs`` SumBot worlds stepped together in Rust. A finished world is reset as
    ``autoreset_mode`` says: at the next step (``NEXT_STEP``, the default, as Gymnasium's own
    vector environments), in the same step (``SAME_STEP``: its last observation in
    ``infos["final_obs"]``), or by the caller (``DISABLED``: ``reset(options={"reset_mask":
    mask})``). Episodes are truncated at ``max_episode_steps``."""

    def __init__(self, num_envs: int = 8, frame_skip: int = 2, max_wheel_speed: float = 30.0,
                 max_episode_steps: int = SUMBOT_MAX_STEPS,
                 autoreset_mode: AutoresetMode = AutoresetMode.NEXT_STEP,
                 render_mode: Optional[str] = None):
        core = _native.SumBotBall(num_envs, frame_skip, max_wheel_speed)
        super().__init__(core, _native.SUMBOT_OBS, num_envs, max_episode_steps, autoreset_mode,
                         render_mode)


class NomadVectorEnv(_Batch):
    """``num_envs`` Nomad worlds stepped together in Rust; resets and truncation as
    :class:`SumBotBallVectorEnv`'s."""

    def __init__(self, num_envs: int = 8, map: Optional[str] = None, dt: float = 0.1,
                 max_speed: float = 24.0, max_turn: float = 60.0,
                 max_episode_steps: int = NOMAD_MAX_STEPS,
                 autoreset_mode: AutoresetMode = AutoresetMode.NEXT_STEP,
                 render_mode: Optional[str] = None):
        core = _native.NomadGoal(num_envs, map, dt, max_speed, max_turn)
        super().__init__(core, _native.NOMAD_OBS, num_envs, max_episode_steps, autoreset_mode,
                         render_mode)
        self.single_observation_space = _nomad_space()
        self.observation_space = batch_space(self.single_observation_space, num_envs)


#: The registered ids.
ENV_IDS = ("simrob/SumBotBall-v0", "simrob/Nomad-v0")


def register_envs() -> None:
    """Registers the ``simrob/`` environments (done when ``simrob`` is imported)."""
    if "simrob/SumBotBall-v0" in gym.registry:
        return
    gym.register(
        id="simrob/SumBotBall-v0",
        entry_point="simrob.gym:SumBotBallEnv",
        vector_entry_point="simrob.gym:SumBotBallVectorEnv",
        max_episode_steps=SUMBOT_MAX_STEPS,
    )
    gym.register(
        id="simrob/Nomad-v0",
        entry_point="simrob.gym:NomadEnv",
        vector_entry_point="simrob.gym:NomadVectorEnv",
        max_episode_steps=NOMAD_MAX_STEPS,
    )


register_envs()
