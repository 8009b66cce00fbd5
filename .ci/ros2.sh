#!/usr/bin/env bash
# simrob's ROS 2 participant against an independent DDS implementation: Eclipse Cyclone DDS's
# Python package (its wheels carry the C library), in a fresh venv. Both sides stay on the
# loopback interface (the test sets CYCLONEDDS_URI and ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST)
# on a random domain.
# Usage: .ci/ros2.sh PATH/TO/simrob
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib.sh
simrob_bin ros2 "$1"

python_venv_ready ros2
venv="$(mktemp -d)/venv"
python3 -m venv "$venv"
timeout 600 "$venv/bin/pip" install -q "cyclonedds==11.0.1" pytest
SIMROB_BIN="$bin" timeout 600 "$venv/bin/pytest" -q -p no:cacheprovider crates/ros2/tests/cyclone
rm -rf "$(dirname "$venv")"
