"""python -m textnb → the command line."""

from .cli import main

main()
