"""The Python API reference page, ``docs/reference/python.md``, is generated from the installed
package (signatures and docstrings); this test fails when the page differs.
``SIMROB_UPDATE_DOCS=1 pytest python/tests/test_api_reference.py`` rewrites it."""

from __future__ import annotations

import importlib
import inspect
import os
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "python.md"

# The modules a user imports, in the order the page takes them.
MODULES = [
    "simrob",
    "simrob.sim",
    "simrob.gym",
    "simrob.pettingzoo.drones",
    "simrob.pettingzoo.futrob",
    "simrob.agent",
    "simrob.mrs",
    "simrob.soccer",
    "simrob.coord",
    "simrob.protocol",
    "simrob.server",
]


def _text(doc: str | None) -> str:
    """A docstring as Markdown: reStructuredText roles as code."""
    if not doc:
        return ""
    return re.sub(r":\w+:`~?([^`]+)`", r"`\1`", inspect.cleandoc(doc)).strip()


def _signature(obj) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(…)"
    # Annotations are strings (`from __future__ import annotations`): shown without quotes;
    # a function as a default without its address.
    text = re.sub(r"(: |-> )\"?'([^']*)'\"?", r"\1\2", text)
    text = re.sub(r"<function ([\w.<>]+) at 0x[0-9a-f]+>", r"<function \1>", text)
    # A method's `self` (and the positional-only marker after it) goes without saying.
    return re.sub(r"^\(self(, /)?(, )?", "(", text)


def _public(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            n
            for n, v in vars(module).items()
            if not n.startswith("_")
            and (inspect.isclass(v) or inspect.isfunction(v) or inspect.isbuiltin(v))
            and getattr(v, "__module__", None) == module.__name__
        ]
    return sorted(names, key=str.lower)


def _members(cls) -> list[tuple[str, object]]:
    """The public members `cls` or another class of this package defines (not those it
    inherits from Gymnasium, PettingZoo or Python, which change with their versions)."""
    out = []
    for name in sorted(dir(cls), key=str.lower):
        if name.startswith("_"):
            continue
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        if owner is None or not owner.__module__.startswith("simrob"):
            continue
        out.append((name, vars(owner)[name]))
    return out


def _class(name: str, cls) -> list[str]:
    lines = [f"### `{name}{_signature(cls)}`", "", _text(cls.__doc__), ""]
    for member, value in _members(cls):
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property) or type(value).__name__ == "getset_descriptor":
            head = f"- `{member}` (attribute)"
        elif callable(value):
            head = f"- `{member}{_signature(getattr(cls, member))}`"
        elif isinstance(value, (bool, int, float, str)):
            lines.append(f"- `{member} = {value!r}`")
            continue
        else:  # Data of other kinds (a Gymnasium `metadata`): not this package's API.
            continue
        doc = _text(getattr(value, "__doc__", None))
        first = doc.split("\n\n")[0].replace("\n", " ") if doc else ""
        lines.append(f"{head}: {first}" if first else head)
    lines.append("")
    return lines


def generate() -> str:
    out = [
        "# The Python API",
        "",
        "Every public class, function and constant of the `simrob` package, with its signature and",
        "documentation, generated from the installed package "
        "(`SIMROB_UPDATE_DOCS=1 pytest python/tests/test_api_reference.py`; the test fails when",
        "this page is out of date). The [Python guide](../python.md) shows them at work.",
        "",
    ]
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        out += [f"## `{module_name}`", "", _text(module.__doc__), ""]
        for name in _public(module):
            value = getattr(module, name)
            home = getattr(value, "__module__", None)
            if inspect.ismodule(value):
                out += [f"- `{name}`: the module `{value.__name__}` (below)", ""]
            elif home != module_name and home in MODULES:
                out += [f"- `{name}`: `{home}.{name}` (below)", ""]
            elif inspect.isclass(value):
                out += _class(name, value)
            elif callable(value):
                out += [f"### `{name}{_signature(value)}`", "", _text(value.__doc__), ""]
            else:
                out += [f"- `{name} = {value!r}`", ""]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out))
    # One-line items in a row make one list.
    while True:
        tight = re.sub(r"(\n- [^\n]*)\n\n(?=- )", r"\1\n", text)
        if tight == text:
            break
        text = tight
    return text.rstrip() + "\n"


def test_the_api_reference_page_is_current():
    text = generate()
    # Nothing that changes from one run to the next (an object's address).
    assert not re.search(r" at 0x[0-9a-f]+", text), "an address in the page"
    if os.environ.get("SIMROB_UPDATE_DOCS") == "1":
        PAGE.write_text(text)
    assert PAGE.exists() and PAGE.read_text() == text, (
        f"{PAGE} is out of date: SIMROB_UPDATE_DOCS=1 pytest python/tests/test_api_reference.py"
    )
