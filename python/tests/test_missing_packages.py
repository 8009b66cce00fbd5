"""Without numpy, gymnasium or pettingzoo: an error that names the package and the command
that installs it, never a panic of the extension with a backtrace."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from simrob import sim

SOCCER = Path(__file__).resolve().parents[2] / "scenarios" / "soccer.xml"


def test_a_world_without_numpy_says_how_to_install_it(monkeypatch):
    # `None` in sys.modules makes `import numpy` fail as if it were not installed.
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(ModuleNotFoundError) as e:
        sim.World(str(SOCCER))
    assert e.value.name == "numpy"
    assert "simrob.sim needs numpy" in str(e.value)
    assert "pip install './python'" in str(e.value) and "pip install numpy" in str(e.value)
    with pytest.raises(ModuleNotFoundError, match="numpy"):
        sim.SumBotBall(2)


def test_with_numpy_a_world_is_made_as_before():
    with sim.World(str(SOCCER)) as w:
        ids, poses = w.poses()
        assert poses.shape[0] == len(ids) > 0
        assert isinstance(w, sim.World)


@pytest.mark.parametrize(
    "module, package, extra",
    [
        ("simrob.gym", "gymnasium", "[gym]"),
        ("simrob.pettingzoo", "pettingzoo", "[pettingzoo]"),
        ("simrob.pettingzoo", "gymnasium", "[pettingzoo]"),
    ],
)
def test_an_environment_module_without_its_extra_names_it(monkeypatch, module, package, extra):
    monkeypatch.setitem(sys.modules, package, None)
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ModuleNotFoundError) as e:
        importlib.import_module(module)
    assert e.value.name == package
    assert f"{module} needs {package}" in str(e.value)
    assert f"pip install './python{extra}'" in str(e.value)
