"""simrob's ROS 2 participant against an independent DDS implementation (Eclipse Cyclone
DDS), both confined to the loopback interface, on a random domain.

Every wait is for a message, with a generous timeout only as a failure guard.
Usage: SIMROB_BIN=target/debug/simrob pytest crates/ros2/tests/cyclone
"""

import math
import os
import random
import subprocess
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
# SIMROB_TEST_DOMAIN picks the first of the (up to 16) domains the tests use.
DOMAIN = int(os.environ.get("SIMROB_TEST_DOMAIN") or random.randint(1, 199))
# The lockstep runs on a domain of their own: another server's robot_3 would answer there.
LOCKSTEP_DOMAIN = DOMAIN + 1
# Cyclone on lo only: no multicast, the peers found by unicast on 127.0.0.1.
os.environ["CYCLONEDDS_URI"] = (
    "<CycloneDDS><Domain Id='any'><General><Interfaces>"
    "<NetworkInterface name='lo'/></Interfaces><AllowMulticast>false</AllowMulticast>"
    "</General><Discovery><ParticipantIndex>auto</ParticipantIndex>"
    "<MaxAutoParticipantIndex>30</MaxAutoParticipantIndex>"
    "<Peers><Peer address='127.0.0.1'/></Peers></Discovery></Domain></CycloneDDS>"
)

from cyclonedds.core import DDSStatus, Policy, Qos, WaitSet  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402

import rosmsgs as m  # noqa: E402

TIMEOUT = 60.0

RELIABLE = Qos(
    Policy.Reliability.Reliable(duration(seconds=1)),
    Policy.History.KeepLast(10),
)
BEST_EFFORT = Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(10))


class Simrob:
    """A simrob command with --ros2, its standard error collected."""

    def __init__(self, *args, domain=DOMAIN):
        env = dict(os.environ)
        env["ROS_DOMAIN_ID"] = str(domain)
        env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
        env["RUST_LOG"] = "simrob::ros2=info,warn"
        self.proc = subprocess.Popen(
            [os.environ["SIMROB_BIN"], *args],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stdout = []
        self.stderr = []
        self.ros_line = threading.Event()
        self.pumps = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self.stdout), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr), daemon=True),
        ]
        for p in self.pumps:
            p.start()
        assert self.ros_line.wait(TIMEOUT), f"no 'ROS 2 on domain' line: {self.stdout} {self.stderr}"

    def _pump(self, stream, lines):
        for line in stream:
            lines.append(line)
            if line.startswith("ROS 2 on domain"):
                self.ros_line.set()

    def says(self, *parts):
        """A wait_for condition: a line of standard error holds every one of `parts`."""
        return lambda _: any(all(p in line for p in parts) for line in self.stderr)

    def finished(self, timeout):
        """Waits for the command to end by itself; returns its standard output."""
        assert self.proc.wait(timeout) == 0, self.stderr
        for p in self.pumps:
            p.join(timeout)
        return "".join(self.stdout)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def dp():
    return DomainParticipant(DOMAIN)


def reader(dp, name, typ, qos=RELIABLE):
    return DataReader(dp, Topic(dp, "rt/" + name.lstrip("/"), typ), qos=qos)


def writer(dp, name, typ, qos=RELIABLE):
    return DataWriter(dp, Topic(dp, "rt/" + name.lstrip("/"), typ), qos=qos)


def wait_matched(dp, wr, timeout=TIMEOUT):
    """Waits (on the writer's publication-matched status) until `wr` has a subscriber."""
    wr.set_status_mask(DDSStatus.PublicationMatched)
    ws = WaitSet(dp)
    ws.attach(wr)
    deadline = time.monotonic() + timeout
    while not wr.get_matched_subscriptions():
        assert time.monotonic() < deadline, f"{wr.topic.name} never matched"
        ws.wait(duration(milliseconds=500))
    ws.detach(wr)


