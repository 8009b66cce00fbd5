"""The SimRob XML messages: requests written, server messages read.

Every request of the SimRob manual is built by a function returning the ``<Message>`` text;
:func:`decode_server_message` reads a ``<Response>`` or a ``<Broadcast>`` into the
dataclasses below. Units are SI (metres, radians, seconds); Z is up; rotations are extrinsic
X-Y-Z Euler angles (R = Rz·Ry·Rx).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union
from xml.sax.saxutils import escape, quoteattr

Vec3 = Tuple[float, float, float]

ERROR_PREFIX = "Error: "


class ProtocolError(ValueError):
    """A message from the server that is not SimRob XML."""


# ----------------------------------------------------------------------------------------
# Server → agent


@dataclass(frozen=True)
class Body:
    """One body of a broadcast (``<DrawData><Body>``)."""

    entity_id: int
    id: int
    shape: str
    material: int
    mass: float
    #: ``Radius``, ``Size_X/Y/Z``, ``Length`` as the shape has them, metres.
    dims: Dict[str, float]
    position: Vec3
    rotation: Vec3
    linear_velocity: Vec3
    angular_velocity: Vec3


@dataclass(frozen=True)
class EntityInfo:
    """A robot's or ball's reported pose (``<Entities_Info>``)."""

    kind: str  # "Robot" or "Ball"
    entity_id: int
    position: Vec3
    rotation: Vec3


@dataclass
class Broadcast:
    """The world at one iteration. ``part``/``parts`` are set only on one piece of a split
    broadcast; :class:`simrob.Agent` hands out whole ones."""

    iteration: int
    bodies: List[Body] = field(default_factory=list)
    entities: List[EntityInfo] = field(default_factory=list)
    part: Optional[int] = None
    parts: Optional[int] = None

    def entity(self, entity_id: int) -> EntityInfo:
        """The pose of robot or ball ``entity_id`` (KeyError if it is not in the broadcast)."""
        for e in self.entities:
            if e.entity_id == entity_id:
                return e
        raise KeyError(f"entity {entity_id} is not in broadcast {self.iteration}")

    def bodies_of(self, entity_id: int) -> List[Body]:
        return [b for b in self.bodies if b.entity_id == entity_id]

    def positions(self) -> Any:
        """Every body's position as an (n, 3) numpy array (rows in broadcast order)."""
        np = _numpy()
        return np.array([b.position for b in self.bodies], dtype=float).reshape(-1, 3)

    def body_array(self) -> Any:
        """Every body as an (n, 14) numpy array: entity, id, x, y, z, rx, ry, rz, vx, vy,
        vz, wx, wy, wz."""
        np = _numpy()
        rows = [
            (b.entity_id, b.id) + b.position + b.rotation + b.linear_velocity + b.angular_velocity
            for b in self.bodies
        ]
        return np.array(rows, dtype=float).reshape(-1, 14)

    def entity_array(self) -> Any:
        """Every robot's and ball's pose as an (n, 7) numpy array: entity, x, y, z, rx, ry, rz."""
        np = _numpy()
        rows = [(e.entity_id,) + e.position + e.rotation for e in self.entities]
        return np.array(rows, dtype=float).reshape(-1, 7)


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("reading broadcasts as arrays needs numpy: pip install numpy") from e
    return numpy


@dataclass(frozen=True)
class Response:
    """A ``<Response>``: a confirmation, or an error (``text`` starts with ``Error: ``)."""

    text: str

    @property
    def is_error(self) -> bool:
        return self.text.startswith(ERROR_PREFIX)


@dataclass(frozen=True)
class AgentInformation:
    """The answer to ``Info_Request``."""

    key: str
    port: int
    ip: str


ServerMessage = Union[Response, AgentInformation, Broadcast]


def _text(el: ET.Element, name: str) -> str:
    child = el.find(name)
    if child is None or child.text is None:
        raise ProtocolError(f"<{el.tag}> has no <{name}>")
    return child.text.strip()


def _parsed(el: ET.Element, name: str, kind: Any, what: str) -> Any:
    value = _text(el, name)
    try:
        return kind(value)
    except ValueError:
        raise ProtocolError(f"<{el.tag}><{name}>: {value!r} is not {what}") from None


def _float(el: ET.Element, name: str) -> float:
    return float(_parsed(el, name, float, "a number"))


def _int(el: ET.Element, name: str) -> int:
    return int(_parsed(el, name, int, "an integer"))


