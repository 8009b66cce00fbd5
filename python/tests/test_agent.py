"""A SimRob agent against a real `simrob serve`."""

from pathlib import Path

import pytest

from simrob import Agent, ServerError, SimRobError, Timeout
from simrob.server import Process


def test_register_info_and_confirmations(sim: Process) -> None:
    with Agent(sim.address) as agent:
        text = agent.register("py")
        assert "key py," in text
        info = agent.info("py")
        assert (info.key, info.port) == ("py", agent.local_address[1])
        assert agent.set_timestep(0.02) == "Set_Timestep: Timestep set to 0.02"
        assert agent.motors(3, {0: 1.0, 1: 1.0}) == "Robot_Motor_Control: Motors of robot 3 set"
        with pytest.raises(ServerError) as e:
            agent.info("nobody")
        assert "nobody" in str(e.value)


def test_errors_carry_the_servers_text(sim: Process) -> None:
    with Agent(sim.address) as agent:
        agent.register("err")
        with pytest.raises(ServerError) as e:
            agent.set_timestep(-1.0)
        assert "Timestep" in str(e.value)
        with pytest.raises(ServerError) as e:
            agent.motors(99, {0: 1.0})
        assert str(e.value) == "Robot_Motor_Control: entity 99 does not exist"


def test_lockstep_drives_the_sumbot(sim: Process) -> None:
    with Agent(sim.address) as agent:
        agent.register("driver", sync=True)
        agent.set_sync_mode(True)
        agent.initialize()
        seen = []

        def act(b, a):  # type: ignore[no-untyped-def]
            seen.append(b.iteration)
            if len(seen) == 50:  # landed: drive towards -X
                a.motors(3, {0: 6.0, 1: 6.0}, confirm=False)
            return len(seen) < 300

        first = agent.next_broadcast(5.0)
        start = first.entity(3).position
        agent.synchronize(first.iteration)
        agent.lockstep(act)
        # Lockstep: one broadcast per iteration, none skipped.
        assert seen == list(range(seen[0], seen[0] + 300))
        end = agent.last_broadcast.entity(3).position  # type: ignore[union-attr]
        assert end[0] < start[0] - 0.05, (start, end)
        ball = agent.last_broadcast.entity(8)  # type: ignore[union-attr]
        assert ball.kind == "Ball"
        try:
            import numpy as np
        except ImportError:
            return
        arr = agent.last_broadcast.entity_array()  # type: ignore[union-attr]
        assert arr.shape[1] == 7 and np.isclose(arr[arr[:, 0] == 3][0, 1], end[0])


def test_a_controller_run_again_takes_its_key_over(sim: Process) -> None:
    # The first run is killed in the middle of an iteration (it never synchronizes it, nor
    # unregisters); the second run, from a new port, registers the same key and drives on
    # in lockstep.
    with Agent(sim.address) as first:
        first.register("rerun", sync=True)
        first.set_sync_mode(True)
        first.initialize()
        first.next_broadcast(5.0)
        # The server now waits for the first run's Synchronize (at most 10 s) before it sends
        # its closed port anything, whose bounce would remove the key before the second run
        # registers it: the move is what this test is about, however slow the machine.
        first.set_sync_wait(10.0)
        first.key = None  # killed: nothing is sent when it closes
    with Agent(sim.address) as second:
        text = second.register("rerun", sync=True)
        assert "key rerun," in text and "(moved from 127.0.0.1:" in text, text
        seen = []

        def act(b, a):  # type: ignore[no-untyped-def]
            seen.append(b.iteration)
            return len(seen) < 20

        second.lockstep(act)
        assert seen == list(range(seen[0], seen[0] + 20))