def wait_for(rd, pred=lambda s: True, timeout=TIMEOUT, each=None):
    """Reads `rd` until a sample satisfies `pred` (calling `each()` after every batch
    read); fails after `timeout` seconds without one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for s in rd.take_iter(timeout=duration(milliseconds=500)):
            if pred(s):
                return s
            if each:
                each()
            # Samples that keep coming (a paused world's repeats) end the wait too.
            if time.monotonic() >= deadline:
                break
        if each:
            each()
    raise AssertionError(f"no matching sample on {rd.topic.name} within {timeout} s")


def yaw(q):
    return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))


@pytest.fixture(scope="module")
def sumbot():
    s = Simrob(
        "serve", "--port", "0", "--bind", "127.0.0.1",
        "--scenario", "scenarios/soccer.xml", "--speed", "1", "--ros2",
    )
    yield s
    s.stop()


def test_clock_advances(dp, sumbot):
    rd = reader(dp, "/clock", m.Clock, BEST_EFFORT)
    first = wait_for(rd).clock
    t0 = first.sec + first.nanosec * 1e-9
    later = wait_for(rd, lambda s: s.clock.sec + s.clock.nanosec * 1e-9 > t0 + 0.2)
    assert later.clock.nanosec < 1_000_000_000


def test_cmd_vel_moves_the_sumbot_in_odom_and_tf(dp, sumbot):
    odom = reader(dp, "robot_3/odom", m.Odometry)
    tf = reader(dp, "/tf", m.TFMessage)
    cmd = writer(dp, "robot_3/cmd_vel", m.Twist)
    start = wait_for(odom)
    assert start.header.frame_id == "robot_3/odom"
    assert start.child_frame_id == "robot_3/base_link"
    p0 = start.pose.pose.position
    h0 = yaw(start.pose.pose.orientation)
    forward = m.Twist(linear=m.Vector3(x=0.1))

    def ahead(s):
        p = s.pose.pose.position
        return (p.x - p0.x) * math.cos(h0) + (p.y - p0.y) * math.sin(h0) > 0.05

    moved = wait_for(odom, ahead, each=lambda: cmd.write(forward))
    assert moved.twist.twist.linear.x > 0.02, moved.twist.twist
    # /tf carries the same pose for robot_3/base_link in robot_3/odom.
    p = moved.pose.pose.position

    def has_moved(s):
        for t in s.transforms:
            if t.child_frame_id == "robot_3/base_link":
                assert t.header.frame_id == "robot_3/odom"
                return (t.transform.translation.x - p0.x) ** 2 + (t.transform.translation.y - p0.y) ** 2 > 0.04**2
        return False

    wait_for(tf, has_moved)
    # A counter-clockwise turn rate turns it counter-clockwise.
    h1 = yaw(moved.pose.pose.orientation)
    turn = m.Twist(angular=m.Vector3(z=1.0))

    def turned(s):
        d = (yaw(s.pose.pose.orientation) - h1 + math.pi) % (2 * math.pi) - math.pi
        return d > 0.3

    wait_for(odom, turned, each=lambda: cmd.write(turn))
    cmd.write(m.Twist())
    assert abs(p.z) < 10


def test_a_mistyped_message_is_dropped_with_a_log_line(dp, sumbot):
    # A participant of its own: Cyclone keeps one type per topic name in a participant.
    other = DomainParticipant(DOMAIN)
    bad = writer(other, "robot_3/cmd_vel", m.BadTwist)
    odom = reader(dp, "robot_3/odom", m.Odometry)
    # One bad message per odometry message received, until the log says it was dropped.
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and not any("malformed" in line for line in sumbot.stderr):
        bad.write(m.BadTwist(x=5.0))
        wait_for(odom)
    assert any("robot_3/cmd_vel: malformed" in line for line in sumbot.stderr), sumbot.stderr
    assert sumbot.proc.poll() is None
    del bad, other


def soccer_serve(domain):
    """A participant on `domain`, and `simrob serve` of the soccer scenario at speed 1 with
    --ros2 on it."""
    dp = DomainParticipant(domain)
    s = Simrob(
        "serve", "--port", "0", "--bind", "127.0.0.1", "--scenario", "scenarios/soccer.xml",
        "--speed", "1", "--ros2", domain=domain,
    )
    return dp, s


def test_a_twist_with_more_after_it_is_dropped_with_a_log_line():
    """A Twist with more after its six doubles is another layout under the same type name:
    dropped with a log line, the robot not driven."""
    domain = DOMAIN + 14
    dp, s = soccer_serve(domain)
    try:
        odom = reader(dp, "robot_3/odom", m.Odometry)
        long = writer(dp, "robot_3/cmd_vel", m.LongTwist, BEST_EFFORT)
        wait_matched(dp, long)
        said = s.says("robot_3/cmd_vel: malformed message dropped", "bytes after the message")
        # The odometry that keeps coming is the clock of this wait.
        last = wait_for(odom, said, each=lambda: long.write(m.LongTwist(linear=m.Vector3(x=0.2), extra=1.0)))
        assert abs(last.twist.twist.linear.x) < 1e-3, last.twist.twist
    finally:
        s.stop()


def test_a_nomad_reads_its_sonars_and_drives(dp):
    s = Simrob("mrs", "--port", "0", "--ros2", "--ros2-sensor-rate", "20")
    try:
        sonar = reader(dp, "nomad_0/sonar/0", m.Range, BEST_EFFORT)
        scan = reader(dp, "nomad_0/scan", m.LaserScan, BEST_EFFORT)
        odom = reader(dp, "nomad_0/odom", m.Odometry)
        r = wait_for(sonar)
        assert r.header.frame_id == "nomad_0/sonar_0"
        assert abs(r.min_range - 5 * 0.0254) < 1e-6 and abs(r.max_range - 110 * 0.0254) < 1e-6
        assert r.min_range <= r.range <= r.max_range
        sc = wait_for(scan)
        assert len(sc.ranges) == 16
        assert abs(sc.angle_increment - 2 * math.pi / 16) < 1e-6
        # The scan's first ray is sonar 0's, from the centre (10 in further).
        first = wait_for(sonar)
        sc = wait_for(scan)
        assert all(x > 10 * 0.0254 for x in sc.ranges)
        # Forward at 0.2 m/s: it moves along its heading.
        o0 = wait_for(odom)
        p0, h0 = o0.pose.pose.position, yaw(o0.pose.pose.orientation)
        cmd = writer(dp, "nomad_0/cmd_vel", m.Twist)
        fwd = m.Twist(linear=m.Vector3(x=0.2))

        def ahead(o):
            p = o.pose.pose.position
            return (p.x - p0.x) * math.cos(h0) + (p.y - p0.y) * math.sin(h0) > 0.05

        o = wait_for(odom, ahead, each=lambda: cmd.write(fwd))
        assert abs(o.twist.twist.linear.x - 0.2) < 0.01, o.twist.twist
        cmd.write(m.Twist())
        assert first.range > 0
    finally:
        s.stop()


SWARM_SCENARIO = """
name = "ros goal"
fps = 20
duration = 600
seed = 1
end_when_done = false

