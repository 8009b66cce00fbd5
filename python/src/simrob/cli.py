"""The ``simrob`` command installed with the package: the same command line as the Rust
binary, run in this process through the extension module."""

from __future__ import annotations

import sys


def main() -> None:
    """Runs ``simrob`` with this process's arguments and exits with its status."""
    from . import _native

    sys.exit(_native.main(["simrob", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
