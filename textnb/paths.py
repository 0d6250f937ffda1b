"""Where models live by default: $TEXTNB_MODEL, else $XDG_DATA_HOME/textnb/ (~/.local/share)."""

from __future__ import annotations

import os
from pathlib import Path

MODEL_ENV = "TEXTNB_MODEL"
TABLE_MODEL_ENV = "TEXTNB_TABLE_MODEL"


def data_dir() -> Path:
    """$XDG_DATA_HOME/textnb, with the XDG default ~/.local/share when unset or relative."""
    base = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "textnb"


def state_dir() -> Path:
    """$XDG_STATE_HOME/textnb, with the XDG default ~/.local/state when unset or relative: what
    textnb remembers between runs that is not a model (that it noted its build once)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "textnb"


def default_model_path() -> Path:
    """The text model: $TEXTNB_MODEL, else <data_dir>/textnb.model."""
    return Path(os.environ.get(MODEL_ENV) or data_dir() / "textnb.model")


def default_table_model_path() -> Path:
    """The table model: $TEXTNB_TABLE_MODEL, else <data_dir>/table.model."""
    return Path(os.environ.get(TABLE_MODEL_ENV) or data_dir() / "table.model")
