#!/usr/bin/env bash
# MuJoCo's library for the benchmark's MuJoCo scene test (crates/odebench): the `mujoco-core`
# wheel (it carries libmujoco.so) in a venv of its own. Prints the library's path.
# Usage: lib="$(.ci/mujoco.sh DIR)"
set -euo pipefail
dir="$1"
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  echo "mujoco: installing python3 and python3-venv" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
fi
python3 -m venv "$dir" >&2
timeout 300 "$dir/bin/pip" install -q --no-deps "mujoco-core==4.0.0" >&2
ls "$dir"/lib/python3*/site-packages/mujoco/libmujoco.so.* | head -n 1
