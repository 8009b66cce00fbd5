"""The simulator in this process (the compiled extension): worlds, their arrays, bad input."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from simrob import sim

REPO = Path(__file__).resolve().parents[2]
SOCCER = REPO / "scenarios" / "soccer.xml"


def test_a_scenario_world_falls_and_drives():
    w = sim.World(str(SOCCER))
    ids, poses = w.poses()
    assert list(ids) == [3, 8]
    assert poses.shape == (2, 6) and poses.dtype == np.float64
    z0 = poses[0, 2]
    assert w.step(100) == 100
    assert w.iteration == 100 and math.isclose(w.time, 1.0)
    _, settled = w.poses()
    assert settled[0, 2] < z0  # the robot fell onto the field
    w.set_wheels(3, [10.0, 10.0])
    w.step(100)
    _, driven = w.poses()
    # Positive wheel speeds drive the SumBot along -x (as `simrob run --motors 3:0=10,1=10`).
    assert driven[0, 0] < settled[0, 0] - 0.1
    bodies = w.bodies()
    assert bodies.shape[1] == 14 and set(bodies[:, 0].astype(int)) >= {3, 7, 8}


def test_requests_are_the_simrob_manuals_xml():
    w = sim.World()
    w.request((REPO / "scenarios" / "materials.xml").read_text())
    w.request((REPO / "scenarios" / "ball.xml").read_text())
    assert w.entity_ids() == [8] and w.kind(8) == "Ball"
    with pytest.raises(ValueError, match="request 1"):
        w.request("<Message><Simulation_Message><Control_Request Command='Nope'/></Simulation_Message></Message>")
    assert w.step(5) == 0  # not initialized yet
    w.request(
        "<Message><Simulation_Message><Control_Request Command='Initialize_Simulation'/>"
        "</Simulation_Message></Message>"
    )
    assert w.step(5) == 5


def test_save_and_load_put_the_world_back(tmp_path):
    w = sim.World(str(SOCCER))
    w.set_wheels(3, [5.0, -5.0])
    w.step(50)
    path = tmp_path / "saved.xml"
    w.save(str(path))
    _, before = w.poses()
    w.step(50)
    w.load(str(path))
    _, after = w.poses()
    np.testing.assert_allclose(after, before, atol=1e-9)
    # The same continuation from the same save: the same run.
    w.step(30)
    _, a = w.poses()
    w2 = sim.World()
    w2.load_xml(path.read_text())
    w2.step(30)
    _, b = w2.poses()
    np.testing.assert_array_equal(a, b)


def test_bad_input_raises_and_a_closed_world_says_so(tmp_path):
    with pytest.raises(FileNotFoundError):
        sim.World(str(tmp_path / "missing.xml"))
    with pytest.raises(ValueError, match="not a regular file"):
        sim.World(str(tmp_path))
    with pytest.raises(ValueError, match="finite"):
        sim.World(str(SOCCER)).set_wheels(3, [float("nan"), 0.0])
    with pytest.raises(ValueError):
        sim.World(str(SOCCER)).set_wheels(99, [1.0, 1.0])
    w = sim.World(str(SOCCER))
    w.close()
    assert w.closed
    for call in (lambda: w.step(1), w.poses, w.save_xml, lambda: w.set_wheels(3, [0, 0])):
        with pytest.raises(RuntimeError, match="closed"):
            call()


def test_requests_are_held_to_the_servers_limits(tmp_path):
    # A wheel target of 1e308 rad/s sent the SumBot through the floor (z -73 m after 3 s);
    # a server refuses it (maxvelocity), and so does the world in-process, changing nothing.
    w = sim.World(str(SOCCER))
    twin = sim.World(str(SOCCER))
    with pytest.raises(ValueError, match=r"1e308 is out of range.*maxvelocity"):
        w.set_wheels(3, [1e308, -1e308])
    with pytest.raises(ValueError, match="maxgravity"):
        w.request(
            '<Message><Simulation_Message><Control_Request Command="Set_World_Gravity">'
            "<Gravity>-1e300</Gravity></Control_Request></Simulation_Message></Message>"
        )
    w.step(300)
    twin.step(300)
    assert np.array_equal(w.poses()[1], twin.poses()[1])
    assert w.poses()[1][0][2] > 0.05  # the SumBot still on the floor
    # A server configuration's limits apply instead of the defaults.
    config = tmp_path / "server.cfg"
    config.write_text("maxvelocity 2\n")
    limited = sim.World(str(SOCCER), config=str(config))
    limited.set_wheels(3, [2.0, -2.0])
    with pytest.raises(ValueError, match="at most 2 in size"):
        limited.set_wheels(3, [3.0, 3.0])
    config.write_text("maxentities 2\n")
    with pytest.raises(ValueError, match="maxentities"):
        sim.World(str(SOCCER), config=str(config))
    config.write_text("nosuchkey 1\n")
    with pytest.raises(ValueError, match="nosuchkey"):
        sim.World(str(SOCCER), config=str(config))
    # The file is read as `simrob serve --config` reads it: a missing one, a directory.
    with pytest.raises(FileNotFoundError, match="cannot read configuration"):
        sim.World(str(SOCCER), config=str(tmp_path / "none.cfg"))
    with pytest.raises(ValueError, match="not a regular file"):
        sim.World(str(SOCCER), config=str(tmp_path))
    # A message's Save names a plain file in the current directory, as a server's do in its
    # save directory (World.save takes any path).
    with pytest.raises(ValueError, match="outside"):
        w.request(
            '<Message><Simulation_Message><Control_Request Command="Save">'
            "<File>../escape.xml</File></Control_Request></Simulation_Message></Message>"
        )
    # The Mobile Robot Simulator's world: the command line's timestep range, bounded rates.
    for dt in (0.0, 1e-300, 2.0):
        with pytest.raises(ValueError, match="timestep is from"):
            sim.MrsWorld(timestep=dt)
    m = sim.MrsWorld()
    r = m.add_robot(150, 150, 0)
    with pytest.raises(ValueError, match="more than 1000"):
        m.set_velocity(r, 1e300, 0)
    m.set_velocity(r, 1000, -1000)


def test_sumbot_batch_checks_shapes_and_nan():
    b = sim.SumBotBall(3)
    with pytest.raises(RuntimeError, match="reset"):
        b.step(np.zeros((3, 2)))
    for i in range(3):
        b.reset(i, i)
    with pytest.raises(ValueError, match="shape"):
        b.step(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        b.step(np.array([[0, 0], [np.nan, 0], [0, 0]], dtype=np.float64))
    with pytest.raises(ValueError):
        b.reset(3, 0)
    obs, rew, term = b.step(np.ones((3, 2)))
    assert obs.shape == (3, sim.SUMBOT_OBS) and obs.dtype == np.float32
    assert rew.shape == (3,) and term.dtype == np.bool_
    with pytest.raises(ValueError):
        sim.SumBotBall(0)
    with pytest.raises(ValueError):
        sim.SumBotBall(1, 2, float("nan"))


def test_sumbot_reset_is_the_same_world_for_the_same_seed_and_fast():
    b = sim.SumBotBall(2)
    first = b.reset(0, 42)
    assert np.array_equal(first, b.reset(1, 42))
    actions = np.array([[0.8, 0.5], [0.8, 0.5]])
    for _ in range(20):
        obs, _, _ = b.step(actions)
    assert np.array_equal(obs[0], obs[1])
    assert not np.array_equal(b.reset(0, 43), first)
    # Reset cost: measured and printed, not asserted (the machine may be busy).
    t = time.process_time()
    for k in range(200):
        b.reset(0, k)
    print(f"SumBot reset: {(time.process_time() - t) / 200 * 1e3:.3f} ms of processor time")


def test_mrs_world_robots_sonars_bumpers(tmp_path):
    w = sim.MrsWorld()
    width, height = w.size
    assert width > 0 and height > 0
    r = w.add_robot(width / 2, height / 2, 0.0)
    s = w.sonars(r)
    assert s.shape == (16,) and (s >= 5).all() and (s <= 110).all()
    assert w.bumpers(r).shape == (20,)
    w.set_velocity(r, 20.0, 0.0)
    w.step(1000)  # 10 s at 20 in/s: into a wall
    ids, poses = w.poses()
    assert list(ids) == [r] and poses.shape == (1, 3)
    assert w.bumpers(r).any() or w.sonars(r).min() < 10
    with pytest.raises(ValueError):
        w.add_robot(-50.0, -50.0, 0.0)
    with pytest.raises(ValueError, match="finite"):
        w.set_velocity(r, float("inf"), 0)
    with pytest.raises(ValueError, match="no robot"):
        w.sonars(99)
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not a map\n")
    with pytest.raises(ValueError):
        sim.MrsWorld(str(bad))
    with pytest.raises(FileNotFoundError):
        sim.MrsWorld(str(tmp_path / "none.txt"))
    w.close()
    with pytest.raises(RuntimeError, match="closed"):
        w.step()


def test_swarm_scenario_steps_and_reports():
    s = sim.Swarm(str(REPO / "scenarios" / "swarm" / "drone-swarm.toml"), seed=3, robots=30)
    ids, poses = s.poses()
    assert poses.shape == (len(ids), 3)
    assert s.summary()["wall_seconds"] == 0.0  # nothing run yet
    assert s.step(48)
    stepped = s.summary()["wall_seconds"]
    assert s.frame == 48
    vids, vel = s.velocities()
    assert vel.shape == (len(vids), 3) and np.abs(vel).sum() > 0
    summary = s.run()
    assert summary["arrived"] + summary["crashed"] <= 30 and s.finished
    # The wall time of every step and run of this swarm, not of the last call alone.
    assert summary["wall_seconds"] > stepped > 0.0
    assert isinstance(s.drain_log(), list)
    kind, _ = s.entity(int(vids[0]))
    assert kind == "drone"
    # The same seed: the same run.
    again = sim.Swarm(str(REPO / "scenarios" / "swarm" / "drone-swarm.toml"), seed=3, robots=30)
    assert again.run()["frames"] == summary["frames"]
    with pytest.raises(FileNotFoundError):
        sim.Swarm(str(REPO / "scenarios" / "swarm" / "missing.toml"))
    s.close()
    with pytest.raises(RuntimeError, match="closed"):
        s.poses()


def test_a_bundled_swarm_scenario_goes_by_name_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no scenarios/ here
    by_name = sim.Swarm("drone-swarm", seed=3, robots=30).run()
    by_file = sim.Swarm(str(REPO / "scenarios" / "swarm" / "drone-swarm.toml"), seed=3, robots=30).run()
    for key in ("frames", "arrived", "crashed", "events"):
        assert by_name[key] == by_file[key], key
    assert sim.Swarm("hospital", duration=1).run()["robots"] == 3
    with pytest.raises(FileNotFoundError, match="not a bundled scenario .drone-swarm, hospital, warehouse"):
        sim.Swarm("hospitl")


def test_swarms_step_on_any_thread_side_by_side():
    """A swarm built on one thread steps on another, the GIL released: two threads step two
    swarms at once, and each ends as the same swarm stepped alone."""
    path = str(REPO / "scenarios" / "swarm" / "drone-swarm.toml")

    def run(s) -> bytes:
        s.step(48)
        return s.poses()[1].tobytes()

    alone = run(sim.Swarm(path, seed=3, robots=50))
    swarms = [sim.Swarm(path, seed=3, robots=50) for _ in range(2)]
    out: list = [None, None]
    threads = [
        threading.Thread(target=lambda k=k: out.__setitem__(k, run(swarms[k]))) for k in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)  # a bound on the wait, not a pace
    assert out == [alone, alone]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_large_swarm_runs_in_a_child_forked_after_a_run():
    """The swarm keeps its threads for the process. A child forked after a run (as
    multiprocessing's default start on Linux does) has none of them: it starts its own and
    runs the same swarm, rather than waiting for threads that are not there."""
    import select
    import warnings

    path = str(REPO / "scenarios" / "swarm" / "drone-swarm.toml")

    def run() -> float:
        # 5,000 drones: the controller's passes split over the machine's cores.
        s = sim.Swarm(path, seed=2, robots=5000, duration=0.25, full_duration=True)
        s.run()
        return float(s.poses()[1].sum())

    here = run()
    r, w = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork of a threaded process
        pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, repr(run()).encode())
        finally:
            os._exit(0)
    os.close(w)
    # A bound on the wait, not a pace: the child answers in well under a second unless it
    # waits forever.
    ready, _, _ = select.select([r], [], [], 300)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    answer = os.read(r, 64).decode() if ready else ""
    os.close(r)
    os.waitpid(pid, 0)
    assert answer, "the forked child never finished its swarm"
    assert float(answer) == here


def test_futrob_case_trial_runs_in_process():
    assert "penalty-kick" in sim.futrob_cases()
    r = sim.futrob_trial("penalty-kick", trial=0, seed=1)
    assert r["case"] == "penalty-kick" and isinstance(r["success"], bool)
    assert r == sim.futrob_trial("penalty-kick", trial=0, seed=1)
    with pytest.raises(ValueError, match="unknown case"):
        sim.futrob_trial("nope")
    with pytest.raises(ValueError, match="profile"):
        sim.futrob_trial("pass", profile="nope")


def test_the_simrob_command_runs_through_the_extension():
    exe = Path(sys.executable).with_name("simrob")
    out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "multi-robot simulator" in out.stdout
    out = subprocess.run(
        [str(exe), "run", str(SOCCER), "--iterations", "20", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert '"iterations":20' in out.stdout.replace(" ", "")
    bad = subprocess.run([str(exe), "run", "--nope"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--nope" in bad.stderr
    # `python -m simrob` is the same command line.
    out = subprocess.run(
        [sys.executable, "-m", "simrob", "run", str(SOCCER), "--iterations", "20", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert '"iterations":20' in out.stdout.replace(" ", "")
    bad = subprocess.run(
        [sys.executable, "-m", "simrob", "run", "--nope"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and "--nope" in bad.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_a_long_run_and_keeps_the_world_usable():
    # Python's own Ctrl-C handler, whatever the test runner installed: KeyboardInterrupt.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    def interrupted(long_call):
        """Runs `long_call` (days of simulated work) while another thread sends this process
        Ctrl-C once it has begun; it must raise KeyboardInterrupt rather than run on."""
        started = threading.Event()

        def send():
            started.wait()
            os.kill(os.getpid(), signal.SIGINT)

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        with pytest.raises(KeyboardInterrupt):
            started.set()
            long_call()
        sender.join()

    try:
        w = sim.World(str(SOCCER))
        interrupted(lambda: w.step(10**15))
        assert w.step(10) == 10
        m = sim.MrsWorld()
        interrupted(lambda: m.step(10**15))
        m.step(3)
        s = sim.Swarm(
            str(REPO / "scenarios" / "swarm" / "drone-swarm.toml"),
            seed=1,
            robots=20,
            duration=1e9,
            full_duration=True,
        )
        interrupted(s.run)
        assert not s.finished
        assert s.step(2) is True
    finally:
        signal.signal(signal.SIGINT, previous)


def test_with_closes_worlds_and_runs_an_error_included():
    with sim.World(str(SOCCER)) as w:
        assert w.step(5) == 5 and not w.closed
        assert repr(w) == "<simrob.sim.World: 3 entities, iteration 5, 0.05 s>"
    assert w.closed and repr(w) == "<simrob.sim.World: closed>"
    assert repr(sim.DroneTargets(1)) == "<simrob.sim.DroneTargets: 1 drone>"
    assert repr(sim.SumBotBall(2)) == "<simrob.sim.SumBotBall: 2 worlds>"
    with pytest.raises(RuntimeError, match="closed"):
        w.step(1)
    with pytest.raises(ValueError, match="inside"):
        with sim.Swarm(str(REPO / "scenarios" / "swarm" / "drone-swarm.toml"), robots=10) as s:
            assert s.step(3)
            raise ValueError("inside the block")
    with pytest.raises(RuntimeError, match="closed"):
        s.step(1)
    for make in (sim.MrsWorld, lambda: sim.SumBotBall(2), lambda: sim.NomadGoal(2),
                 lambda: sim.DroneTargets(10)):
        with make() as o:
            assert isinstance(o, sim._Closes)


def test_batch_actions_of_any_real_type_are_taken():
    # An action space's sample() is float32: it once raised "type mismatch".
    b = sim.SumBotBall(2)
    b.reset(0, 1)
    b.reset(1, 1)
    ref = sim.SumBotBall(2)
    ref.reset(0, 1)
    ref.reset(1, 1)
    for actions in (np.full((2, 2), 0.5, dtype=np.float32), [[0.5, 0.5], [0.5, 0.5]]):
        obs, rew, _ = b.step(actions)
        want, want_rew, _ = ref.step(np.full((2, 2), 0.5))
        assert np.array_equal(obs, want) and np.array_equal(rew, want_rew)
    obs, _, _ = b.step(np.ones((2, 2), dtype=np.int64))
    with pytest.raises(ValueError):
        b.step([["fast", "left"], [0, 0]])
    d = sim.DroneTargets(3)
    d.reset(0)
    d.step(np.zeros((3, 2), dtype=np.float32))


def _drive_until_the_ball(b, i_of, limit=3000):
    """Drives world `i_of`'s SumBot (alone: the others are left out) until it reaches its
    ball."""
    obs = np.stack([b.reset(i, 3) for i in range(len(b))])
    only = np.arange(len(b)) == i_of
    for _ in range(limit):
        turn = np.clip(3.0 * np.arctan2(obs[:, 5], obs[:, 4]), -1, 1)
        obs, rew, term = b.step(np.stack([0.6 - turn, 0.6 + turn], axis=1), only)
        if term[i_of]:
            return obs
    raise AssertionError("the SumBot did not reach the ball")


def test_an_ended_world_is_reset_or_left_out_before_it_steps_again():
    b = sim.SumBotBall(2)
    _drive_until_the_ball(b, 0)
    # Stepped again, it once paid the reward for reaching the ball every step.
    with pytest.raises(RuntimeError, match="world 0's episode has ended"):
        b.step(np.zeros((2, 2)))
    before = b.poses(1)[1].copy()
    obs, rew, term = b.step(np.full((2, 2), 0.5), np.array([False, True]))
    assert (obs[0] == 0).all() and rew[0] == 0 and not term[0]
    assert not np.array_equal(b.poses(1)[1], before), "world 1 stepped"
    with pytest.raises(ValueError, match="active"):
        b.step(np.zeros((2, 2)), np.array([True]))
    b.reset(0, 5)
    b.step(np.zeros((2, 2)))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: sim.SumBotBall(-1), "n"),
        (lambda: sim.SumBotBall(1, frame_skip=-1), "frame_skip"),
        (lambda: sim.NomadGoal(-2), "n"),
        (lambda: sim.SumBotBall(1).reset(0, -1), "seed"),
        (lambda: sim.SumBotBall(1).reset(-1, 0), "i"),
        (lambda: sim.World().step(-1), "n"),
        (lambda: sim.MrsWorld().set_velocity(-1, 0, 0), "id"),
        (lambda: sim.DroneTargets(-1), "n"),
        (lambda: sim.futrob_trial("pass", trial=-1), "trial"),
        (lambda: sim.FutRobTeam(step_ms=-10), "step_ms"),
        (lambda: sim.SumBotBall(1).reset(0, 2**64), "seed"),
    ],
)
def test_a_negative_or_huge_count_is_a_value_error_naming_the_argument(call, name):
    # These were OverflowError, which `except ValueError` does not catch.
    with pytest.raises(ValueError, match="whole number") as e:
        call()
    assert f"while processing '{name}'" in "".join(getattr(e.value, "__notes__", []))


def test_numpy_integers_are_whole_numbers():
    b = sim.SumBotBall(np.int64(2), frame_skip=np.int32(3))
    b.reset(np.uint8(1), np.int64(7))
    assert len(b) == 2


def test_drone_episodes_start_from_their_seed():
    d = sim.DroneTargets(8)
    a = d.reset(1)
    pa, ta = d.positions()
    assert np.array_equal(a, d.reset(1))
    b = d.reset(2)
    pb, tb = d.positions()
    assert not np.array_equal(a, b) and not np.array_equal(pa, pb)
    # Moved by at most 6 map units from the same take-off grid, to the same targets.
    assert np.abs(pa - pb).max() <= 12 and np.array_equal(ta, tb)


def test_a_closed_batch_says_so_everywhere():
    for make, name in ((lambda: sim.SumBotBall(2), "SumBotBall"),
                       (lambda: sim.NomadGoal(2), "NomadGoal"),
                       (lambda: sim.DroneTargets(2), "DroneTargets"),
                       (lambda: sim.FutRobTeam(1, opponent="futrob"), "FutRobTeam")):
        o = make()
        assert not o.closed
        o.close()
        assert o.closed and repr(o) == f"<simrob.sim.{name}: closed>"
        with pytest.raises(RuntimeError, match="closed"):
            o.reset(0, 0) if name in ("SumBotBall", "NomadGoal") else o.reset(0)
        if name != "FutRobTeam":
            with pytest.raises(RuntimeError, match="closed"):
                len(o)
    n = sim.NomadGoal(3)
    with pytest.raises(ValueError, match="world 5 of a batch of 3"):
        n.state(5)
    n.close()
    with pytest.raises(RuntimeError, match="closed"):
        n.size
    with pytest.raises(RuntimeError, match="closed"):
        n.state(0)
    w = sim.World()
    w.close()
    with pytest.raises(RuntimeError, match="closed"):
        w.request("not XML")


def test_the_futrob_team_task_is_in_sim_and_takes_any_integer_array():
    with sim.FutRobTeam(1, opponent="futrob") as t:
        assert repr(t) == "<simrob.sim.FutRobTeam: 1 agent, not reset>"
        t.reset(1)
        for actions in (np.array([1], dtype=np.int32), [1], np.array([1], dtype=np.uint8)):
            t.step(actions)
        with pytest.raises(TypeError, match="integers"):
            t.step(np.array([1.5]))
        assert repr(t) == "<simrob.sim.FutRobTeam: 1 agent, 0.6 s>"


def test_saving_where_no_file_can_be_is_an_os_error(tmp_path):
    w = sim.World()
    with pytest.raises(FileNotFoundError, match="cannot save to"):
        w.save(str(tmp_path / "no" / "such" / "dir.xml"))
    with pytest.raises(IsADirectoryError):
        w.save(str(tmp_path))


def test_every_world_says_whether_it_is_closed():
    # MrsWorld and Swarm had no `closed`, which the docs promise for every world.
    for make in (sim.World, sim.MrsWorld,
                 lambda: sim.Swarm(str(REPO / "scenarios" / "swarm" / "drone-swarm.toml"),
                                   robots=4)):
        o = make()
        assert o.closed is False
        o.close()
        assert o.closed is True
        assert repr(o).endswith(": closed>")


def test_the_swarm_summary_says_why_the_run_ended_as_the_command_line_does():
    s = sim.Swarm(str(REPO / "scenarios" / "swarm" / "drone-swarm.toml"), seed=3, robots=4)
    assert "killed" not in s.summary() and s.summary()["ended_by"] is None  # running
    summary = s.run()
    assert "killed" not in summary
    # Every drone home: the kill switch ends the run, which `killed: True` read as a failure.
    assert summary["arrived"] == 4 and summary["ended_by"] == "all work done"
    assert s.summary()["ended_by"] == "all work done"
    short = sim.Swarm(str(REPO / "scenarios" / "swarm" / "drone-swarm.toml"), seed=3,
                      robots=4, duration=1.0)
    assert short.run()["ended_by"] == "duration"


def test_a_batch_takes_only_bools_for_active():
    b = sim.SumBotBall(2)
    b.reset(0, 1)
    b.reset(1, 2)
    for bad in (np.array([0.5, 0.0]), np.array([1, 0]), ["yes", ""]):
        with pytest.raises(ValueError, match="bool"):
            b.step(np.zeros((2, 2)), bad)
    b.step(np.zeros((2, 2)), np.array([True, False]))
    b.step(np.zeros((2, 2)), [False, True])
    n = sim.NomadGoal(2)
    n.reset(0, 1)
    with pytest.raises(ValueError, match="bool"):
        n.step(np.zeros((2, 2)), np.array([0.5, 0.0]))
    n.step(np.zeros((2, 2)), np.array([True, False]))


@pytest.mark.parametrize("path", ["/dev/zero", "."], ids=["device", "directory"])
def test_a_path_that_is_not_a_regular_file_is_a_value_error_for_every_world(path, tmp_path):
    # The swarm said FileNotFoundError "no scenario file" of a path that is there.
    for make in (sim.World, sim.MrsWorld, sim.Swarm):
        with pytest.raises(ValueError, match="not a regular file"):
            make(path)
        with pytest.raises(FileNotFoundError):
            make(str(tmp_path / "missing"))


def test_set_wheels_needs_a_speed():
    w = sim.World(str(SOCCER))
    with pytest.raises(ValueError, match="no speeds"):
        w.set_wheels(3, [])
    w.set_wheels(3, [1.0])


def test_a_swarms_repr_counts_the_entities_its_summary_counts():
    s = sim.Swarm(str(REPO / "scenarios" / "swarm" / "drone-swarm.toml"), seed=3, robots=4)
    n = s.summary()["entities"]
    assert repr(s).startswith(f"<simrob.sim.Swarm: {n} entities,")
