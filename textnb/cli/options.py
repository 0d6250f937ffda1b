"""click parameter types the command-line modules share."""

from __future__ import annotations

import math
from typing import Any

import click


class FloatRange(click.FloatRange):
    """click's FloatRange with NaN refused: NaN fails every comparison, so click's bounds let
    it through, and a cutoff of nan called every message unsure, a timeout of nan set none."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number", param, ctx)
        return number
