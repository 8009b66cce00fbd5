"""Record a run and plot the robot's trajectory: starts `simrob serve --record`, drives the
SumBot to the ball in lockstep, exports the recording's poses as CSV
(`simrob replay FILE --export csv`) and plots x–y with matplotlib.

    pip install './python[plot]'
    python python/examples/record_and_plot.py trajectory.png
"""

from __future__ import annotations

import csv
import io
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

from simrob import server

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sumbot_lockstep import SCENARIO, drive  # noqa: E402


def main(out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with tempfile.TemporaryDirectory() as tmp:
        rec = str(Path(tmp) / "run.simrec")
        with server.serve("--scenario", str(SCENARIO), "--record", rec) as sim:
            drive(sim.address)
        text = server.run(["replay", rec, "--export", "csv"])
    paths: Dict[Tuple[str, str], List[Tuple[float, float]]] = defaultdict(list)
    for row in csv.DictReader(io.StringIO(text)):
        paths[(row["kind"], row["entity"])].append((float(row["x"]), float(row["y"])))
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for (kind, entity), xy in sorted(paths.items()):
        xs, ys = zip(*xy)
        ax.plot(xs, ys, label=f"{kind} {entity}")
        ax.plot(xs[-1:], ys[-1:], "o", color=ax.lines[-1].get_color())
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title("SumBot driving to the ball")
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=150)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "trajectory.png")