[world]
width = 200
height = 100
nav = { merge_radius = 8, max_off_path = 60, extend = true }
paths = [[[20, 50], [180, 50]]]

[[entities]]
type = "robot"
name = "r1"
position = [20, 50]
radius = 4
components = { Navigator = 40 }
"""


def test_a_swarm_robot_goes_to_a_goal(dp, tmp_path):
    scenario = tmp_path / "goal.toml"
    scenario.write_text(SWARM_SCENARIO)
    s = Simrob("swarm", "run", str(scenario), "--quiet", "--ros2", "--speed", "4")
    try:
        odom = reader(dp, "r1/odom", m.Odometry)
        goal = writer(dp, "r1/goal_pose", m.PoseStamped)
        start = wait_for(odom).pose.pose.position
        assert abs(start.x - 20) < 1 and abs(start.y + 50) < 1, start
        target = m.PoseStamped(
            header=m.Header(frame_id="world"),
            pose=m.Pose(position=m.Point(x=170.0, y=-50.0)),
        )
        # Sent again on every odom until the robot is under way (a best-effort goal may be
        # lost before the route starts), then watched until it arrives.
        def under_way(o):
            return o.pose.pose.position.x > start.x + 2

        wait_for(odom, under_way, each=lambda: goal.write(target))

        def arrived(o):
            p = o.pose.pose.position
            return math.hypot(p.x - 170.0, p.y + 50.0) < 2.0

        wait_for(odom, arrived, timeout=120)
    finally:
        s.stop()


def lockstep_run(dp, steps):
    """A lockstep run of the SumBot: one cmd_vel per odometry message; returns the stamps,
    the last pose and the x of every step."""
    s = Simrob(
        "serve", "--port", "0", "--bind", "127.0.0.1", "--scenario", "scenarios/soccer.xml",
        "--ros2", "--ros2-lockstep", "--ros2-odom-rate", "0", domain=LOCKSTEP_DOMAIN,
    )
    try:
        odom = reader(dp, "robot_3/odom", m.Odometry)
        cmd = writer(dp, "robot_3/cmd_vel", m.Twist)
        stamp = lambda o: (o.header.stamp.sec, o.header.stamp.nanosec)  # noqa: E731
        last = wait_for(odom)
        # The paused world repeats its state: wait (on those messages) until the command
        # writer is matched, and one repeat more, so that no command is lost.
        deadline = time.monotonic() + TIMEOUT
        while not cmd.get_matched_subscriptions():
            assert time.monotonic() < deadline, "cmd_vel never matched"
            wait_for(odom)
        last = wait_for(odom)
        stamps = [stamp(last)]
        poses = []
        for k in range(steps):
            twist = m.Twist(linear=m.Vector3(x=0.1), angular=m.Vector3(z=0.5 if k >= steps // 2 else 0.0))
            cmd.write(twist)
            # The next odometry is that of the step this command made.
            last = wait_for(odom, lambda o: stamp(o) > stamps[-1])
            stamps.append(stamp(last))
            poses.append(last.pose.pose.position.x)
        p = last.pose.pose
        return stamps, (p.position.x, p.position.y, p.orientation.z, p.orientation.w), poses
    finally:
        s.stop()


def test_lockstep_steps_once_per_command_and_repeats():
    dp = DomainParticipant(LOCKSTEP_DOMAIN)
    stamps, pose, _ = lockstep_run(dp, 40)
    t = [a + b * 1e-9 for a, b in stamps]
    steps = [b - a for a, b in zip(t, t[1:])]
    # One iteration per command: every step the same length.
    assert max(steps) - min(steps) < 1e-6 and steps[0] > 0, steps
    stamps2, again, _ = lockstep_run(dp, 40)
    assert stamps2 == stamps
    assert again == pose, (pose, again)


def test_mrs_lockstep_steps_once_per_command():
    domain = DOMAIN + 2
    dp = DomainParticipant(domain)
    s = Simrob("mrs", "--port", "0", "--ros2", "--ros2-lockstep", "--ros2-odom-rate", "0", domain=domain)
    try:
        odom = reader(dp, "nomad_0/odom", m.Odometry)
        cmd = writer(dp, "nomad_0/cmd_vel", m.Twist)
        wait_for(odom)
        deadline = time.monotonic() + TIMEOUT
        while not cmd.get_matched_subscriptions():
            assert time.monotonic() < deadline, "cmd_vel never matched"
            wait_for(odom)
        last = wait_for(odom)
        t = lambda o: o.header.stamp.sec + o.header.stamp.nanosec * 1e-9  # noqa: E731
        times = [t(last)]
        for _ in range(5):
            cmd.write(m.Twist(linear=m.Vector3(x=0.2)))
            last = wait_for(odom, lambda o: t(o) > times[-1])
            times.append(t(last))
        steps = [b - a for a, b in zip(times, times[1:])]
        assert max(steps) - min(steps) < 1e-9 and steps[0] > 0, steps
        assert abs(last.twist.twist.linear.x - 0.2) < 1e-3
    finally:
        s.stop()


@pytest.mark.parametrize(
    "offset,args,robot",
    [
        (5, ("serve", "--port", "0", "--bind", "127.0.0.1", "--scenario", "scenarios/soccer.xml"), "robot_3"),
        (6, ("mrs", "--port", "0"), "nomad_0"),
    ],
)
def test_lockstep_one_step_per_step_message(offset, args, robot):
    """`serve` and `mrs` with `--ros2-lockstep` make exactly one step per message on
    /simrob/step, five sent together included (they made one or two)."""
    domain = DOMAIN + offset
    dp = DomainParticipant(domain)
    s = Simrob(*args, "--ros2", "--ros2-lockstep", "--ros2-odom-rate", "0", domain=domain)
    try:
        odom = reader(dp, robot + "/odom", m.Odometry)
        step = writer(dp, "/simrob/step", m.Empty, Qos(
            Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(100)))
        wait_matched(dp, step)
        # Both worlds step 10 ms an iteration.
        it = lambda o: round((o.header.stamp.sec + o.header.stamp.nanosec * 1e-9) * 100)  # noqa: E731
        # The paused world repeats its state: the iteration it waits at.
        start = it(wait_for(odom))
        sent = 0

        def check(o):
            assert it(o) <= start + sent, f"iteration {it(o)} after {sent} step messages from {start}"
            return it(o) == start + sent

        for burst in (5, 1, 5):
            for _ in range(burst):
                step.write(m.Empty())
            sent += burst
            wait_for(odom, check)
        # Nothing more: the next message is the paused world's repeat of the last step.
        assert it(wait_for(odom)) == start + sent
    finally:
        s.stop()


def test_a_refused_cmd_vel_is_logged():
    """A cmd_vel whose wheel speeds are past `maxvelocity` is refused with a warning that
    names the robot (it was dropped without a word)."""
    domain = DOMAIN + 7
    dp, s = soccer_serve(domain)
    try:
        odom = reader(dp, "robot_3/odom", m.Odometry)
        cmd = writer(dp, "robot_3/cmd_vel", m.Twist)
        wait_matched(dp, cmd)
        cmd.write(m.Twist(linear=m.Vector3(x=250.0)))
        said = s.says("robot_3: cmd_vel (linear.x 250 m/s, angular.z 0 rad/s) asks a wheel speed of", "maxvelocity")
        # The odometry that keeps coming is the clock of this wait.
        wait_for(odom, said)
    finally:
        s.stop()


def test_mrs_and_swarm_log_dropped_input(tmp_path):
    """`mrs --ros2` and `swarm run --ros2` print the log lines of input they drop (they
    started no logging: nothing was printed)."""
    scenario = tmp_path / "log.toml"
    scenario.write_text(SWARM_SCENARIO)
    nan = float("nan")
    for offset, args, robot, topic, typ, bad, line in [
        (8, ("mrs", "--port", "0"), "nomad_0", "cmd_vel", m.Twist,
         m.Twist(linear=m.Vector3(x=nan)), "nomad_0/cmd_vel: not a finite velocity, dropped"),
        (9, ("swarm", "run", str(scenario), "--quiet", "--speed", "1"), "r1", "goal_pose", m.PoseStamped,
         m.PoseStamped(pose=m.Pose(position=m.Point(x=nan, y=0.0))), "r1/goal_pose: not a finite position, dropped"),
    ]:
        domain = DOMAIN + offset
        dp = DomainParticipant(domain)
        s = Simrob(*args, "--ros2", domain=domain)
        try:
            odom = reader(dp, robot + "/odom", m.Odometry)
            w = writer(dp, robot + "/" + topic, typ, BEST_EFFORT)
            wait_matched(dp, w)
            said = s.says(line)
            # The odometry that keeps coming is the clock of this wait.
            wait_for(odom, said, each=lambda: w.write(bad))
        finally:
            s.stop()


def swarm_lockstep(domain, scenario, *more):
    """A participant on `domain`, and `swarm run --ros2-lockstep` of SWARM_SCENARIO (written
    to `scenario`) on it, with `more` arguments."""
    dp = DomainParticipant(domain)
    scenario.write_text(SWARM_SCENARIO)
    s = Simrob(
        "swarm", "run", str(scenario), "--quiet", *more, "--ros2", "--ros2-lockstep",
        "--ros2-odom-rate", "0", domain=domain,
    )
    return dp, s


def test_swarm_lockstep_one_frame_per_step_message(tmp_path):
    """`swarm run --ros2-lockstep` sleeps until /simrob/step arrives and makes exactly one
    frame per message, those sent together included: frame k (stamped k / fps) is published
    after the k-th message, and never before."""
    domain = DOMAIN + 3
    dp, s = swarm_lockstep(domain, tmp_path / "lockstep.toml")
    try:
        odom = reader(dp, "r1/odom", m.Odometry)
        step = writer(dp, "/simrob/step", m.Empty)
        fps = 20  # the scenario's
        sent = 0
        frame = lambda o: round((o.header.stamp.sec + o.header.stamp.nanosec * 1e-9) * fps)  # noqa: E731

        def send(n=1):
            nonlocal sent
            for _ in range(n):
                step.write(m.Empty())
                sent += 1

        def check(o):
            assert frame(o) <= sent, f"frame {frame(o)} after only {sent} step messages"
            return True

        # Once the step writer has matched simrob's reader, none of its messages is lost.
        wait_matched(dp, step)
        # Steps until an odometry comes (those of the first frames may go before the
        # reader matched); every frame seen is at most the number of messages sent.
        last = wait_for(odom, check, each=send)

        def caught_up(last):
            """Reads odometry until that of the last message sent."""
            while frame(last) < sent:
                last = wait_for(odom, check)
            return last

        # Every message sent so far makes its frame...
        last = caught_up(last)
        # ...five sent together make five...
        send(5)
        last = caught_up(last)
        # ...and one more exactly one.
        send()
        last = caught_up(last)
        assert frame(last) == sent
    finally:
        s.stop()


LATCHED = Qos(
    Policy.Reliability.Reliable(duration(seconds=1)),
    Policy.Durability.TransientLocal,
    Policy.History.KeepLast(100),
)


def test_soccer_match_on_ros2():
    """A FutRob match, watched: /clock, every player's odom and /tf, the ball, and the score
    and events (latched) that the match's own summary then reports."""
    import json

    domain = DOMAIN + 4
    dp = DomainParticipant(domain)
    s = Simrob(
        "soccer", "match", "--seed", "1", "--duration", "15", "--json", "--ros2",
        domain=domain,
    )
    try:
        clock = reader(dp, "/clock", m.Clock, BEST_EFFORT)
        keeper = reader(dp, "cyan_3/odom", m.Odometry)
        striker = reader(dp, "magenta_7/odom", m.Odometry)
        ball = reader(dp, "/soccer/ball", m.PoseStamped)
        tf = reader(dp, "/tf", m.TFMessage, RELIABLE)
        score = reader(dp, "/soccer/score", m.Int32MultiArray, LATCHED)
        events = reader(dp, "/soccer/events", m.String, LATCHED)
        t0 = wait_for(clock).clock.sec
        wait_for(clock, lambda c: c.clock.sec >= t0 + 1)
        k = wait_for(keeper)
        assert k.header.frame_id == "cyan_3/odom" and k.child_frame_id == "cyan_3/base_link"
        # The cyan keeper guards the goal at −x, facing +x.
        assert k.pose.pose.position.x < -3.0, k.pose.pose.position
        wait_for(striker)
        b = wait_for(ball)
        assert b.header.frame_id == "world" and abs(b.pose.position.z) < 0.5, b
        names = lambda msg: {t.child_frame_id for t in msg.transforms}  # noqa: E731
        wait_for(tf, lambda msg: "ball" in names(msg))
        wait_for(tf, lambda msg: "magenta_8/base_link" in names(msg))
        first = wait_for(score)
        assert first.layout.dim[0].label == "cyan,magenta" and len(first.data) == 2
        kick_off = wait_for(events)
        assert kick_off.data.startswith("0.00 kick-off "), kick_off.data
        # Until the match ends: the last score published.
        last = first
        out = s.finished(TIMEOUT * 2)
        for msg in score.take_iter(timeout=duration(milliseconds=10)):
            last = msg
        summary = json.loads(out.strip().splitlines()[-1])
        assert list(last.data) == summary["goals"], (last.data, summary["goals"])
    finally:
        s.stop()


