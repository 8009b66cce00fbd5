"""A SimRob agent over UDP: register, send every request of the SimRob manual, receive
responses and whole broadcasts, run in lockstep with the server."""

from __future__ import annotations

import collections
import ipaddress
import re
import socket
import time
from pathlib import Path
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Tuple, Union

from . import protocol as p
from ._udp import recvfrom_before
from .protocol import AgentInformation, Broadcast, Response, ServerMessage

DEFAULT_TIMEOUT = 2.0
"""Seconds :class:`Agent` waits for an answer unless told otherwise."""
# How often register() sends its request again while no confirmation comes, seconds.
_REGISTER_RESEND = 0.5
# A part this many iterations older than the newest broadcast being put together is late.
_STALE_PARTS = 64
# A Load's confirmation (whatever the command is called): the iterations start again there.
_LOADED = re.compile(r"^(?!Error: ).*: simulation loaded from .* at iteration \d+$", re.S)
# Step or sync mode's confirmation (whatever the command is called): from there the world
# waits for a Make_Step, or for Synchronize of the broadcasts that follow.
_MODE = re.compile(r"^(?!Error: )[^:]*: (Step|Sync) mode set to true$")
# Split broadcasts put together at once.
_ASSEMBLIES = 4
#: Messages an agent keeps at most (responses, agent information and broadcasts skipped
#: while waiting for a broadcast, a confirmation or an answer), for :meth:`Agent.recv`; the
#: broadcasts among them that came while a call waited are also for
#: :meth:`Agent.next_broadcast`. Past this the oldest message ``next_broadcast`` would not
#: give is dropped first (a response, agent information, a broadcast set aside), so a
#: broadcast the server waits on is not lost to unrelated messages; only when every kept
#: message is such a broadcast does the oldest of them go. Memory stays bounded either way.
PENDING_MAX = 1000
# The error the server sends every agent when the physics diverged on an entity: not the
# answer to a request.
_DIVERGED = re.compile(r"Error: entity \d+: the physics gave it a non-finite ")

Address = Tuple[str, int]


class SimRobError(Exception):
    """Base of the errors this package raises."""


class ServerError(SimRobError):
    """The server refused a request; the message is the server's own text (after
    ``Error: ``), which says what was wrong and where."""


class Timeout(SimRobError, TimeoutError):
    """No answer within the time given."""


class NotRegistered(SimRobError):
    """The call needs a registered agent: call :meth:`Agent.register` first."""


def _parse_address(server: Union[str, Address]) -> Address:
    if isinstance(server, str):
        host, _, port = server.rpartition(":")
        return (host or "127.0.0.1", int(port))
    return (server[0], int(server[1]))


