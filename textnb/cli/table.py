"""``textnb table train|classify|sample``: TableNB from the command line, CSV in and CSV out.

Errors in the data, the model file or the arguments' values print one line ``Error: …`` on
stderr and exit 1 (click's usage errors exit 2); rows are numbered from 1 after the header.
"""

from __future__ import annotations

import contextlib
import csv
import sys
from typing import Any, IO, Iterator, Sequence

import click
import numpy as np

from ..errors import TextnbError
from ..paths import default_table_model_path
from ..tables.columns import KINDS, parse_kind
from ..tables.model import TableNB, fit_em
from ..tables.reading import TableError, parse_weights, read_csv
from .options import model_option, parse_priors, resolve_model

_MODEL_HELP = "Model file [default: $TEXTNB_TABLE_MODEL, else ~/.local/share/textnb/table.model]."


@contextlib.contextmanager
def _reporting(source: str | None = None) -> Iterator[None]:
    """Turn a user-fixable error into click's one-line ``Error: …`` and exit status 1."""
    try:
        yield
    except TableError as error:
        raise click.ClickException(_line(f"{source}: {error}" if source else error)) from None
    except OSError as error:
        message = f"{error.filename}: {error.strerror}" if error.filename else error
        raise click.ClickException(_line(message)) from None
    except (TextnbError, ValueError) as error:
        raise click.ClickException(_line(error)) from None


def _line(message: Any) -> str:
    return " ".join(str(message).split())


def _name(file: IO) -> str:
    """The name to put before a data error: the path, or <stdin>."""
    return getattr(file, "name", "<stdin>")


def _write_csv(output: str | None, header: Sequence[str], rows: Iterator[Sequence[Any]]) -> None:
    """Write a CSV to ``output`` (a path) or stdout; cells that are floats get 6 digits."""
    def cells(row: Sequence[Any]) -> list[str]:
        return [f"{v:.6g}" if isinstance(v, float) else str(v) for v in row]

    with (open(output, "w", newline="", encoding="utf-8") if output and output != "-"
          else contextlib.nullcontext(sys.stdout)) as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(cells(row) for row in rows)


def _kinds(specs: Sequence[str]) -> dict[str, str]:
    """``NAME=KIND`` options → {name: kind}; BadParameter (exit 2) if malformed."""
    kinds = {}
    for spec in specs:
        name, sep, kind = spec.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{spec!r} is not NAME=KIND", param_hint="'--column'")
        try:
            parse_kind(kind)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="'--column'") from None
        kinds[name.strip()] = kind.strip()
    return kinds


@click.group("table", invoke_without_command=True)
@click.pass_context
def table(ctx: click.Context) -> None:
    """Naive Bayes for tables: train on a CSV, classify rows, sample new ones."""
    if ctx.invoked_subcommand is None:  # a bare `textnb table`: the help, exit 0
        click.echo(ctx.get_help())


@table.command()
@click.argument("data", type=click.File("rb"))
@click.option("-t", "--target", required=True, metavar="COLUMN", help="The class column.")
@model_option(_MODEL_HELP, metavar=None)
@click.option("-c", "--column", "columns", multiple=True, metavar="NAME=KIND",
              help=f"A column's kind, one of {', '.join(KINDS)}; binning takes :BINS "
                   "(age=equal-width:4). Default: gaussian if numeric, else categorical.")
