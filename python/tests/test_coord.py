"""Robots and an operator on the GRI against a real `simrob coord serve`."""

import subprocess
from typing import Iterator

import pytest

from simrob import server
from simrob.coord import CoordError, Operator, Robot


@pytest.fixture
def cc() -> Iterator[server.Process]:
    binary = server.find_binary()
    if subprocess.run([binary, "coord", "--help"], capture_output=True).returncode != 0:
        pytest.skip("this simrob has no coord subcommand")
    with server.Process(["coord", "serve", "--port", "0", "--bid-window", "0.2"]) as p:
        yield p


def test_a_task_sent_to_a_robot_runs_to_the_end(cc: server.Process) -> None:
    with Robot(cc.address, 3, capabilities=["movement"]) as robot, Operator(cc.address) as op:
        robot.hello()
        assert "python" in op.report("robots")
        op.command("follow")
        op.send_task(3, {"goto": {"x": 1.5, "y": -2.0}}, task_id=7)
        # The task comes in the world of the robot it was given to (the hello's, `simrob` here).
        assert robot.next_task() == {
            "id": 7,
            "kind": {"goto": {"x": 1.5, "y": -2.0}},
            "world": "simrob",
        }
        robot.task_state(7, "running", 0.1)
        robot.task_state(7, "ended", 0.5)
        op.wait_for(["report"], lambda m: "task=7" in m["text"] and "RUNNING→ENDED" in m["text"])


def test_contract_net_awards_the_only_bidder(cc: server.Process) -> None:
    with Robot(cc.address, 5, capabilities=["perception"]) as robot, Operator(cc.address) as op:
        robot.hello()
        op.command("follow")
        op.announce({"perceive": {"seconds": 2.0}}, task_id=9)
        announce = robot.wait_for(["announce"])
        assert announce["task"]["id"] == 9
        robot.bid(announce["auction"], 1.25)
        award = robot.wait_for(["award"])
        assert (award["winner"], award["task"]["id"]) == (5, 9)
        robot.accept(award["auction"])
        op.wait_for(["report"], lambda m: "won" in m["text"] and "robot=5" in m["text"] and "task=9" in m["text"])


def test_a_robot_with_an_operators_id_is_refused(cc: server.Process) -> None:
    with Robot(cc.address, 0x40000001) as robot:
        with pytest.raises(CoordError) as e:
            robot.hello()
        assert "larger ids are the server's own" in str(e.value)


def test_each_request_gets_its_own_answer_and_a_refusal_raises(cc: server.Process) -> None:
    with Operator(cc.address) as op:
        op.command("follow")
        assert op.mode("hungarian") == "allocation policy: hungarian"
        assert op.submit({"goto": {"x": 560.0, "y": 440.0}}, world="swarm") == "task 1 submitted (hungarian)"
        # The table, not an earlier answer (nor a log line of the submission).
        assert op.report("tasks").startswith("task\trobot\tstate")
        with pytest.raises(CoordError) as e:
            op.send_task(9, {"goto": {"x": 1.0, "y": 1.0}})
        assert str(e.value) == "there is no robot 9"
        with pytest.raises(CoordError, match="beyond"):
            op.submit({"goto": {"x": 1e7, "y": 0.0}})
        assert op.abort(1) == "abort of task 1 sent"
        op.wait_for(["report"], lambda m: m["text"].startswith("tasks.log") and "abort" in m["text"])
