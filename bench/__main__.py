"""``python -m bench``: the studies and what each measures (the first line of its docstring)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def studies() -> list[str]:
    """The modules of bench/ that run as ``python -m bench.NAME``, by name."""
    return sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])
                  if not m.ispkg and not m.name.startswith("_"))


def main() -> int:
    print(__import__("bench").__doc__.strip() + "\n\nStudies:")
    for name in studies():
        doc = (importlib.import_module(f"bench.{name}").__doc__ or "").strip()
        print(f"  {name:<15} {doc.splitlines()[0] if doc else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
