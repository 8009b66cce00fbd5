"""``python -m simrob``: the ``simrob`` command line, as the installed ``simrob`` command runs it
(useful where the environment's scripts folder is not on the path, as in a notebook's kernel)."""

from .cli import main

main()