@click.option("-w", "--weight", metavar="COLUMN", help="A column of row counts (weights).")
@click.option("-k", "--alpha", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Smoothing k for categorical and binned columns; 0 for none.")
@click.option("--ddof", type=click.IntRange(min=0), default=1, show_default=True,
              help="Gaussian variance divides by n − ddof (1: sample variance, 0: MLE).")
@click.option("--var-floor", type=click.FloatRange(min=0, min_open=True), default=1e-9,
              show_default=True, help="Variance floor, relative to the column's variance.")
@click.option("--bins", type=click.IntRange(min=1), default=5, show_default=True,
              help="Bins for binned columns that do not name their own.")
@click.option("--unseen", type=click.Choice(["skip", "error"]), default="skip",
              show_default=True, help="A category never seen in training: skip it or fail.")
@click.option("--prior", "priors", multiple=True, metavar="learned|uniform|CLASS=P[,...]",
              help="Class priors: learned from the rows (default), uniform, or given per "
                   "class (a=0.3,b=0.7 or --prior a=0.3 --prior b=0.7; they sum to 1).")
def train(data: IO[bytes], target: str, model_path: str | None, columns: Sequence[str],
          weight: str | None, alpha: float, ddof: int, var_floor: float, bins: int,
          unseen: str, priors: Sequence[str]) -> None:
    """Learn a table model from DATA (a CSV with a header; - for stdin)."""
    kinds = _kinds(columns)
    mode = priors[0] if len(priors) == 1 and priors[0] in ("learned", "uniform") else None
    model = TableNB(kinds=kinds, alpha=alpha, ddof=ddof, var_floor=var_floor, bins=bins,
                    unseen=unseen, fit_prior=mode != "uniform")
    path = resolve_model(model_path, default_table_model_path)
    with _reporting(_name(data)):
        t = read_csv(data)
        t.index([target, *([weight] if weight else []), *kinds])  # every named column exists
        if target in kinds or target == weight:
            raise TableError(f"the target {target!r} cannot also be a feature or the weight")
        features = [c for c in t.columns if c not in (target, weight)]
        w = parse_weights(t.column(weight), weight) if weight else None
        # Rows whose class is missing (empty or ?) are filled in by EM, which reports L.
        fit_em(model, t.select(features), t.column(target), sample_weight=w, columns=features,
               target=target, callback=lambda i, value: click.echo(
                   f"EM iteration {i}: log-likelihood {value:.10g}", err=True))
    given = parse_priors(priors, model.classes_) if priors and mode is None else None
    with _reporting():
        if given:
            model.set_params(class_prior=given)
        model.save(path)
    described = ", ".join(f"{c} {k}" for c, k in zip(model.columns_, model.kinds_))
    click.echo(f"Saved table model to {path}: {len(t.rows)} rows, classes "
               f"{', '.join(map(str, model.classes_))}; columns {described}.")


@table.command()
@click.argument("rows", type=click.File("rb"))
@model_option(_MODEL_HELP, metavar=None)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="CSV out [default: stdout].")
@click.option("--explain", is_flag=True,
              help="Add each column's log p(value|class), one CSV column per column and class.")
def classify(rows: IO[bytes], model_path: str | None, output: str | None, explain: bool) -> None:
    """Classify ROWS (a CSV with the model's columns; - for stdin).

    Writes the rows with a column "predicted" and one column P(class) per class.
    """
    with _reporting():
        model = TableNB.load(resolve_model(model_path, default_table_model_path))
    with _reporting(_name(rows)):
        t = read_csv(rows)
        X = t.select(model.columns_)
        proba = model.predict_proba(X)
        extra = model.contributions(X).reshape(len(X), -1) if explain else np.zeros((len(X), 0))
    header = [*t.columns, "predicted", *(f"P({c})" for c in model.classes_),
              *(f"log p({col}|{c})" for col in model.columns_ for c in model.classes_
                if explain)]
    predicted = model.classes_[np.argmax(proba, axis=1)]
    with _reporting():
        _write_csv(output, header, ([*row, label, *p.tolist(), *e.tolist()]
                                    for row, label, p, e in zip(t.rows, predicted, proba, extra)))


@table.command()
@model_option(_MODEL_HELP, metavar=None)
@click.option("-n", "count", type=click.IntRange(min=0), default=10, show_default=True,
              help="Number of rows to draw.")
@click.option("--seed", type=int, help="Random seed, for the same rows every time.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="CSV out [default: stdout].")
def sample(model_path: str | None, count: int, seed: int | None, output: str | None) -> None:
    """Draw new rows from the model: a class from P(c), then each column from P(x|c)."""
    with _reporting():
        model = TableNB.load(resolve_model(model_path, default_table_model_path))
        X, y = model.sample(count, seed=seed)
        _write_csv(output, [*model.columns_, model.target_ or "class"],
                   ([*row, label] for row, label in zip(X, y.tolist())))
