"""The largest file the in-process worlds read is the constructors' ``max_file_bytes=``
(default ``MAX_FILE``, 64 MiB): a file over it raises ``ValueError`` naming it, its size, the
limit and the argument, and the same file is read under the default."""

from __future__ import annotations

from pathlib import Path

import pytest

from simrob import _native, sim

REPO = Path(__file__).resolve().parents[2]
SOCCER = REPO / "scenarios" / "soccer.xml"
MAP = REPO / "maps" / "example.txt"
HOSPITAL = REPO / "scenarios" / "swarm" / "hospital.toml"
HOSPITAL_MAP = REPO / "scenarios" / "swarm" / "hospital.drawio"


def _says_too_large(e: pytest.ExceptionInfo, path: Path, limit: int) -> None:
    text = str(e.value)
    for part in (str(path), f"{path.stat().st_size} bytes", f"{limit}-byte limit", "max_file_bytes="):
        assert part in text, (part, text)


def test_the_default_is_max_file():
    assert _native.MAX_FILE == 64 << 20


def test_a_scenario_over_a_lowered_limit_is_refused():
    with pytest.raises(ValueError) as e:
        sim.World(str(SOCCER), max_file_bytes=100)
    _says_too_large(e, SOCCER, 100)
    with sim.World(str(SOCCER)) as w:
        assert len(w.poses()[0]) == 2
    with sim.World(str(SOCCER), max_file_bytes=SOCCER.stat().st_size) as w:
        assert len(w.poses()[0]) == 2


def test_load_is_held_to_the_worlds_limit(tmp_path):
    saved = tmp_path / "saved.xml"
    with sim.World(str(SOCCER)) as w:
        w.save(str(saved))
    small = sim.World(max_file_bytes=100)
    with pytest.raises(ValueError) as e:
        small.load(str(saved))
    _says_too_large(e, saved, 100)
    with sim.World() as w:
        w.load(str(saved))
        assert len(w.poses()[0]) == 2


def test_a_map_over_a_lowered_limit_is_refused():
    for make in (
        lambda **kw: sim.MrsWorld(str(MAP), **kw),
        lambda **kw: sim.NomadGoal(1, str(MAP), **kw),
    ):
        with pytest.raises(ValueError) as e:
            make(max_file_bytes=100)
        _says_too_large(e, MAP, 100)
        make().close()


def test_a_swarm_scenario_or_its_map_over_a_lowered_limit_is_refused():
    with pytest.raises(ValueError) as e:
        sim.Swarm(str(HOSPITAL), max_file_bytes=100)
    _says_too_large(e, HOSPITAL, 100)
    # The scenario within the limit, the map it names over it.
    limit = HOSPITAL.stat().st_size
    with pytest.raises(ValueError) as e:
        sim.Swarm(str(HOSPITAL), max_file_bytes=limit)
    _says_too_large(e, HOSPITAL_MAP, limit)
    with sim.Swarm(str(HOSPITAL), duration=1.0) as s:
        assert s.frame == 0


@pytest.mark.parametrize(
    "bad, error",
    [(0, ValueError), (-1, ValueError), (True, TypeError), (1.5, TypeError), ("100", TypeError)],
)
def test_a_bad_max_file_bytes_is_refused(bad, error):
    for make in (
        lambda: sim.World(str(SOCCER), max_file_bytes=bad),
        lambda: sim.MrsWorld(str(MAP), max_file_bytes=bad),
        lambda: sim.Swarm(str(HOSPITAL), max_file_bytes=bad),
    ):
        with pytest.raises(error) as e:
            make()
        assert "max_file_bytes" in str(e.value), str(e.value)


def test_a_swarms_robots_and_grid_cells_are_the_callers_to_set():
    # More robots than max_robots, or a world of more cells than max_grid_cells, is refused
    # before anything is built, saying which argument raises it; within them the run starts.
    with pytest.raises(ValueError) as e:
        sim.Swarm("warehouse", robots=3, max_robots=2, duration=0.1)
    assert "max_robots=" in str(e.value) and "2" in str(e.value), str(e.value)
    with sim.Swarm("warehouse", robots=3, max_robots=3, duration=0.1) as s:
        assert s.frame == 0
    with pytest.raises(ValueError) as e:
        sim.Swarm(str(HOSPITAL), max_grid_cells=10, duration=0.1)
    assert "max_grid_cells=" in str(e.value), str(e.value)
    for bad in (0, 1_000_000_001):
        with pytest.raises(ValueError) as e:
            sim.Swarm("warehouse", max_robots=bad)
        assert "max_robots=" in str(e.value), str(e.value)
    with pytest.raises(TypeError):
        sim.Swarm("warehouse", max_grid_cells=1.5)
