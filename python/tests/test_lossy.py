"""The Python client through the lossy-network relay (`simrob netbed udp`, loopback, seeded)
in front of a real `simrob serve`: a lost confirmation is a clear `Timeout`, only
`Register_Agent` is ever sent again, and split broadcasts come whole or not at all."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, Iterator, List, Union

import pytest

from simrob import Agent, Timeout
from simrob.server import Process

REPO = Path(__file__).resolve().parents[2]


def relay(server: Process, *impairment: str) -> Process:
    """`simrob netbed udp` in front of `server` (impairing as told)."""
    host, port = server.address
    return Process(["netbed", "udp", "--to", f"{host}:{port}", *impairment])


def totals(r: Process) -> Dict[str, int]:
    """Stops the relay and reads the totals it prints: up_received, down_lost, …"""
    r.stop()
    line = [l for l in r.lines if l.startswith("agents ")][-1]
    out: Dict[str, int] = {}
    for way in ("up", "down"):
        m = re.search(way + r": received (\d+), lost (\d+), duplicated (\d+), reordered (\d+), sent (\d+)", line)
        assert m, line
        for name, v in zip(("received", "lost", "duplicated", "reordered", "sent"), m.groups()):
            out[f"{way}_{name}"] = int(v)
    return out


def recording(agent: Agent) -> List[str]:
    """Every datagram `agent` sends from now on, as text."""
    sent: List[str] = []
    send = agent.send_raw

    def record(xml: Union[str, bytes]) -> None:
        sent.append(xml if isinstance(xml, str) else xml.decode())
        send(xml)

    agent.send_raw = record  # type: ignore[method-assign]
    return sent


def test_lost_confirmations_are_clear_timeouts_and_only_register_agent_is_sent_again(sim: Process) -> None:
    # Half the server's answers lost (seeded); no broadcasts, so every answer is a
    # confirmation and the relay's count of lost ones is exact.
    r = relay(sim, "--loss", "0.5", "--only", "down", "--seed", "7")
    with r, Agent(r.address, timeout=1.5) as agent:
        sent = recording(agent)
        agent.register("lossy", broadcast=-1, timeout=60)
        registers = len(sent)
        assert registers >= 1 and all("Register_Agent" in s for s in sent)
        confirmed = timeouts = 0
        for _ in range(20):
            try:
                agent.set_sync_wait(0.1)
                confirmed += 1
            except Timeout as e:
                timeouts += 1
                assert "the request or its answer was lost" in str(e), str(e)
        # Each request went out once: nothing but Register_Agent is repeated.
        assert len(sent) == registers + 20
        assert sum("Set_Sync_Wait" in s for s in sent) == 20
        assert confirmed > 0 and timeouts > 0, (confirmed, timeouts)
        t = totals(r)
    # The relay passed on every request it got (none impaired up) and the server answered each.
    reached = t["up_received"] - 20
    assert 1 <= reached <= registers, (t, registers)
    assert t["up_lost"] == 0 and t["down_received"] == t["up_received"], t
    # Every lost answer is one the client gave up on: a register resent, or a Timeout.
    assert t["down_lost"] == (reached - 1) + timeouts, (t, registers, timeouts)


def test_a_register_never_confirmed_is_resent_then_a_clear_timeout(sim: Process) -> None:
    r = relay(sim, "--loss", "1", "--only", "down")
    with r, Agent(r.address) as agent:
        sent = recording(agent)
        with pytest.raises(Timeout) as e:
            agent.register("unheard", broadcast=-1, timeout=2.0)
        assert "no confirmation of Register_Agent" in str(e.value), str(e.value)
        assert len(sent) >= 2 and all("Register_Agent" in s for s in sent), sent
        t = totals(r)
    assert t["up_received"] == len(sent), t


@pytest.fixture
def small_datagrams(tmp_path: Path) -> Iterator[Process]:
    """The soccer scene on a server whose broadcasts are split into 1024-byte parts."""
    conf = tmp_path / "small.data"
    conf.write_text("maximumdatagramsize 1024\n")
    with Process(["serve", "--port", "0", "--config", str(conf),
                  "--scenario", str(REPO / "scenarios" / "soccer.xml")]) as p:
        yield p


def test_split_broadcasts_through_a_lossy_link_arrive_whole_or_not_at_all(small_datagrams: Process) -> None:
    with Agent(small_datagrams.address) as direct:
        direct.register("direct")
        whole = direct.next_broadcast(timeout=30)
    size = (len(whole.bodies), len(whole.entities))
    assert sum(size) > 10, size
    r = relay(small_datagrams, "--loss", "0.05", "--dup", "0.05", "--reorder", "0.2",
              "--only", "down", "--seed", "21")
    with r, Agent(r.address) as agent:
        agent.register("lossy", timeout=60)
        last = 0
        for _ in range(40):
            b = agent.next_broadcast(timeout=30)
            assert b.part is None, "parts are put together"
            assert (len(b.bodies), len(b.entities)) == size, f"iteration {b.iteration}: half a world"
            assert b.iteration > last, (b.iteration, last)
            last = b.iteration
        t = totals(r)
    assert t["down_lost"] > 0 and t["down_duplicated"] > 0 and t["down_reordered"] > 0, t