def test_an_agent_that_stops_unregisters_and_the_others_are_told(sim: Process) -> None:
    with Agent(sim.address) as watcher:
        watcher.register("watcher", agent_type="GUI", broadcast=-1)
        for run in range(2):
            with Agent(sim.address) as ctl:
                text = ctl.register("ctl", sync=True)
                assert "moved from" not in text, (run, text)
                ctl.set_sync_mode(True)
                ctl.initialize()
                ctl.lockstep(lambda b, a: False)
            # Leaving the with block unregistered it: the watcher is told.
            told = watcher._wait_response(10.0, lambda t: t.startswith("Removed agent with key ctl,"))
            assert told.endswith(": it unregistered"), told
        with Agent(sim.address) as ctl:
            ctl.register("ctl")
            assert ctl.unregister().startswith("Removed agent with key ctl,")
            with pytest.raises(SimRobError):
                ctl.unregister()


def test_a_lockstep_controller_may_send_confirmed_requests_while_a_broadcast_waits(sim: Process) -> None:
    """A broadcast that came while a confirmed request or an Info_Request waited is the next
    one next_broadcast gives (it was left for recv only, and the controller waited for the
    following one, which the server sends after the whole Sync_Wait)."""
    import select

    from simrob.protocol import Broadcast

    with Agent(sim.address) as agent:
        agent.register("eager", sync=True)
        agent.set_sync_wait(10.0)  # a broadcast set aside holds the next one 10 s
        agent.set_sync_mode(True)
        agent.initialize()
        b = agent.next_broadcast(5.0)
        seen = [b.iteration]
        while agent.recv(0.0) is not None:
            pass  # what came before sync mode, kept for recv
        for i in range(10):
            agent.motors(3, {0: 1.0, 1: 1.0})  # before Synchronize: nothing waits
            agent.synchronize(b.iteration)
            # The next broadcast is in before the requests go: their waits meet it first.
            readable, _, _ = select.select([agent._sock], [], [], 5.0)
            assert readable, f"no broadcast after iteration {b.iteration}"
            agent.motors(3, {0: 2.0, 1: 2.0})
            assert agent.info("eager").key == "eager"
            if i == 5:
                # recv takes it instead: next_broadcast does not give it again.
                m = agent.recv(0.0)
                assert isinstance(m, Broadcast) and m.iteration == b.iteration + 1, m
                seen.append(m.iteration)
                agent.synchronize(m.iteration)
            # Far less than the Sync_Wait: a broadcast set aside fails here.
            b = agent.next_broadcast(5.0)
            seen.append(b.iteration)
        assert seen == list(range(seen[0], seen[0] + 12)), seen
        assert agent.recv(0.0) is None  # each delivered once: nothing left over


def test_step_mode_advances_one_iteration_per_make_step(sim: Process) -> None:
    with Agent(sim.address) as agent:
        agent.register("stepper")
        agent.initialize()
        agent.set_step_mode(True)
        agent.make_step()
        before = agent.next_broadcast(5.0).iteration
        for _ in range(3):
            agent.make_step()
        iterations = set()
        while True:
            b = agent.next_broadcast(5.0)
            iterations.add(b.iteration)
            if b.iteration >= before + 3:
                break
        assert max(iterations) == before + 3
        with pytest.raises(Timeout):
            agent.next_broadcast(0.3)  # paused: nothing more


def test_save_and_load_stay_in_the_save_directory(sim: Process, tmp_path: Path) -> None:
    with Agent(sim.address) as agent:
        agent.register("saver")
        agent.initialize()
        assert agent.save("state.xml")
        assert (tmp_path / "state.xml").exists()
        assert agent.load("state.xml")
        with pytest.raises(ServerError):
            agent.save("../outside.xml")
        assert not (tmp_path.parent / "outside.xml").exists()


def test_a_scenario_file_is_sent_message_by_message(sim: Process, repo: Path) -> None:
    with Agent(sim.address) as agent:
        agent.register("loader")
        with pytest.raises(ServerError) as e:
            agent.send_file(repo / "scenarios" / "sumbot.xml")  # entity 3 exists already
        assert "3" in str(e.value)


