"""simrob for Python: SimRob agents over UDP, Mobile Robot Simulator robots over TCP, FutRob
team messages (codec, spy, sender), robots and operators of ``simrob coord`` (the General
Robot Interface), and ``simrob`` processes started on free ports.

>>> from simrob import Agent, MrsClient, server
"""

from . import coord, protocol, server, soccer
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
    "soccer",
]

__version__ = "0.1.0"
