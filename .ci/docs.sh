#!/usr/bin/env bash
# Builds the documentation site (MkDocs, mkdocs.yml) into target/site. --strict with the
# `validation:` settings of mkdocs.yml makes a broken internal link or anchor fail the build.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/docs-venv
if [ ! -x "$venv/bin/mkdocs" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'mkdocs>=1.6,<2'
fi
"$venv/bin/mkdocs" build --strict --site-dir target/site