STEP_QOS = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(100))


def test_swarm_lockstep_repeats_its_state_while_it_waits(tmp_path):
    """A lockstep swarm run that has been sent no step publishes its state (odometry and
    /clock at time 0) again and again while it waits, for a controller that joins late."""
    domain = DOMAIN + 10
    dp, s = swarm_lockstep(domain, tmp_path / "repeat.toml")
    try:
        odom = reader(dp, "r1/odom", m.Odometry)
        clock = reader(dp, "/clock", m.Clock, BEST_EFFORT)
        at = lambda t: (t.sec, t.nanosec)  # noqa: E731
        for _ in range(3):
            assert at(wait_for(odom).header.stamp) == (0, 0)
        assert at(wait_for(clock).clock) == (0, 0)
    finally:
        s.stop()


def test_swarm_lockstep_stops_at_once_with_the_frames_asked_for(tmp_path):
    """A stop signal ends a lockstep swarm run at once: it runs no frame that no step message
    asked for, and its summary counts the frames asked for."""
    import json

    domain = DOMAIN + 11
    dp, s = swarm_lockstep(domain, tmp_path / "stop.toml", "--json")
    try:
        odom = reader(dp, "r1/odom", m.Odometry)
        step = writer(dp, "/simrob/step", m.Empty, STEP_QOS)
        wait_matched(dp, step)
        for _ in range(3):
            step.write(m.Empty())
        fps = 20  # the scenario's
        frame = lambda o: round((o.header.stamp.sec + o.header.stamp.nanosec * 1e-9) * fps)  # noqa: E731
        wait_for(odom, lambda o: frame(o) == 3)
        s.proc.terminate()
        s.proc.wait(TIMEOUT)
        for p in s.pumps:
            p.join(TIMEOUT)
        summary = json.loads("".join(s.stdout).strip().splitlines()[-1])
        assert summary["frames"] == 3, summary
        assert summary["ended_by"] == "interrupted", summary
    finally:
        s.stop()