def test_a_server_that_fails_to_start_says_why(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-scenario.xml"
    with pytest.raises(SimRobError) as e:
        Process(["serve", "--port", "0", "--scenario", str(missing)])
    text = str(e.value)
    assert "exited with status 1 before it was ready" in text, text
    assert "cannot read scenario" in text, text
    assert "did not start within" not in text, text


def test_split_broadcasts_go_out_whole_and_in_order_or_not_at_all() -> None:
    """Parts that cross, come twice or come late (a lossy, jittery link): no half world."""
    from simrob.protocol import Broadcast

    def part(it: int, k: int, n: int = 3) -> Broadcast:
        # The bodies stand for the part's content (only counted here).
        return Broadcast(iteration=it, bodies=[(it, k)], part=k, parts=n)  # type: ignore[list-item]

    agent = Agent(("127.0.0.1", 9))
    try:
        got = [agent._assemble(b) for b in [
            part(5, 1), part(6, 1), part(5, 2), part(6, 2), part(6, 2),  # crossed, a duplicate
            part(6, 3),  # 6 complete: 5, older and incomplete, is dropped whole
            part(5, 3),  # late: 6 went out already
            part(7, 1), part(7, 3),  # 7 loses part 2: never goes out
            part(8, 2), part(8, 1), part(8, 3),
        ]]
    finally:
        agent.close()
    whole = [b for b in got if b is not None]
    assert [b.iteration for b in whole] == [6, 8]
    assert [b.bodies for b in whole] == [[(6, 1), (6, 2), (6, 3)], [(8, 1), (8, 2), (8, 3)]]
    assert all(b.part is None for b in whole)


def test_a_call_takes_only_its_own_confirmation_not_a_classmates(sim: Process) -> None:
    # The server confirms a request to every agent and sends an error to its sender only:
    # carol's calls must not report bob's confirmations as their own.
    from simrob import protocol

    with Agent(sim.address) as bob, Agent(sim.address) as carol:
        bob.register("bob", broadcast=-1)
        carol.register("carol", broadcast=-1)
        for _ in range(5):
            # Bob's confirmation reaches carol before the answer to her own request.
            bob.send_raw(protocol.motors(3, {0: 1.0, 1: 1.0}, confirm=True))
            with pytest.raises(ServerError) as e:
                carol.motors(999, {0: 1.0})
            assert "999" in str(e.value)
            bob.send_raw(protocol.set_entity_position(8, (0.0, 0.0, 0.2), confirm=True))
            assert carol.motors(3, {0: 2.0}) == "Robot_Motor_Control: Motors of robot 3 set"
            bob.send_raw(protocol.motors(3, {0: 1.0}, confirm=True))
            assert carol.set_entity_position(8, 0.0, 0.0, 0.2).startswith(
                "Set_Entity_Position: Entity 8 moved to "
            )
        # Bob's confirmations are still there for carol's recv(), in order.
        seen = [carol.recv(5.0) for _ in range(15)]
        texts = [getattr(m, "text", None) for m in seen]
        assert texts == [
            "Robot_Motor_Control: Motors of robot 3 set",
            "Set_Entity_Position: Entity 8 moved to (0, 0, 0.2)",
            "Robot_Motor_Control: Motors of robot 3 set",
        ] * 5, texts


def test_responses_skipped_while_waiting_for_broadcasts_are_bounded(sim: Process) -> None:
    # A lockstep loop that never calls recv() beside a chatty classmate keeps only the latest
    # 1,000 skipped messages (simrob.agent.PENDING_MAX, as documented).
    from simrob import protocol

    PENDING_MAX = 1000

    with Agent(sim.address) as bob, Agent(sim.address) as carol:
        bob.register("bob", broadcast=-1)
        bob.initialize()
        bob.set_step_mode(True)
        # Carol joins once the world waits for steps: a broadcast only after each burst.
        carol.register("carol")
        confirmed = 0
        rounds = 0
        while confirmed <= PENDING_MAX + 100:
            # 50 confirmations carol skips, then one step: one broadcast after them.
            burst = protocol.motors(3, {0: float(rounds)}, confirm=True) * 50
            bob.send_raw(burst + protocol.control_request("Make_Step", confirm=False))
            confirmed += 50
            rounds += 1
            carol.next_broadcast(5.0)
        assert len(carol._pending) == PENDING_MAX
        assert all(getattr(k.message, "text", "").startswith("Robot_Motor_Control: ") for k in carol._pending)
        first = carol.recv(0.0)
        assert first is not None and first.text == "Robot_Motor_Control: Motors of robot 3 set"  # type: ignore[union-attr]
        from simrob.agent import PENDING_MAX as documented

        assert documented == PENDING_MAX


def test_a_kept_broadcast_outlasts_a_full_buffer_of_other_agents_confirmations() -> None:
    """More than PENDING_MAX classmates' confirmations while a call waits for its own, after
    the broadcast the server waits on: the broadcast stays (for next_broadcast, or recv
    first, as the oldest kept), the oldest confirmations go, and no more than PENDING_MAX
    messages are kept in all."""
    import socket
    import threading
    from typing import List

    from simrob.agent import PENDING_MAX
    from simrob.protocol import Broadcast

    burst = 50  # what a loopback socket holds at once
    requests = PENDING_MAX // burst + 2
    others = requests * burst

    def other(n: int) -> str:
        return f"Set_Entity_Position: Entity 8 moved to ({n}, 0, 0)"

    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.settimeout(10.0)
    script: List[List[str]] = []
    for _ in range(2):
        script.append(["<Response>Sucessfully added agent with key k, at 127.0.0.1:1</Response>"])
        for r in range(requests):
            answers = ["<Broadcast><Iteration>1</Iteration></Broadcast>"] if r == 0 else []
            answers += [f"<Response>{other(r * burst + i)}</Response>" for i in range(burst)]
            answers.append("<Response>Robot_Motor_Control: Motors of robot 3 set</Response>")
            script.append(answers)

    def serve() -> None:
        # Answers each datagram with the next of the script, in order.
        for answers in script:
            try:
                _, agent = server.recvfrom(65536)
            except OSError:
                return
            for a in answers:
                server.sendto(a.encode(), agent)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        for drain_with_recv in (False, True):
            with Agent(server.getsockname()) as agent:
                agent.register("k")
                for _ in range(requests):
                    agent.motors(3, {0: 1.0})
                assert len(agent._pending) == PENDING_MAX
                if drain_with_recv:
                    first = agent.recv(0.0)
                    assert isinstance(first, Broadcast) and first.iteration == 1, first
                else:
                    assert agent.next_broadcast(0.0).iteration == 1
                texts = []
                while (m := agent.recv(0.0)) is not None:
                    texts.append(getattr(m, "text", m))
                assert texts == [other(n) for n in range(others + 1 - PENDING_MAX, others)]
                agent.key = None  # the script does not expect Unregister_Agent
        thread.join(10.0)
    finally:
        server.close()


def test_lockstep_goes_on_across_a_load_that_winds_the_iterations_back(tmp_path: Path, repo: Path) -> None:
    """Split broadcasts of iterations already delivered come again after a Load: the client
    puts them together again instead of dropping them as late parts (which held every
    iteration the whole Sync_Wait)."""
    import re

    from simrob import server

    config = tmp_path / "small.data"
    config.write_text("maximumdatagramsize 1024\n")
    with server.serve(
        "--scenario", str(repo / "scenarios" / "soccer.xml"), "--save-dir", str(tmp_path),
        "--config", str(config), "--no-start",
    ) as sim, Agent(sim.address) as agent:
        agent.register("rewinder", sync=True)
        agent.set_sync_wait(10.0)  # a broadcast the client dropped would hold 10 s
        agent.set_sync_mode(True)
        agent.initialize()
        # Confirmed requests while the server waits for this agent.
        b = agent.next_broadcast(5.0)
        agent.save("rewind.xml")
        agent.synchronize(b.iteration)
        for i in range(10):
            b = agent.next_broadcast(5.0)
            if i < 9:
                agent.synchronize(b.iteration)
        text = agent.load("rewind.xml")
        assert agent.rewound
        loaded = int(re.search(r"at iteration (\d+)$", str(text)).group(1))  # type: ignore[union-attr]
        assert loaded < b.iteration
        seen = []
        for _ in range(3):
            b = agent.next_broadcast(3.0)
            seen.append(b.iteration)
            agent.synchronize(b.iteration)
        assert seen == [loaded + 1, loaded + 2, loaded + 3], seen
