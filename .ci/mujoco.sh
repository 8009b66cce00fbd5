#!/usr/bin/env bash
# MuJoCo's library for the benchmark's MuJoCo scene test (crates/odebench): the `mujoco-core`
# wheel (it carries libmujoco.so) in a venv of its own. Prints the library's path.
# Usage: lib="$(.ci/mujoco.sh DIR)"
set -euo pipefail
. "$(dirname "$0")/lib.sh"
dir="$1"
# Its messages go to stderr: stdout is the library's path.
python_venv_ready mujoco >&2
python3 -m venv "$dir" >&2
timeout 300 "$dir/bin/pip" install -q --no-deps "mujoco-core==4.0.0" >&2
ls "$dir"/lib/python3*/site-packages/mujoco/libmujoco.so.* | head -n 1
