"""Fixtures: the real simrob binary (SIMROB_BIN or simrob on the PATH), started on free ports."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from simrob import server

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[server.Process]:
    """A SimRob server with the soccer scenario (field 7, SumBot 3, ball 8), saving into tmp_path."""
    with server.serve(
        "--scenario", str(REPO / "scenarios" / "soccer.xml"), "--save-dir", str(tmp_path)
    ) as p:
        yield p


@pytest.fixture
def mrs_sim() -> Iterator[server.Process]:
    """A stepped Mobile Robot Simulator on the example map: time moves only with #STEP."""
    with server.mrs("--map", str(REPO / "maps" / "example.txt"), "--stepped") as p:
        yield p
