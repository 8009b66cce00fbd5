"""PettingZoo parallel environments stepped in Rust; each module has ``parallel_env(**kwargs)``
(PettingZoo's convention):

- :mod:`simrob.pettingzoo.drones`: the drone swarm of HMR Sim's example, N drones each
  flying to its own target.
- :mod:`simrob.pettingzoo.futrob`: FutRob's team task, KidSize humanoids whose FutRob actions
  are chosen by the agents, one or both teams.
"""

#: The environment modules.
MODULES = ("drones", "futrob")

try:
    import gymnasium as _gymnasium  # noqa: F401
    import pettingzoo as _pettingzoo  # noqa: F401
except ModuleNotFoundError as _e:  # the `pettingzoo` extra not installed
    if _e.name not in ("gymnasium", "pettingzoo"):
        raise
    from ..sim import _missing

    raise _missing(_e.name, "[pettingzoo]", "simrob.pettingzoo") from _e