def test_mrs_offers_no_wheel_commands():
    """`mrs --ros2` takes cmd_vel and does not subscribe to wheel_commands (the SimRob
    server's wheeled robots only): a wheel_commands writer never matches, so nothing sent on
    it can step a lockstep world."""
    domain = DOMAIN + 12
    dp = DomainParticipant(domain)
    s = Simrob("mrs", "--port", "0", "--ros2", "--ros2-lockstep", "--ros2-odom-rate", "0", domain=domain)
    try:
        odom = reader(dp, "nomad_0/odom", m.Odometry)
        cmd = writer(dp, "nomad_0/cmd_vel", m.Twist)
        wheels = writer(dp, "nomad_0/wheel_commands", m.Float64MultiArray)
        wait_matched(dp, cmd)
        # The paused world's repeats: time for the other reader's announcement, had it one.
        for _ in range(3):
            wait_for(odom)
        assert not wheels.get_matched_subscriptions()
    finally:
        s.stop()


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_a_large_sample_is_dropped_with_a_log_line_and_costs_no_memory():
    """Samples of 16 MB (a Float64MultiArray of 2,000,000 doubles) on an input topic are
    dropped before they are reassembled, with a log line, and the server's memory stays as
    it was (it grew by their size each)."""
    domain = DOMAIN + 13
    dp, s = soccer_serve(domain)
    try:
        odom = reader(dp, "robot_3/odom", m.Odometry)
        wheels = writer(dp, "robot_3/wheel_commands", m.Float64MultiArray, BEST_EFFORT)
        wait_matched(dp, wheels)
        wait_for(odom)
        before = rss_mb(s.proc.pid)
        big = m.Float64MultiArray(data=[1.0] * 2_000_000)
        for _ in range(5):
            wheels.write(big)
        said = s.says("datagrams dropped: a sample of more than 65536 bytes (--ros2-max-sample)")
        # The odometry that keeps coming is the clock of this wait.
        wait_for(odom, said)
        grown = rss_mb(s.proc.pid) - before
        assert grown < 32, f"{grown:.0f} MB more after five 16 MB samples"
        # A small command still arrives and is taken.
        wheels.write(m.Float64MultiArray(data=[1.0, 1.0]))
        wait_for(odom, lambda o: o.twist.twist.angular.z != 0.0 or o.twist.twist.linear.x != 0.0, each=lambda: wheels.write(m.Float64MultiArray(data=[2.0, -2.0])))
    finally:
        s.stop()
