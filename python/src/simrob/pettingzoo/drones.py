"""The drone swarm to its targets, as a PettingZoo parallel environment.

``n`` drones (5 × 5 squares) take off from a grid and each flies to its own target on rings
around the map's centre (HMR Sim's swarm example: the bundled drone-swarm scenario,
``simrob swarm run scenarios/swarm/drone-swarm.toml``), 24 frames per simulated second;
``n`` is 1 to 10,000. Each agent ``drone_i`` controls its drone's velocity; a collision stops
both drones (crashed, the agent's episode ends), and so does arriving within 5 map units of
the target. Observation, action and reward: ``docs/python.md``.

>>> from simrob.pettingzoo import drones
>>> env = drones.parallel_env(n=20)
>>> obs, infos = env.reset(seed=1)
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from .. import _native
from ._base import NativeParallelEnv, positive_count

#: Frames an episode lasts at most (25 simulated seconds).
MAX_CYCLES = 600


class DroneTargetsEnv(NativeParallelEnv):
    """``n`` drones flying to their targets; see the module's documentation."""

    metadata = {"name": "simrob_drones_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, n: int = 20, max_cycles: int = MAX_CYCLES, render_mode: Optional[str] = None):
        if render_mode is not None:
            raise ValueError(f"render_mode {render_mode!r}: this environment does not render")
        max_cycles = positive_count("max_cycles", max_cycles, "frames")
        self.render_mode = None
        self._core = _native.DroneTargets(n)
        self._n = n
        self._max_cycles = max_cycles
        self.possible_agents = [f"drone_{i}" for i in range(n)]
        obs_space = spaces.Box(-np.inf, np.inf, (_native.DRONE_OBS,), np.float32)
        act_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self._agents_known()

    def step(self, actions: dict[str, Any]):
        self._check_playing()
        arr = np.zeros((self._n, 2), dtype=np.float64)
        if actions:
            # All the actions in one array (one conversion, not one an agent); an action of
            # another shape, or not numbers, is then looked for agent by agent to be named.
            rows = [self._index_of(agent) for agent in actions]
            try:
                given = np.asarray(list(actions.values()), dtype=np.float64)
            except ValueError:
                given = None
            if given is None or given.shape != (len(rows), 2):
                for agent, action in actions.items():
                    a = np.asarray(action, dtype=np.float64)
                    if a.shape != (2,):
                        raise ValueError(f"{agent}: an action of shape {a.shape}: expected (2,)")
                raise ValueError(f"actions of shape {np.shape(given)}: expected (2,) each")
            arr[rows] = given
        obs, reward, arrived, crashed = self._core.step(arr)
        self._cycles += 1
        out = self.agents
        truncate = self._cycles >= self._max_cycles
        idx = [self._index[a] for a in out]
        done = (arrived[idx] | crashed[idx]).tolist()
        observations = dict(zip(out, obs[idx]))
        rewards = dict(zip(out, reward[idx].tolist()))
        terminations = dict(zip(out, done))
        truncations = {a: truncate and not d for a, d in zip(out, done)}
        infos = {
            a: {"arrived": ar, "crashed": cr}
            for a, ar, cr in zip(out, arrived[idx].tolist(), crashed[idx].tolist())
        }
        self.agents = [a for a, d in zip(out, done) if not (d or truncate)]
        return observations, rewards, terminations, truncations, infos

    def positions(self) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, targets)``: ``(n, 2)`` arrays in map units."""
        return self._core.positions()


def parallel_env(**kwargs) -> DroneTargetsEnv:
    """The environment (``n`` drones, ``max_cycles`` frames at most)."""
    return DroneTargetsEnv(**kwargs)
