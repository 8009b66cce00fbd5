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

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import _native

#: Episode lengths the registered environments are truncated at.
SUMBOT_MAX_STEPS = 500
NOMAD_MAX_STEPS = 400


def _seed_from(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**63 - 1))


def _action(action: Any, n: int) -> np.ndarray:
    a = np.asarray(action, dtype=np.float64)
    if a.shape != (n, 2):
        if n == 1 and a.shape == (2,):
            return a.reshape(1, 2)
        want = "(2,)" if n == 1 else f"({n}, 2)"
        raise ValueError(f"an action of shape {a.shape}: expected {want}")
    return a


class _Single(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, core: Any, obs_dim: int, render_mode: Optional[str] = None):
        if render_mode is not None:
            raise ValueError(f"render_mode {render_mode!r}: these environments do not render")
        self.render_mode = None
        self._core = core
        self.observation_space = spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        obs = self._core.reset(0, _seed_from(self.np_random))
        self._ended = False
        return obs, {}

    def step(self, action):
        if getattr(self, "_ended", False):
            raise RuntimeError("the episode has ended (terminated): call reset() first")
        obs, reward, terminated = self._core.step(_action(action, 1))
        self._ended = bool(terminated[0])
        return obs[0], float(reward[0]), bool(terminated[0]), False, {}

    def close(self):
        self._core.close()


class SumBotBallEnv(_Single):
    """The SumBot (entity 3) drives to the ball (entity 8) on the soccer field.

    Each step holds wheel joints 0 and 1 at ``action * max_wheel_speed`` rad/s for
    ``frame_skip`` iterations of 0.01 s. A reset rebuilds the scene with the ball at a
    random place (from the seed) at least 0.3 m from the robot.
    """

    def __init__(self, frame_skip: int = 2, max_wheel_speed: float = 30.0, render_mode=None):
        core = _native.SumBotBall(1, frame_skip, max_wheel_speed)
        super().__init__(core, _native.SUMBOT_OBS, render_mode)


class NomadEnv(_Single):
    """A Nomad-200 drives to a goal on a Mobile Robot Simulator map (the built-in example
    map unless ``map`` names a map file); start pose and goal are drawn from the seed."""

    def __init__(
        self,
        map: Optional[str] = None,
        dt: float = 0.1,
        max_speed: float = 24.0,
        max_turn: float = 60.0,
        render_mode=None,
    ):
        core = _native.NomadGoal(1, map, dt, max_speed, max_turn)
        super().__init__(core, _native.NOMAD_OBS, render_mode)


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

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        mask = None if options is None else options.get("reset_mask")
        if mask is None:
            mask = np.ones(self.num_envs, dtype=np.bool_)
        else:
            mask = np.asarray(mask)
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ValueError(
                    f"reset_mask: a boolean array of shape ({self.num_envs},) is wanted, "
                    f"not {mask.dtype} of shape {mask.shape}"
                )
        obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        for i in np.flatnonzero(mask):
            obs[i] = self._core.reset(int(i), _seed_from(self.np_random))
        self._steps[mask] = 0
        self._ended[mask] = False
        return obs, {}

    def step(self, actions):
        a = _action(actions, self.num_envs)
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
            final = np.full(self.num_envs, None, dtype=object)
            final_info = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final[i] = obs[i].copy()
                final_info[i] = {}
                obs[i] = self._core.reset(int(i), _seed_from(self.np_random))
                self._steps[i] = 0
            infos.update(final_obs=final, _final_obs=done.copy(),
                         final_info=final_info, _final_info=done.copy())
        else:
            self._ended = done
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