class Agent:
    """One agent: a UDP socket talking to one SimRob server.

    ``server`` is ``("127.0.0.1", 5005)`` or ``"127.0.0.1:5005"``. Every request method takes
    ``confirm``: ``True`` (the default) asks the server for a confirmation, waits for it and
    returns its text, raising :class:`ServerError` with the server's message on an error;
    ``False`` sends and returns at once (what a controller does every iteration).

    The server sends a confirmation to every registered agent, and an error to the sender
    only. So a method waits for a confirmation that can be its own: the same command and,
    where the server's text names them, the same entity, materials or file
    (``Robot_Motor_Control: Motors of robot 3 set`` answers ``motors(3, …)``, not
    ``motors(4, …)``); other agents' confirmations are kept for :meth:`recv`. The protocol
    carries no request number, so two agents sending the same command for the same entity
    at about the same time cannot be told apart: each may take the other's confirmation
    (and a set command's value is not compared). Any error the server sends this agent
    raises :class:`ServerError`, even one for an earlier request sent with
    ``confirm=False``. At most :data:`PENDING_MAX` (1,000) skipped messages are kept for
    :meth:`recv`; past that the oldest one :meth:`next_broadcast` would not give goes first.
    """

    def __init__(self, server: Union[str, Address], timeout: float = DEFAULT_TIMEOUT) -> None:
        self.server: Address = _parse_address(server)
        self.timeout = timeout
        family, _, _, _, addr = socket.getaddrinfo(self.server[0], self.server[1], 0, socket.SOCK_DGRAM)[0]
        self._server_addr: Address = (str(addr[0]), int(addr[1]))
        self._sock = socket.socket(family, socket.SOCK_DGRAM)
        if ipaddress.ip_address(self._server_addr[0]).is_loopback:
            self._sock.bind((self._server_addr[0], 0))
        else:
            self._sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", 0))
        self.key: Optional[str] = None
        # Messages skipped by a wait, for recv (at most PENDING_MAX); those marked for_next
        # (broadcasts that came while a call waited) for next_broadcast too.
        self._pending: Deque[_Kept] = collections.deque()
        self._assembly: Dict[int, List[Broadcast]] = {}
        self._assembled: Optional[int] = None
        #: Set when a Load's confirmation came (the iterations went back to the saved one);
        #: a controller that skips iterations it already answered starts over then.
        self.rewound = False
        #: The newest whole broadcast received.
        self.last_broadcast: Optional[Broadcast] = None

    # -- plumbing ------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the socket; a registered agent first unregisters (without waiting for the
        confirmation), so that the server sends it nothing more and no longer waits for it in
        lockstep. Leaving a ``with`` block closes the agent, on Ctrl-C
        (``KeyboardInterrupt``) and errors too."""
        if self._sock.fileno() < 0:
            return
        if self.key is not None:
            try:
                self.send_raw(p.unregister_agent(self.key))
            except OSError:
                pass
            self.key = None
        self._sock.close()

    def __enter__(self) -> "Agent":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def local_address(self) -> Address:
        host, port = self._sock.getsockname()[:2]
        if host in ("0.0.0.0", "::"):
            probe = socket.socket(self._sock.family, socket.SOCK_DGRAM)
            try:
                probe.connect(self._server_addr)
                host = probe.getsockname()[0]
            finally:
                probe.close()
        return (host, port)

    def send_raw(self, xml: Union[str, bytes]) -> None:
        """Sends any XML as one datagram (even several ``<Message>`` roots)."""
        data = xml.encode() if isinstance(xml, str) else xml
        self._sock.sendto(data, self._server_addr)

    def send_file(self, path: Union[str, Path], timeout: Optional[float] = None) -> List[str]:
        """Sends every ``<Message>`` of a scenario file one by one, asking for a confirmation
        of each; returns the confirmations (raises :class:`ServerError` at the first error)."""
        import xml.etree.ElementTree as ET

        text = Path(path).read_text()
        # A file may hold several roots: wrap them to parse, then send each.
        body = text.split("?>", 1)[1] if text.lstrip().startswith("<?xml") else text
        root = ET.fromstring(f"<Messages>{body}</Messages>")
        answers = []
        for message in root.findall("Message"):
            request = message.find("Simulation_Message/*")
            if request is not None and request.find("Response") is None:
                ET.SubElement(request, "Response").text = "true"
            self.send_raw(ET.tostring(message))
            if request is not None:
                answers.append(self._wait_response(timeout, _command(request.get("Command", ""))))
        return answers

    def _recv_direct(self, timeout: float) -> Optional[ServerMessage]:
        deadline = time.monotonic() + timeout
        while True:
            got = recvfrom_before(self._sock, deadline, 65536)
            if got is None:
                return None
            data, sender = got
            if (sender[0], sender[1]) != self._server_addr:
                continue  # not from our server
            message = p.decode_server_message(data)
            if isinstance(message, Response) and _LOADED.search(message.text):
                # A Load winds the iterations back: the next broadcasts repeat iteration
                # numbers already delivered, and must be put together again.
                self._assembly.clear()
                self._assembled = None
                self.rewound = True
                # Broadcasts kept from before it are of iterations the Load undid.
                self._set_kept_broadcasts_aside()
            if isinstance(message, Response) and _MODE.match(message.text):
                # The broadcasts kept from before it are not waited on (the world ran
                # freely): next_broadcast gives a Make_Step's, or the one to synchronize.
                self._set_kept_broadcasts_aside()
            if isinstance(message, Broadcast):
                whole = self._assemble(message)
                if whole is None:
                    continue
                self.last_broadcast = whole
                return whole
            return message

    def _assemble(self, b: Broadcast) -> Optional[Broadcast]:
        if b.part is None or b.parts is None:
            return b
        done = self._assembled
        if done is not None and done - _STALE_PARTS <= b.iteration <= done:
            # A part of an iteration already delivered (late, duplicated): dropped (far
            # older: the world was started again).
            return None
        if b.iteration not in self._assembly and len(self._assembly) >= _ASSEMBLIES:
            # Parts of a few iterations cross on a jittery link; past that the oldest goes.
            del self._assembly[min(self._assembly)]
        pieces = self._assembly.setdefault(b.iteration, [])
        if all(x.part != b.part for x in pieces):  # a duplicate part is dropped
            pieces.append(b)
        if len(pieces) == b.parts:
            # Whole: older incomplete ones can no longer go out in order, and are dropped.
            for it in [i for i in self._assembly if i <= b.iteration]:
                del self._assembly[it]
            self._assembled = b.iteration
            return p.merge_parts(pieces)
        return None

    def recv(self, timeout: Optional[float] = None) -> Optional[ServerMessage]:
        """The next message (a response, agent information or a whole broadcast), or
        ``None`` after ``timeout`` seconds. Messages skipped by :meth:`next_broadcast` and by
        a wait for a confirmation come first (at most :data:`PENDING_MAX` of them, see there);
        a broadcast given here is not given by :meth:`next_broadcast` too."""
        if self._pending:
            return self._pending.popleft().message
        return self._recv_direct(self.timeout if timeout is None else timeout)

    def _keep(self, m: ServerMessage, for_next: bool = True) -> None:
        """Keeps ``m``, skipped by a wait: for :meth:`recv` and, a broadcast that came while
        a call waited for a confirmation or an answer, for :meth:`next_broadcast` too. At
        most :data:`PENDING_MAX`, the oldest one ``next_broadcast`` would not give dropped
        first."""
        if len(self._pending) >= PENDING_MAX:
            # A broadcast the server may be waiting on outlasts unrelated messages.
            at = next((i for i, k in enumerate(self._pending) if not k.for_next), 0)
            del self._pending[at]
        self._pending.append(_Kept(m, for_next and isinstance(m, Broadcast)))

    def _set_kept_broadcasts_aside(self) -> None:
        """The broadcasts kept so far are left for :meth:`recv` only."""
        for k in self._pending:
            k.for_next = False

    def next_broadcast(self, timeout: Optional[float] = None) -> Broadcast:
        """The next whole broadcast; responses meanwhile are kept for :meth:`recv`, at most
        :data:`PENDING_MAX` (1,000) messages in all, a lockstep loop that never calls
        :meth:`recv` does not grow; past that the oldest response goes, never before a
        broadcast kept for this call. Broadcasts that came while another
        call waited for a confirmation or an answer come first, in order, each once (one
        :meth:`recv` gave is not given again), so a lockstep controller may send confirmed
        requests between a broadcast and its ``Synchronize``, and after it. Those that came
        before the confirmation of step mode, sync mode (``Step mode set to true``, ``Sync
        mode set to true``) or a ``Load`` are left for :meth:`recv`: the next one is then a
        ``Make_Step``'s, one the server waits to be synchronized, or the loaded world's. After a
        ``Load``'s confirmation (:attr:`rewound`), iterations already delivered come again
        and are delivered again. Raises :class:`Timeout` when none comes in time."""
        for i, k in enumerate(self._pending):
            if k.for_next and isinstance(k.message, Broadcast):
                del self._pending[i]
                return k.message
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        kept: List[ServerMessage] = []
        try:
            while True:
                m = self._recv_direct(deadline - time.monotonic())
                if m is None:
                    raise Timeout(f"no broadcast from {self.server} within {limit} s")
                if isinstance(m, Broadcast):
                    return m
                kept.append(m)
        finally:
            for skipped in kept:
                self._keep(skipped, for_next=False)

    def _wait_response(self, timeout: Optional[float], accept: Callable[[str], bool] = lambda t: True) -> str:
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            m = self._recv_direct(deadline - time.monotonic())
            if m is None:
                raise Timeout(
                    f"no answer from {self.server} within {limit} s: the request or its "
                    "answer was lost, or no server listens there"
                )
            if isinstance(m, Response) and not _DIVERGED.match(m.text):
                if m.is_error:
                    raise ServerError(m.text[len(p.ERROR_PREFIX):])
                if accept(m.text):
                    return m.text
            # Kept at once: a confirmation that comes next may set aside the broadcasts
            # kept before it (step mode, a Load).
            self._keep(m)

    def _request(
        self, xml: str, confirm: bool, accept: Callable[[str], bool], timeout: Optional[float] = None
    ) -> Optional[str]:
        self.send_raw(xml)
        return self._wait_response(timeout, accept) if confirm else None

    # -- agent messages ------------------------------------------------------------------

    def register(
        self, key: str, agent_type: str = "RobotController", sync: bool = False,
        broadcast: float = 0.0, timeout: Optional[float] = None,
    ) -> str:
        """``Register_Agent`` under ``key`` with this socket's address; waits for the
        confirmation. ``broadcast``: seconds between broadcasts (0 = every iteration, -1 =
        never). ``agent_type``: ``RobotController``, ``GUI``, ``PosesOnly`` or another the
        server knows. Registering is safe to repeat, so over a lossy link the request is sent
        again every 0.5 s until confirmed, within ``timeout`` in all (then :class:`Timeout`).
        Other requests are never sent again: whether the server applied a request whose
        confirmation was lost is not known."""
        host, port = self.local_address
        xml = p.register_agent(key, port, host, agent_type, sync, broadcast)
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            self.send_raw(xml)
            left = deadline - time.monotonic()
            try:
                text = self._wait_response(
                    max(0.0, min(left, _REGISTER_RESEND)),
                    # its own confirmation, not another agent's removal naming the same key
                    lambda t: t.startswith(f"Sucessfully added agent with key {key},"),
                )
            except Timeout:
                if time.monotonic() < deadline:
                    continue
                raise Timeout(
                    f"no confirmation of Register_Agent from {self.server} within {limit} s: "
                    "is the server running there?"
                ) from None
            self.key = key
            return text

    def info(self, requested: str, timeout: Optional[float] = None) -> AgentInformation:
        """``Info_Request``: where agent ``requested`` is."""
        if self.key is None:
            raise NotRegistered("register before asking for other agents")
        self.send_raw(p.info_request(self.key, requested))
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            m = self._recv_direct(deadline - time.monotonic())
            if m is None:
                raise Timeout(f"no answer to Info_Request within {limit} s")
            if isinstance(m, AgentInformation):
                return m
            if isinstance(m, Response) and m.is_error:
                raise ServerError(m.text[len(p.ERROR_PREFIX):])
            self._keep(m)

    def unregister(self, timeout: Optional[float] = None) -> str:
        """``Unregister_Agent`` (a simrob extension): the server removes this agent, tells
        the other agents, and sends it nothing more; waits for the confirmation
        (``Removed agent with key …``). :meth:`close` sends it without waiting."""
        if self.key is None:
            raise NotRegistered("register before unregistering")
        key = self.key
        self.send_raw(p.unregister_agent(key))
        text = self._wait_response(timeout, lambda t: t.startswith(f"Removed agent with key {key},"))
        self.key = None
        return text

    def synchronize(self, iteration: int) -> None:
        """``Synchronize``: this agent finished ``iteration``."""
        if self.key is None:
            raise NotRegistered("register before synchronizing")
        self.send_raw(p.synchronize(self.key, iteration))

    def lockstep(
        self, act: Callable[[Broadcast, "Agent"], bool], timeout: float = 5.0,
        max_iterations: Optional[int] = None,
    ) -> int:
        """Waits for each broadcast, calls ``act(broadcast, agent)``, then synchronizes with
        its iteration; stops when ``act`` returns false (or after ``max_iterations``).
        Returns the last iteration handled."""
        last = 0
        count = 0
        while True:
            b = self.next_broadcast(timeout)
            go_on = act(b, self)
            self.synchronize(b.iteration)
            last = max(last, b.iteration)
            count += 1
            if not go_on or (max_iterations is not None and count >= max_iterations):
                return last

    # -- control requests ------------------------------------------------------------------

    def register_materials(
        self, materials: List[Tuple[int, str]], interactions: List[Mapping[str, float]],
        confirm: bool = True,
    ) -> Optional[str]:
        materials, interactions = list(materials), list(interactions)
        done = (
            f"Register_Materials_Interactions: Registered {len(materials)} materials and "
            f"{len(interactions)} interactions"
        )
        return self._request(
            p.materials_interactions(materials, interactions, confirm), confirm, lambda t: t == done
        )

    def create_entity(self, xml: str, confirm: bool = True) -> Optional[str]:
        """``Create_Entity`` from its ``<Control_Request>`` (or whole ``<Message>``) XML."""
        if "<Message" not in xml:
            xml = f"<Message><Simulation_Message>{xml}</Simulation_Message></Message>"
        if confirm and "<Response>" not in xml:
            xml = xml.replace("</Control_Request>", "<Response>true</Response></Control_Request>", 1)
        found = re.search(r"<Entity_id>\s*(\d+)\s*</Entity_id>", xml)
        accept = _command("Create_Entity")
        if found:
            suffix = f" entity {int(found.group(1))}"
            accept = lambda t: t.startswith("Create_Entity: Created ") and t.endswith(suffix)  # noqa: E731
        return self._request(xml, confirm, accept)

    def initialize(self, confirm: bool = True) -> Optional[str]:
        """``Initialize_Simulation``."""
        return self._request(
            p.control_request("Initialize_Simulation", confirm=confirm), confirm, _command("Initialize_Simulation")
        )

    def make_step(self, confirm: bool = True) -> Optional[str]:
        """``Make_Step``: one iteration in step mode."""
        return self._request(p.control_request("Make_Step", confirm=confirm), confirm, _command("Make_Step"))

    def _simple(self, method: str, value: Any, confirm: bool) -> Optional[str]:
        command = p.SIMPLE_CONTROLS[method][0]
        accept = _command(command)
        if method == "load":
            accept = _starts(f"Load: simulation loaded from {value} at iteration ")
        elif method == "save":
            name = Path(str(value)).name
            accept = lambda t: t.startswith("Save: simulation saved to ") and name in t  # noqa: E731
        return self._request(p.simple_control(method, value, confirm), confirm, accept)

    def set_step_mode(self, on: bool, confirm: bool = True) -> Optional[str]:
        return self._simple("set_step_mode", bool(on), confirm)

    def set_autoadjust_mode(self, on: bool, confirm: bool = True) -> Optional[str]:
        return self._simple("set_autoadjust_mode", bool(on), confirm)

    def set_sync_mode(self, on: bool, confirm: bool = True) -> Optional[str]:
        return self._simple("set_sync_mode", bool(on), confirm)

    def set_sync_wait(self, seconds: float, confirm: bool = True) -> Optional[str]:
        return self._simple("set_sync_wait", float(seconds), confirm)

    def set_timestep(self, seconds: float, confirm: bool = True) -> Optional[str]:
        return self._simple("set_timestep", float(seconds), confirm)

    def set_world_gravity(self, gravity: float, confirm: bool = True) -> Optional[str]:
        """Gravity along Z, m/s² (negative pulls down)."""
        return self._simple("set_world_gravity", float(gravity), confirm)

    def set_world_hardness(self, hardness: float, confirm: bool = True) -> Optional[str]:
        return self._simple("set_world_hardness", float(hardness), confirm)

    def set_world_bounciness(self, bounciness: float, confirm: bool = True) -> Optional[str]:
        return self._simple("set_world_bounciness", float(bounciness), confirm)

    def save(self, file: str, confirm: bool = True) -> Optional[str]:
        """``Save`` into the server's save directory; the confirmation taken names the file."""
        return self._simple("save", file, confirm)

    def load(self, file: str, confirm: bool = True) -> Optional[str]:
        return self._simple("load", file, confirm)

    def set_fast_mode(self, on: bool, confirm: bool = True) -> Optional[str]:
        return self._simple("set_fast_mode", bool(on), confirm)

    def set_steps_per_iteration(self, steps: int, confirm: bool = True) -> Optional[str]:
        return self._simple("set_steps_per_iteration", int(steps), confirm)

    def set_rolling_resistance(
        self, material_1: int, material_2: int, coefficient: float, confirm: bool = True
    ) -> Optional[str]:
        return self._request(
            p.rolling_resistance(material_1, material_2, coefficient, confirm), confirm,
            _starts(f"Set_Rolling_Resistance: Rolling resistance of materials {int(material_1)} and {int(material_2)} set to "),
        )

    # -- entity requests ---------------------------------------------------------------------

    def motors(self, entity_id: int, speeds: Mapping[int, float], confirm: bool = True) -> Optional[str]:
        """``Robot_Motor_Control``: ``{wheel joint id: rad/s}``; the confirmation taken names
        this robot."""
        done = f"Robot_Motor_Control: Motors of robot {int(entity_id)} set"
        return self._request(
            p.motors(entity_id, {j: float(v) for j, v in speeds.items()}, confirm), confirm, lambda t: t == done
        )

    def set_entity_position(
        self, entity_id: int, x: float, y: float, z: float, confirm: bool = True
    ) -> Optional[str]:
        """``Set_Entity_Position``; the confirmation taken names this entity."""
        moved = (
            f"Set_Entity_Position: Entity {int(entity_id)} moved to ",
            f"Set_Entity_Position: Humanoid {int(entity_id)} placed at ",
        )
        return self._request(
            p.set_entity_position(entity_id, (float(x), float(y), float(z)), confirm), confirm,
            lambda t: t.startswith(moved),
        )

    def humanoid_action(self, entity_id: int, name: str, confirm: bool = True, **params: Any) -> Optional[str]:
        """``Humanoid_Action``; the confirmation taken names this robot."""
        return self._request(
            p.humanoid_action(entity_id, name, params, confirm), confirm,
            _starts(f"Humanoid_Action: robot {int(entity_id)}: "),
        )


class _Kept:
    """A message skipped by a wait, kept for :meth:`Agent.recv`; ``for_next``: a broadcast
    :meth:`Agent.next_broadcast` gives too (one that came before a Load's or step or sync
    mode's confirmation is for ``recv`` only)."""

    __slots__ = ("message", "for_next")

    def __init__(self, message: ServerMessage, for_next: bool) -> None:
        self.message = message
        self.for_next = for_next


def _starts(prefix: str) -> Callable[[str], bool]:
    """Accepts a confirmation that starts with ``prefix``."""
    return lambda t: t.startswith(prefix)


def _command(command: str) -> Callable[[str], bool]:
    """Accepts a confirmation of ``command`` (the server prefixes it with ``Command: ``)."""
    return _starts(f"{command}: ")
