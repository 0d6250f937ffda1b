"""Tables and figures as the studies print them."""

from __future__ import annotations


def table(header: list[str], rows: list[list], indent: str = "") -> str:
    """Columns as wide as their widest cell, the first left-aligned, the others right-aligned,
    under a rule of dashes."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]

    def line(row) -> str:
        return indent + "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                                  for i, (c, w) in enumerate(zip(row, widths)))
    return "\n".join([line(header), indent + "  ".join("-" * w for w in widths)]
                     + [line(r) for r in rows])


def pct(x: float, digits: int = 2) -> str:
    """A share as a percentage: pct(0.0123) == '1.23 %'."""
    return f"{100 * x:.{digits}f} %"


def ratio(value: float, reference: float | None, digits: int = 2) -> str:
    """value / reference as '1.23x' ('-' without a reference, 'n/a' where it is 0)."""
    if reference is None:
        return "-"
    return f"{value / reference:.{digits}f}x" if reference else "n/a"
