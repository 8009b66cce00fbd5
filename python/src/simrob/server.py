"""Starting a ``simrob`` binary from Python: on free ports, waiting until it is ready."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple, Union

from .agent import SimRobError


def find_binary() -> str:
    """The simrob binary: ``SIMROB_BIN`` if set, else ``simrob`` on the PATH."""
    explicit = os.environ.get("SIMROB_BIN")
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise SimRobError(f"SIMROB_BIN={explicit} is not an executable file")
        return explicit
    found = shutil.which("simrob")
    if found is None:
        raise SimRobError(
            "no simrob binary: install it (cargo install --path crates/cli) or set SIMROB_BIN"
        )
    return found


_READY = re.compile(r"listening on (udp|tcp)://(\S+):(\d+)")


class Process:
    """A running ``simrob`` subcommand that prints ``listening on udp|tcp://IP:PORT`` when
    ready (``serve``, ``mrs``). Use as a context manager; :attr:`address` is where it
    listens and :attr:`lines` what it printed."""

    def __init__(self, args: Sequence[str], timeout: float = 30.0, cwd: Union[str, Path, None] = None) -> None:
        self.args = [find_binary(), *args]
        self.lines: List[str] = []
        self._proc = subprocess.Popen(
            self.args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
        )
        ready = threading.Event()
        found: List[Tuple[str, int]] = []

        def pump() -> None:
            assert self._proc.stdout is not None
            for line in self._proc.stdout:
                self.lines.append(line.rstrip("\n"))
                m = _READY.search(line)
                if m and not found:
                    found.append((m.group(2), int(m.group(3))))
                    ready.set()
            ready.set()

        self._reader = threading.Thread(target=pump, daemon=True)
        self._reader.start()
        ended = ready.wait(timeout)
        if not found:
            # Its output ended without the ready line: it is exiting; wait for its status.
            try:
                status: Optional[int] = self._proc.wait(10.0) if ended else self._proc.poll()
            except subprocess.TimeoutExpired:
                status = None
            self.stop()
            self._reader.join(1.0)
            output = "\n".join(self.lines[-20:])
            if status is not None:
                # It ended before it was ready: say so, with what it said (its error).
                raise SimRobError(
                    f"{' '.join(self.args)} exited with status {status} before it was ready:\n{output}"
                )
            raise SimRobError(f"{' '.join(self.args)} did not start within {timeout} s:\n{output}")
        self.address: Tuple[str, int] = found[0]

    def stop(self, timeout: float = 10.0) -> Optional[int]:
        """Stops it (SIGINT, as Ctrl-C, then SIGKILL) and returns its exit status."""
        if self._proc.poll() is None:
            self._proc.send_signal(2)
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._reader.join(timeout)
        return self._proc.returncode

    def __enter__(self) -> "Process":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve(*args: str, **kw: Any) -> Process:
    """``simrob serve --port 0 ARGS…``: a SimRob server on a free port."""
    return Process(["serve", "--port", "0", *args], **kw)


def mrs(*args: str, **kw: Any) -> Process:
    """``simrob mrs --port 0 ARGS…``: a Mobile Robot Simulator on a free port."""
    return Process(["mrs", "--port", "0", *args], **kw)


def run(args: Sequence[str], timeout: float = 600.0, cwd: Union[str, Path, None] = None) -> str:
    """Runs ``simrob ARGS…`` to the end and returns its standard output (SimRobError with its
    output on failure)."""
    done = subprocess.run([find_binary(), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SimRobError(f"simrob {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout
