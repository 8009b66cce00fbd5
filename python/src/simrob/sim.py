"""The simulator in this process (the compiled extension ``simrob._native``).

- :class:`World`: the 3D SimRob world: any scenario file of SimRob XML messages, every world
  request of the SimRob manual (``request``), wheel commands, stepping, poses and bodies as
  numpy arrays, save and load.
- :class:`MrsWorld`: the Mobile Robot Simulator's world: Nomad-200 robots on a map, their 16
  sonars and 20 bumpers.
- :class:`Swarm`: a swarm scenario file (TOML or JSON, as ``simrob swarm run`` takes) or a
  bundled one by name (``hospital``, ``drone-swarm``, ``warehouse``), stepped frame by frame,
  poses and velocities as arrays, its log and summary.
- :func:`futrob_trial`: one trial of a FutRob case study.
- :class:`SumBotBall`, :class:`NomadGoal`, :class:`DroneTargets`, :class:`FutRobTeam`: the
  tasks behind the Gymnasium and PettingZoo environments, stepped in Rust.

Each is closed by ``close()`` or at the end of a ``with`` block (``with sim.World(path) as
w:``). Stepping releases the GIL; Ctrl-C stops a long ``step`` or ``run`` (``KeyboardInterrupt``, what
ran kept). Bad input (wrong shapes, NaN, unknown files, a request past the
limits a server holds it to, an object used after ``close()``) raises ``ValueError``,
``FileNotFoundError`` or ``RuntimeError``; the bad request does not run (of several
messages given to ``World.request`` at once, those before it stay applied).
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING

from . import _native
from ._native import (
    DRONE_OBS,
    MAX_BATCH,
    MAX_FILE,
    NOMAD_OBS,
    SUMBOT_OBS,
    futrob_cases,
    futrob_trial,
)


class _Closes:
    """``with`` closes the object when the block ends, an error in it included; ``repr``
    says what it holds (``_state``), or that it is closed."""

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False

    def _state(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        try:
            state = self._state()
        except RuntimeError:  # closed
            state = "closed"
        return f"<simrob.sim.{type(self).__name__}: {state}>"


def _missing(package: str, extra: str, what: str) -> ModuleNotFoundError:
    """The error for ``what`` without ``package``: its name and the command that installs it."""
    return ModuleNotFoundError(
        f"{what} needs {package}, which is not installed: pip install './python{extra}' "
        f"(from simrob's source tree; it installs {package}), or pip install {package}",
        name=package,
    )


def _require_numpy() -> None:
    """Raises :class:`ModuleNotFoundError` naming numpy and how to install it when numpy cannot
    be imported: the worlds return their poses and observations as numpy arrays, and without
    numpy the extension would fail on the first one."""
    try:
        importlib.import_module("numpy")
    except ImportError as e:
        raise _missing("numpy", "", "simrob.sim") from e


def _closing(native: type, state) -> type:
    """``native`` with :class:`_Closes`, its ``repr`` saying ``state(self)``; making one checks
    that numpy is there first (:func:`_require_numpy`)."""
    name = native.__name__

    def __new__(cls, *args, **kwargs):
        _require_numpy()
        return native.__new__(cls, *args, **kwargs)

    try:  # `help()` and `inspect` show the extension's parameters, not `*args, **kwargs`.
        signature = inspect.signature(native)
    except (TypeError, ValueError):
        signature = None
    body = {
        "__doc__": native.__doc__,
        "__module__": __name__,
        "__qualname__": name,
        "__slots__": (),
        "__new__": __new__,
        "__signature__": signature,
        "_state": state,
    }
    return type(name, (_Closes, native), body)


def _count(n: int, one: str, many: str) -> str:
    """``1 robot``, ``2 robots``."""
    return f"{n} {one if n == 1 else many}"


def _team_state(team) -> str:
    """``2 agents, 12.4 s`` (``not reset`` before the first reset)."""
    if team.closed:
        raise RuntimeError("closed")
    agents = _count(len(team.players()), "agent", "agents")
    try:
        return f"{agents}, {team.sim_time():g} s"
    except RuntimeError:
        return f"{agents}, not reset"


if TYPE_CHECKING:  # Type checkers see the extension's classes (`_native.pyi`), `with` included.
    from ._native import DroneTargets, FutRobTeam, MrsWorld, NomadGoal, SumBotBall, Swarm, World
else:
    World = _closing(
        _native.World,
        lambda w: f"{_count(len(w.entity_ids()), 'entity', 'entities')}, iteration {w.iteration}, {w.time:g} s",
    )
    MrsWorld = _closing(
        _native.MrsWorld,
        lambda m: f"{_count(len(m.poses()[0]), 'robot', 'robots')} on {m.size[0]:g} × {m.size[1]:g} in, {m.time:g} s",
    )
    Swarm = _closing(
        _native.Swarm,
        lambda s: f"{_count(s.summary()['entities'], 'entity', 'entities')}, frame {s.frame}, {s.time:g} s"
        + (", ended" if s.finished else ""),
    )
    SumBotBall = _closing(_native.SumBotBall, lambda b: _count(len(b), "world", "worlds"))
    NomadGoal = _closing(_native.NomadGoal, lambda b: _count(len(b), "world", "worlds"))
    DroneTargets = _closing(_native.DroneTargets, lambda b: _count(len(b), "drone", "drones"))
    FutRobTeam = _closing(_native.FutRobTeam, _team_state)


__all__ = [
    "DRONE_OBS",
    "MAX_BATCH",
    "MAX_FILE",
    "NOMAD_OBS",
    "SUMBOT_OBS",
    "DroneTargets",
    "FutRobTeam",
    "MrsWorld",
    "NomadGoal",
    "SumBotBall",
    "Swarm",
    "World",
    "futrob_cases",
    "futrob_trial",
]