def _vec(el: ET.Element, names: Sequence[str]) -> Vec3:
    return (_float(el, names[0]), _float(el, names[1]), _float(el, names[2]))


_DIMS = ("Radius", "Size_X", "Size_Y", "Size_Z", "Length")


def _body(el: ET.Element) -> Body:
    dims = {name: _float(el, name) for name in _DIMS if el.find(name) is not None}
    return Body(
        entity_id=_int(el, "Entity_id"),
        id=_int(el, "Body_id"),
        shape=el.get("Type", ""),
        material=_int(el, "Material"),
        mass=_float(el, "Mass"),
        dims=dims,
        position=_vec(el, ("Position_X", "Position_Y", "Position_Z")),
        rotation=_vec(el, ("Rotation_X", "Rotation_Y", "Rotation_Z")),
        linear_velocity=_vec(el, ("Linear_Velocity_X", "Linear_Velocity_Y", "Linear_Velocity_Z")),
        angular_velocity=_vec(
            el, ("Angular_Velocity_X", "Angular_Velocity_Y", "Angular_Velocity_Z")
        ),
    )


def _entity(el: ET.Element) -> EntityInfo:
    kind = el.tag.replace("_Entity", "")
    pos = el.find("Position")
    rot = el.find("Rotation")
    if pos is None or rot is None:
        raise ProtocolError(f"<{el.tag}> needs <Position> and <Rotation>")
    return EntityInfo(
        kind=kind,
        entity_id=_int(el, "Entity_Id"),
        position=_vec(pos, ("pos_x", "pos_y", "pos_z")),
        rotation=_vec(rot, ("rot_x", "rot_y", "rot_z")),
    )


