# What the CI scripts share; a script sources it (`. "$(dirname "$0")/lib.sh"`) after its
# `set -euo pipefail`.

# simrob_bin NAME PATH: sets `bin` to the absolute path of the simrob binary at PATH; exits 1,
# saying so after NAME, when there is none.
simrob_bin() {
  bin="$(realpath "$2")"
  [ -x "$bin" ] || { echo "$1: no simrob binary at $2" >&2; exit 1; }
}

# python_venv_ready NAME: installs python3 and python3-venv (saying so after NAME) unless
# python3 can already make a venv.
python_venv_ready() {
  if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    echo "$1: installing python3 and python3-venv"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
  fi
}
