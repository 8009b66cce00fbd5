"""The XML written and read, without a server."""

import xml.etree.ElementTree as ET

import pytest

from simrob import protocol as p

BROADCAST = (
    "<Broadcast><Iteration>7</Iteration><Part>2</Part><Parts>2</Parts><DrawData>"
    '<Body Type="Sphere"><Entity_id>4</Entity_id><Body_id>0</Body_id><Material>2</Material>'
    "<Mass>0.05</Mass><Radius>0.021</Radius><Position_X>0.1</Position_X><Position_Y>0.2</Position_Y>"
    "<Position_Z>0.3</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>1</Rotation_Z>"
    "<Linear_Velocity_X>0</Linear_Velocity_X><Linear_Velocity_Y>0</Linear_Velocity_Y><Linear_Velocity_Z>0</Linear_Velocity_Z>"
    "<Angular_Velocity_X>0</Angular_Velocity_X><Angular_Velocity_Y>0</Angular_Velocity_Y><Angular_Velocity_Z>0</Angular_Velocity_Z>"
    "</Body></DrawData><Entities_Info><Ball_Entity><Entity_Id>4</Entity_Id><Position><pos_x>0.1</pos_x>"
    "<pos_y>0.2</pos_y><pos_z>0.3</pos_z></Position><Rotation><rot_x>0</rot_x><rot_y>0</rot_y><rot_z>1</rot_z>"
    "</Rotation></Ball_Entity></Entities_Info></Broadcast>"
)


def test_a_broadcast_reads_into_dataclasses() -> None:
    b = p.decode_server_message(BROADCAST)
    assert isinstance(b, p.Broadcast)
    assert (b.iteration, b.part, b.parts) == (7, 2, 2)
    assert b.bodies[0].shape == "Sphere" and b.bodies[0].dims == {"Radius": 0.021}
    assert b.entity(4).kind == "Ball" and b.entity(4).position == (0.1, 0.2, 0.3)
    with pytest.raises(KeyError):
        b.entity(5)
    whole = p.merge_parts([b, p.Broadcast(iteration=7, part=1, parts=2)])
    assert whole.part is None and len(whole.bodies) == 1


def test_requests_are_well_formed_simrob_xml() -> None:
    m = ET.fromstring(p.motors(3, {0: 3.0, 1: -5.5}, confirm=True))
    req = m.find("Simulation_Message/Entity_Request")
    assert req is not None and req.get("Command") == "Robot_Motor_Control"
    assert [x.text for x in req.iter("Value")] == ["3.0", "-5.5"]
    assert req.findtext("Response") == "true"
    r = ET.fromstring(p.register_agent("a&b", 4000, "127.0.0.1", sync=True))
    assert r.find("Agent_Message").get("Agent_Type") == "RobotController"
    assert r.findtext("Agent_Message/Key") == "a&b"
    assert r.findtext("Agent_Message/Sync") == "true"
    with pytest.raises(ValueError):
        p.simple_control("set_timestep", float("nan"))


def test_bad_server_messages_are_protocol_errors() -> None:
    for bad in ["<Broadcast><Iteration>x</Iteration></Broadcast>", "not xml", "<Other/>"]:
        with pytest.raises(p.ProtocolError):
            p.decode_server_message(bad)
    assert p.decode_server_message("<Response>Error: no</Response>").is_error
