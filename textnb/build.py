"""What this install was built with: which of textnb's C parts it has, else pure Python.

Each C part (textnb/_*.c) is optional: without a C compiler at install time pip still installs
textnb, and the modules that use a part fall back to the same computation in Python (the same
numbers; training about 3 times slower). ``textnb --version`` names the build.
"""

from __future__ import annotations

import importlib

# The C parts, by module, and what each makes faster.
C_PARTS = {"_tokens": "tokens", "_markup": "markup", "_scores": "scores",
           "_onerror": "training on error", "_modelfile": "model files"}

REINSTALL = ("install a C compiler (gcc or clang) and Python's headers, then reinstall "
             "textnb (pip install --force-reinstall --no-deps textnb)")


def c_parts() -> dict[str, bool]:
    """{part: whether it loads here}, in :data:`C_PARTS` order: a part that was not built, or
    that was and does not load, is one the modules do without, as they do (ImportError)."""
    found = {}
    for module, name in C_PARTS.items():
        try:
            importlib.import_module(f"textnb.{module}")
        except ImportError:
            found[name] = False
        else:
            found[name] = True
    return found


def description() -> str:
    """The build in a few words: "C parts: …", "pure Python …", or which parts are missing."""
    parts = c_parts()
    built = [name for name, ok in parts.items() if ok]
    missing = [name for name, ok in parts.items() if not ok]
    if not missing:
        return "C parts: " + ", ".join(built)
    if not built:
        return "pure Python: no C parts were built; training is about 3 times slower"
    return f"C parts: {', '.join(built)}; pure Python: {', '.join(missing)}"


def pure_python_note() -> str | None:
    """What to tell a user whose install lacks C parts (and how to get them), else None."""
    if all(c_parts().values()):
        return None
    return f"textnb is {description()}; to build them, {REINSTALL}"
