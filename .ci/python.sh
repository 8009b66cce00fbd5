#!/usr/bin/env bash
# The Python package in a fresh venv: its wheel built with maturin (the extension module
# `simrob._native`, crates/py, reusing the workspace's debug build in target/), installed with
# gymnasium and pettingzoo; then python/tests: the network client against the real simrob
# binary, the in-process worlds, and the Gymnasium and PettingZoo API checkers on every
# environment.
# Usage: .ci/python.sh PATH/TO/simrob
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib.sh
simrob_bin python "$1"

python_venv_ready python
tmp="$(mktemp -d)"
venv="$tmp/venv"
python3 -m venv "$venv"
timeout 600 "$venv/bin/pip" install -q "maturin>=1.9.4,<2" numpy gymnasium pettingzoo pytest
# The dev profile shares target/debug with `cargo test --workspace` (dependencies there are
# optimized, see the workspace's profiles), so only the extension crate is compiled anew.
(cd python && CARGO_TARGET_DIR="$PWD/../target" timeout 1200 "$venv/bin/maturin" build \
  --profile dev -o "$tmp/wheels")
timeout 600 "$venv/bin/pip" install -q "$tmp"/wheels/simrob-*.whl
# The plotting example needs matplotlib; the tests do not.
SIMROB_BIN="$bin" timeout 900 "$venv/bin/pytest" -q -p no:cacheprovider python/tests
rm -rf "$tmp"