def decode_server_message(data: Union[bytes, str]) -> ServerMessage:
    """Reads one datagram from the server: a response or a (piece of a) broadcast."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise ProtocolError(f"not XML: {e}") from None
    if root.tag == "Response":
        info = root.find("Agent_Information")
        if info is not None:
            return AgentInformation(_text(info, "Key"), _int(info, "Port"), _text(info, "IP"))
        return Response((root.text or "").strip())
    if root.tag == "Broadcast":
        b = Broadcast(iteration=_int(root, "Iteration"))
        if root.find("Part") is not None:
            b.part, b.parts = _int(root, "Part"), _int(root, "Parts")
        draw = root.find("DrawData")
        if draw is not None:
            b.bodies = [_body(el) for el in draw.findall("Body")]
        info = root.find("Entities_Info")
        if info is not None:
            b.entities = [_entity(el) for el in info]
        return b
    raise ProtocolError(f"unexpected message <{root.tag}>")


# ----------------------------------------------------------------------------------------
# Agent → server


def _leaf(name: str, value: Union[str, float, int, bool]) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"<{name}>: {value} is not a finite number")
        text = repr(value)
    else:
        text = escape(value)
    return f"<{name}>{text}</{name}>"


def _response(confirm: Optional[bool]) -> str:
    return "" if confirm is None else _leaf("Response", confirm)


def agent_message(command: str, body: str, attrs: str = "") -> str:
    return f'<Message><Agent_Message Command="{command}"{attrs}>{body}</Agent_Message></Message>'


def control_request(
    command: str, body: str = "", confirm: Optional[bool] = None, attrs: str = ""
) -> str:
    return (
        f'<Message><Simulation_Message><Control_Request Command="{command}"{attrs}>'
        f"{body}{_response(confirm)}</Control_Request></Simulation_Message></Message>"
    )


def entity_request(command: str, entity_id: int, body: str, confirm: Optional[bool] = None) -> str:
    return (
        f'<Message><Simulation_Message><Entity_Request Command="{command}">'
        f"{_leaf('Entity_id', int(entity_id))}{body}{_response(confirm)}"
        "</Entity_Request></Simulation_Message></Message>"
    )


def register_agent(
    key: str, port: int, ip: str, agent_type: str = "RobotController", sync: bool = False,
    broadcast: float = 0.0,
) -> str:
    body = (
        _leaf("Port", int(port)) + _leaf("IP", ip) + _leaf("Sync", sync)
        + _leaf("Broadcast", broadcast) + _leaf("Key", key)
    )
    return agent_message("Register_Agent", body, f" Agent_Type={quoteattr(agent_type)}")


def info_request(requester: str, requested: str) -> str:
    return agent_message("Info_Request", _leaf("Requester", requester) + _leaf("Requested", requested))


def synchronize(key: str, iteration: int) -> str:
    return agent_message("Synchronize", _leaf("Key", key) + _leaf("Iteration", int(iteration)))


def unregister_agent(key: str) -> str:
    """``Unregister_Agent`` (a simrob extension, not in the SimRob manual): the agent stops."""
    return agent_message("Unregister_Agent", _leaf("Key", key))


def materials_interactions(
    materials: Iterable[Tuple[int, str]], interactions: Iterable[Mapping[str, float]],
    confirm: Optional[bool] = None,
) -> str:
    """``Register_Materials_Interactions``: materials as (id, name); interactions as mappings
    with ``material_1``, ``material_2``, ``hardness``, ``bounciness``, ``slip1``, ``slip2``,
    ``friction``."""
    body = "".join(
        f"<Material>{_leaf('Material_Id', int(i))}{_leaf('Material_Name', n)}</Material>"
        for i, n in materials
    )
    for it in interactions:
        body += "<Interaction>" + "".join(
            _leaf(name, it[name.lower()])
            for name in ("Material_1", "Material_2", "Hardness", "Bounciness", "Slip1", "Slip2", "Friction")
        ) + "</Interaction>"
    return control_request("Register_Materials_Interactions", body, confirm)


def motors(entity_id: int, speeds: Mapping[int, float], confirm: Optional[bool] = None) -> str:
    """``Robot_Motor_Control``: wheel joint id → angular speed (rad/s)."""
    body = "<Motors>" + "".join(
        f"<Motor>{_leaf('Wheel_Joint_Id', int(j))}{_leaf('Value', v)}</Motor>"
        for j, v in speeds.items()
    ) + "</Motors>"
    return entity_request("Robot_Motor_Control", entity_id, body, confirm)


def set_entity_position(entity_id: int, position: Vec3, confirm: Optional[bool] = None) -> str:
    x, y, z = position
    body = _leaf("Position_X", x) + _leaf("Position_Y", y) + _leaf("Position_Z", z)
    return entity_request("Set_Entity_Position", entity_id, body, confirm)


def humanoid_action(
    entity_id: int, name: str, params: Mapping[str, Any], confirm: Optional[bool] = None
) -> str:
    attrs = "".join(f" {k}={quoteattr(str(v))}" for k, v in params.items())
    return entity_request("Humanoid_Action", entity_id, f"<Action name={quoteattr(name)}{attrs}/>", confirm)


#: Control requests with one value: method name → (command, element).
SIMPLE_CONTROLS: Dict[str, Tuple[str, str]] = {
    "set_step_mode": ("Set_Step_Mode", "Step_Mode"),
    "set_autoadjust_mode": ("Set_AutoAdjust_Mode", "AutoAdjust_Mode"),
    "set_sync_mode": ("Set_Sync_Mode", "Sync_Mode"),
    "set_sync_wait": ("Set_Sync_Wait", "Sync_Wait"),
    "set_timestep": ("Set_Timestep", "Timestep"),
    "set_world_gravity": ("Set_World_Gravity", "Gravity"),
    "set_world_hardness": ("Set_World_Hardness", "Hardness"),
    "set_world_bounciness": ("Set_World_Bounciness", "Bounciness"),
    "save": ("Save", "File"),
    "load": ("Load", "File"),
    "set_fast_mode": ("Set_Fast_Mode", "Fast_Mode"),
    "set_steps_per_iteration": ("Set_Steps_Per_Iteration", "Steps_Per_Iteration"),
}


def simple_control(method: str, value: Union[bool, float, int, str], confirm: Optional[bool] = None) -> str:
    command, element = SIMPLE_CONTROLS[method]
    return control_request(command, _leaf(element, value), confirm)


def rolling_resistance(material_1: int, material_2: int, coefficient: float, confirm: Optional[bool] = None) -> str:
    body = _leaf("Material_1", int(material_1)) + _leaf("Material_2", int(material_2)) + _leaf("Coefficient", coefficient)
    return control_request("Set_Rolling_Resistance", body, confirm)


def merge_parts(parts: List[Broadcast]) -> Broadcast:
    """Puts the pieces of one split broadcast back together, in part order."""
    parts = sorted(parts, key=lambda p: p.part or 0)
    whole = Broadcast(iteration=parts[0].iteration)
    for p in parts:
        whole.bodies.extend(p.bodies)
        whole.entities.extend(p.entities)
    return whole
