"""simrob for Python: the simulator in this process (``simrob.sim``: the 3D SimRob world,
the Mobile Robot Simulator, the swarm, the FutRob case studies), Gymnasium environments
(``simrob/SumBotBall-v0``, ``simrob/Nomad-v0``, registered on import when gymnasium is
installed), PettingZoo ones (``simrob.pettingzoo``) and the ``simrob`` command line; and the
network client: SimRob agents over UDP, Mobile Robot Simulator robots over TCP, FutRob team
messages (codec, spy, sender), robots and operators of ``simrob coord`` (the General Robot
Interface), and ``simrob`` processes started on free ports.

>>> from simrob import Agent, MrsClient, server
"""

from . import coord, protocol, server, sim, soccer
from .agent import Agent, NotRegistered, ServerError, SimRobError, Timeout
from .mrs import MrsClient, MrsError
from .protocol import AgentInformation, Body, Broadcast, EntityInfo, ProtocolError, Response

__all__ = [
    "Agent",
    "AgentInformation",
    "Body",
    "Broadcast",
    "EntityInfo",
    "MrsClient",
    "MrsError",
    "NotRegistered",
    "ProtocolError",
    "Response",
    "ServerError",
    "SimRobError",
    "Timeout",
    "coord",
    "protocol",
    "server",
    "sim",
    "soccer",
]

__version__ = "0.1.0"

try:  # The Gymnasium environments are registered when gymnasium is installed.
    import gymnasium as _gymnasium  # noqa: F401
except ImportError:
    pass
else:
    from . import gym as _gym  # noqa: F401
