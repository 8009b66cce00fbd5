"""The drone swarm to its targets, as a PettingZoo parallel environment.

``n`` drones (5 × 5 squares) take off from a grid and each flies to its own target on rings
around the map's centre (HMR Sim's swarm example, ``simrob swarm drones``), 24 frames per
simulated second. Each agent ``drone_i`` controls its drone's velocity; a collision stops
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
from pettingzoo import ParallelEnv

from .. import _native

#: Frames an episode lasts at most (25 simulated seconds).
MAX_CYCLES = 600


class DroneTargetsEnv(ParallelEnv):
    """``n`` drones flying to their targets; see the module's documentation."""

    metadata = {"name": "simrob_drones_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, n: int = 20, max_cycles: int = MAX_CYCLES, render_mode: Optional[str] = None):
        if render_mode is not None:
            raise ValueError(f"render_mode {render_mode!r}: this environment does not render")
        if not (isinstance(max_cycles, int) and max_cycles > 0):
            raise ValueError(f"max_cycles {max_cycles!r}: a positive number of frames")
        self.render_mode = None
        self._core = _native.DroneTargets(n)
        self._n = n
        self._max_cycles = max_cycles
        self.possible_agents = [f"drone_{i}" for i in range(n)]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Box(-np.inf, np.inf, (_native.DRONE_OBS,), np.float32)
        act_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.agents: list[str] = []
        self._rng = np.random.default_rng()
        self._cycles = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        obs = self._core.reset(int(self._rng.integers(0, 2**63 - 1)))
        self.agents = list(self.possible_agents)
        self._cycles = 0
        return (
            {a: obs[i] for i, a in enumerate(self.agents)},
            {a: {} for a in self.agents},
        )

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise RuntimeError("every agent is done: call reset")
        arr = np.zeros((self._n, 2), dtype=np.float64)
        for agent, action in actions.items():
            i = self._index.get(agent)
            if i is None:
                raise ValueError(f"no agent {agent!r}")
            a = np.asarray(action, dtype=np.float64)
            if a.shape != (2,):
                raise ValueError(f"{agent}: an action of shape {a.shape}: expected (2,)")
            arr[i] = a
        obs, reward, arrived, crashed = self._core.step(arr)
        self._cycles += 1
        out = self.agents
        truncate = self._cycles >= self._max_cycles
        observations = {}
        rewards = {}
        terminations = {}
        truncations = {}
        infos = {}
        for a in out:
            i = self._index[a]
            observations[a] = obs[i]
            rewards[a] = float(reward[i])
            terminations[a] = bool(arrived[i] or crashed[i])
            truncations[a] = truncate and not terminations[a]
            infos[a] = {"arrived": bool(arrived[i]), "crashed": bool(crashed[i])}
        self.agents = [a for a in out if not (terminations[a] or truncations[a])]
        return observations, rewards, terminations, truncations, infos

    def positions(self) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, targets)``: ``(n, 2)`` arrays in map units."""
        return self._core.positions()

    def render(self):
        return None

    def close(self):
        self._core.close()


def parallel_env(**kwargs) -> DroneTargetsEnv:
    """The environment (``n`` drones, ``max_cycles`` frames at most)."""
    return DroneTargetsEnv(**kwargs)
