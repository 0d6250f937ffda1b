"""The textnb command (python -m textnb, or the console script).

The commands procmail runs once per message go to :mod:`textnb.quick`, which answers them
without importing click or numpy when their options are the usual ones; everything else goes
to the full command line, :mod:`textnb.cli`.
"""

from __future__ import annotations

import sys


def main() -> None:
    from .quick import run
    code = run(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from .cli import main as cli_main
    cli_main()


if __name__ == "__main__":
    main()
