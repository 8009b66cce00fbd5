"""What the parallel environments stepped in Rust share: spaces by agent, a seeded reset of
the native core, the index of an agent's entry in the core's arrays."""

from __future__ import annotations

import numbers
from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv


def positive_count(name: str, value: Any, unit: str) -> int:
    """``value`` as a whole number of at least 1 (an ``int`` or a numpy integer, not a bool);
    anything else is a ``ValueError`` naming ``name``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and value > 0:
        return int(value)
    raise ValueError(f"{name} {value!r}: a positive number of {unit}")


class NativeParallelEnv(ParallelEnv):
    """A parallel environment whose world is ``self._core`` (a ``simrob._native`` object with
    ``reset(seed) -> observations`` and ``close()``). Subclasses set ``_core``,
    ``possible_agents``, ``observation_spaces`` and ``action_spaces``, then call
    :meth:`_agents_known`."""

    _core: object
    possible_agents: list[str]

    def _agents_known(self) -> None:
        """The agents' indices in the core's arrays; nobody playing until the first reset."""
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self.agents: list[str] = []
        self._rng = np.random.default_rng()
        self._cycles = 0
        self._started = False

    def _check_playing(self) -> None:
        """A step needs an agent still playing: ``RuntimeError`` before the first reset and
        once every agent is done."""
        if not self._started:
            raise RuntimeError("call reset before step")
        if not self.agents:
            raise RuntimeError("every agent is done: call reset")

    def _index_of(self, agent: str) -> int:
        i = self._index.get(agent)
        if i is None:
            raise ValueError(f"no agent {agent!r}")
        return i

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        obs = self._core.reset(int(self._rng.integers(0, 2**63 - 1)))  # type: ignore[attr-defined]
        self.agents = list(self.possible_agents)
        self._cycles = 0
        self._started = True
        return (
            {a: obs[i] for i, a in enumerate(self.agents)},
            {a: {} for a in self.agents},
        )

    def render(self):
        return None

    def close(self):
        self._core.close()  # type: ignore[attr-defined]
