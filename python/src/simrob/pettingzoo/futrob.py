"""FutRob's team task, as a PettingZoo parallel environment.

KidSize humanoids play on the KidSize field (9 × 6 m), ``players_per_team`` a side: 1 (a
field player), 2 (a goalkeeper and a field player) or 3 (a goalkeeper and two field players).
Every robot has a FutRob brain, the one the case studies and matches run: its head camera,
its world model, the team radio and its action handler. An agent takes the place of the
brain's rules: at each step it picks one of FutRob's actions (``ACTIONS``: the body's basic
actions and FutRob's behaviours such as ``kickBall``, ``passBall`` or ``supportBall``), which
the handler starts at the robot's next equilibrium point and runs on the world model. With
``opponent="agents"`` (default) both teams are agents (``cyan_0`` …, ``magenta_0`` …); with
``opponent="futrob"`` magenta plays FutRob's own match rules and only cyan's robots are
agents. A goal (the ball wholly over the goal line between the posts, in the physics) ends
the episode: +1 to every agent of the team that scored, −1 to the other's. Observation,
action and reward: ``docs/python.md``.

>>> from simrob.pettingzoo import futrob
>>> env = futrob.parallel_env(players_per_team=2)
>>> obs, infos = env.reset(seed=1)
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from .. import _native
from ._base import NativeParallelEnv, positive_count

#: FutRob's actions an agent chooses from, by index.
ACTIONS: tuple[str, ...] = tuple(_native.team_actions())
#: The names of the 38 predicate entries at the end of an observation.
PREDICATES: tuple[str, ...] = tuple(_native.team_predicates())
#: Steps an episode lasts at most (60 simulated seconds at the default 200 ms a step).
MAX_CYCLES = 300


class FutRobTeamEnv(NativeParallelEnv):
    """FutRob's team task; see the module's documentation."""

    metadata = {"name": "simrob_futrob_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(
        self,
        players_per_team: int = 2,
        opponent: str = "agents",
        profile: str = "paper",
        step_ms: int = 200,
        max_cycles: int = MAX_CYCLES,
        shaping: float = 0.0,
        render_mode: Optional[str] = None,
    ):
        if render_mode is not None:
            raise ValueError(f"render_mode {render_mode!r}: this environment does not render")
        max_cycles = positive_count("max_cycles", max_cycles, "steps")
        self.render_mode = None
        self._core = _native.FutRobTeam(players_per_team, opponent, profile, step_ms, shaping)
        self._max_cycles = max_cycles
        players = self._core.players()
        counts: dict[str, int] = {}
        self.possible_agents = []
        #: ``agent -> (team, entity id, role)``.
        self.players: dict[str, tuple[str, int, str]] = {}
        for team, entity, role in players:
            k = counts.get(team, 0)
            counts[team] = k + 1
            name = f"{team}_{k}"
            self.possible_agents.append(name)
            self.players[name] = (team, entity, role)
        obs_space = spaces.Box(-np.inf, np.inf, (self._core.obs_len,), np.float32)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(len(ACTIONS)) for a in self.possible_agents}
        self.state_space = spaces.Box(-np.inf, np.inf, (self._core.state_len,), np.float32)
        self._agents_known()

    def step(self, actions: dict[str, Any]):
        self._check_playing()
        arr = np.zeros(len(self.possible_agents), dtype=np.int64)
        for agent, action in actions.items():
            i = self._index_of(agent)
            a = np.asarray(action)
            if a.shape != () or not np.issubdtype(a.dtype, np.integer):
                raise ValueError(f"{agent}: action {action!r}: an integer index into ACTIONS")
            arr[i] = int(a)
        obs, reward, scorer, ball_out = self._core.step(arr)
        self._cycles += 1
        goal = scorer is not None
        truncate = self._cycles >= self._max_cycles and not goal
        team = ("cyan", "magenta")[scorer] if goal else None
        out = self.agents
        observations = {a: obs[self._index[a]] for a in out}
        rewards = {a: float(reward[self._index[a]]) for a in out}
        terminations = {a: goal for a in out}
        truncations = {a: truncate for a in out}
        infos = {a: {"goal": team, "ball_out": bool(ball_out)} for a in out}
        self.agents = [] if (goal or truncate) else list(out)
        return observations, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """The ground truth (``state_space``): ball x, y (m), vx, vy (m/s), then per robot,
        cyan's then magenta's, x, y (m), cos and sin of its heading, 1 if standing."""
        return self._core.state()

    def score(self) -> tuple[int, int]:
        """Goals ``(cyan, magenta)`` since the reset."""
        c, m, _ = self._core.score()
        return c, m


def parallel_env(**kwargs) -> FutRobTeamEnv:
    """The environment (``players_per_team``, ``opponent``, ``profile``, ``step_ms``,
    ``max_cycles``, ``shaping``; see :class:`FutRobTeamEnv`)."""
    return FutRobTeamEnv(**kwargs)
