"""The type stub ``simrob/_native.pyi`` matches the built extension: the same classes,
methods, attributes, functions and constants, each method with the same parameters (names,
order, defaults), and nothing public of the extension left out."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import simrob
from simrob import _native

STUB = Path(simrob.__file__).with_name("_native.pyi")


def _stub_params(fn: ast.FunctionDef) -> list[tuple[str, object]]:
    args = fn.args.posonlyargs + fn.args.args
    defaults = [inspect.Parameter.empty] * (len(args) - len(fn.args.defaults)) + [
        ast.literal_eval(d) for d in fn.args.defaults
    ]
    return [(a.arg, d) for a, d in zip(args, defaults) if a.arg != "self"]


def _runtime_params(obj) -> list[tuple[str, object]]:
    return [
        (p.name, p.default)
        for p in inspect.signature(obj).parameters.values()
        if p.name != "self"
    ]


def _public(names) -> set[str]:
    return {n for n in names if not n.startswith("_") or n == "__len__"}


def test_the_stub_matches_the_extension():
    tree = ast.parse(STUB.read_text())
    functions, classes, constants = {}, {}, set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "_Closes":
            continue  # simrob.sim's `with`, checked below
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
        elif isinstance(node, ast.AnnAssign) and not node.target.id.startswith("_"):
            constants.add(node.target.id)
    runtime = {n: getattr(_native, n) for n in dir(_native) if not n.startswith("_")}
    assert set(functions) | set(classes) | constants == set(runtime)
    for name in constants:
        assert isinstance(runtime[name], int), name
    for name, fn in functions.items():
        assert _stub_params(fn) == _runtime_params(runtime[name]), name
    for name, node in classes.items():
        cls = runtime[name]
        members = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
        assert _stub_params(members.pop("__init__")) == _runtime_params(cls), name
        assert set(members) == _public(vars(cls)), name
        for member, fn in members.items():
            value = inspect.getattr_static(cls, member)
            is_property = any(
                isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list
            )
            assert is_property == (type(value).__name__ == "getset_descriptor"), (name, member)
            if not is_property and member != "__len__":
                assert _stub_params(fn) == _runtime_params(getattr(cls, member)), (name, member)
    # The classes the stub gives `with` are those simrob.sim closes in a `with` block.
    from simrob import sim

    closing = {
        n.name
        for n in classes.values()
        if any(isinstance(b, ast.Name) and b.id == "_Closes" for b in n.bases)
    }
    assert closing == {
        n for n in sim.__all__ if hasattr(getattr(sim, n), "__enter__") and n in runtime
    }

