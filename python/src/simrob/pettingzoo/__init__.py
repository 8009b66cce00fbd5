"""PettingZoo parallel environments stepped in Rust; each module has ``parallel_env(**kwargs)``
(PettingZoo's convention):

- :mod:`simrob.pettingzoo.drones`: the drone swarm of HMR Sim's example, N drones each
  flying to its own target.
"""

#: The environment modules.
MODULES = ("drones",)
