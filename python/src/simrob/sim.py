"""The simulator in this process (the compiled extension ``simrob._native``).

- :class:`World`: the 3D SimRob world: any scenario file of SimRob XML messages, every world
  request of the SimRob manual (``request``), wheel commands, stepping, poses and bodies as
  numpy arrays, save and load.
- :class:`MrsWorld`: the Mobile Robot Simulator's world: Nomad-200 robots on a map, their 16
  sonars and 20 bumpers.
- :class:`Swarm`: a swarm scenario file (TOML or JSON, as ``simrob swarm run`` takes),
  stepped frame by frame, poses and velocities as arrays, its log and summary.
- :func:`futrob_trial`: one trial of a FutRob case study.
- :class:`SumBotBall`, :class:`NomadGoal`, :class:`DroneTargets`: the tasks behind the
  Gymnasium and PettingZoo environments, each a batch of worlds stepped in Rust.

Each is closed by ``close()`` or at the end of a ``with`` block (``with sim.World(path) as
w:``). Stepping releases the GIL; Ctrl-C stops a long ``step`` or ``run`` (``KeyboardInterrupt``, what
ran kept). Bad input (wrong shapes, NaN, unknown files, a request past the
limits a server holds it to, an object used after ``close()``) raises ``ValueError``,
``FileNotFoundError`` or ``RuntimeError``; the bad request does not run (of several
messages given to ``World.request`` at once, those before it stay applied).
"""

from __future__ import annotations

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


class World(_Closes, _native.World):
    __doc__ = _native.World.__doc__
    __slots__ = ()

    def _state(self) -> str:
        return f"{len(self.entity_ids())} entities, iteration {self.iteration}, {self.time:g} s"


class MrsWorld(_Closes, _native.MrsWorld):
    __doc__ = _native.MrsWorld.__doc__
    __slots__ = ()

    def _state(self) -> str:
        w, h = self.size
        return f"{len(self.poses()[0])} robots on {w:g} × {h:g} in, {self.time:g} s"


class Swarm(_Closes, _native.Swarm):
    __doc__ = _native.Swarm.__doc__
    __slots__ = ()

    def _state(self) -> str:
        end = ", ended" if self.finished else ""
        return f"{len(self.poses()[0])} entities, frame {self.frame}, {self.time:g} s{end}"


class SumBotBall(_Closes, _native.SumBotBall):
    __doc__ = _native.SumBotBall.__doc__
    __slots__ = ()

    def _state(self) -> str:
        return f"{len(self)} worlds"


class NomadGoal(_Closes, _native.NomadGoal):
    __doc__ = _native.NomadGoal.__doc__
    __slots__ = ()

    def _state(self) -> str:
        return f"{len(self)} worlds"


class DroneTargets(_Closes, _native.DroneTargets):
    __doc__ = _native.DroneTargets.__doc__
    __slots__ = ()

    def _state(self) -> str:
        return f"{len(self)} drones"


__all__ = [
    "DRONE_OBS",
    "MAX_BATCH",
    "MAX_FILE",
    "NOMAD_OBS",
    "SUMBOT_OBS",
    "DroneTargets",
    "MrsWorld",
    "NomadGoal",
    "SumBotBall",
    "Swarm",
    "World",
    "futrob_cases",
    "futrob_trial",
]
