"""PettingZoo parallel environments stepped in Rust; each module has ``parallel_env(**kwargs)``
(PettingZoo's convention):

- :mod:`simrob.pettingzoo.drones`: the drone swarm of HMR Sim's example, N drones each
  flying to its own target.
- :mod:`simrob.pettingzoo.futrob`: FutRob's team task, KidSize humanoids whose FutRob actions
  are chosen by the agents, one or both teams.
"""

#: The environment modules.
MODULES = ("drones", "futrob")
