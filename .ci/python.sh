#!/usr/bin/env bash
# The Python package's tests (python/tests) against the real simrob binary, in a fresh venv.
# Usage: .ci/python.sh PATH/TO/simrob
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "$1")"
[ -x "$bin" ] || { echo "python: no simrob binary at $1" >&2; exit 1; }

if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  echo "python: installing python3 and python3-venv"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
fi
venv="$(mktemp -d)/venv"
python3 -m venv "$venv"
timeout 600 "$venv/bin/pip" install -q ./python pytest
# The plotting example needs matplotlib; the tests do not.
SIMROB_BIN="$bin" timeout 900 "$venv/bin/pytest" -q -p no:cacheprovider python/tests
rm -rf "$(dirname "$venv")"
