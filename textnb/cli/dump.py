"""``textnb dump|load|merge|explain``: a model as text and back, models added, one decision explained.

Commands of the ``textnb`` group (registered in cli.py, whose error handling turns a bad dump,
a bad model file or a bad argument into one ``Error: …`` line). The work is done by
:mod:`textnb.store.dump` and :meth:`TextClassifier.explain`; this module only reads arguments and
prints.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any

import click

from ..classifier import TextClassifier
from ..decision.rules import decide, names, scores, spam_cutoffs, threshold_rule
from ..documents.sources import read_raw
from ..nb.explain import Explanation
from ..store.container import locked
from ..store.dump import load_dump, merge_models, read_dump, write_dump
from ..store.text_model import load_model, save_model
from .options import model_option, resolve_model

# The widest term column of ``explain``'s table; longer terms are cut with an ellipsis.
_TERM_WIDTH = 40


def _summary(classifier: TextClassifier) -> str:
    model = classifier.model_
    counts = ", ".join(f"{c}: {n:g}" for c, n in zip(model.classes_, model.class_count_))
    return f"{len(classifier.vocabulary_)} terms, {len(model.classes_)} classes ({counts})"


@click.command()
@model_option()
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              show_default=True, help="Where to write the dump ('-': standard output).")
def dump(model_path, output) -> int:
    """Write a model as text: its settings, then one line per term with its count per
    class, then the digests of the learned documents (as bogoutil -d).

    textnb load reads it back into exactly the same model.
    """
    classifier = load_model(resolve_model(model_path))
    if output == "-":
        write_dump(classifier, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    else:
        with open(output, "wb") as out:
            write_dump(classifier, out)
    return 0


@click.command("load")
@click.argument("dump_file", type=click.Path(dir_okay=False, allow_dash=True))
@model_option("Model file to write (default: as for the other commands).")
@click.option("--add", is_flag=True,
              help="Add the dump's counts to the existing model instead of replacing it.")
def load(dump_file, model_path, add) -> int:
    """Rebuild a model from a dump written by textnb dump (as bogoutil -l).

    The model file is replaced, or with --add the dump's counts, classes and terms are added
    to it (both must have the same settings).
    """
    path = resolve_model(model_path)
    if dump_file == "-":
        loaded = read_dump(sys.stdin.buffer, "<stdin>")
    else:
        loaded = load_dump(dump_file)
    with locked(path):
        classifier = load_model(path).merge(loaded) if add else loaded
        save_model(classifier, path)
    click.echo(f"{'added' if add else 'loaded'} {dump_file}: {_summary(classifier)} -> {path}")
    return 0


@click.command()
@click.argument("models", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False))
@model_option("Model file to write the sum to (default: as for the other commands).")
def merge(models, model_path) -> int:
    """Add the counts of two or more models trained with the same settings:
    textnb merge A B -m C. The result equals training on all their documents."""
    if len(models) < 2:
        raise click.UsageError("give two or more models to merge, e.g. textnb merge A B -m C")
    merged = merge_models(models)
    path = resolve_model(model_path)
    with locked(path):
        save_model(merged, path)
    click.echo(f"merged {len(models)} models: {_summary(merged)} -> {path}")
    return 0


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@model_option()
@click.option("--top", type=click.IntRange(min=0), default=20, show_default=True,
              help="Terms shown, most decisive first (0: every term).")
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="An aligned table, or one JSON object per document.")
def explain(paths, model_path, top, output) -> int:
    """Why a document got its label: the decision, the prior, and each term's
    contribution to the log-odds against the runner-up, most decisive first.

    The contributions add up to the log-odds: prior + (absent words) + terms.
    """
    classifier = load_model(resolve_model(model_path))
    documents = list(read_raw(paths or ("-",)))
    classes = [c.item() if hasattr(c, "item") else c for c in classifier.classes_]
    if len(classes) < 2:
        raise click.UsageError("a model with one class has no decision to explain")
    # Decided as `textnb classify` decides: by the model's cutoffs, else its threshold.
    cutoffs = spam_cutoffs(classes, classifier.cutoffs_, learned_errors=classifier.learned_errors_)
    threshold = classifier.__dict__.get("decision_threshold_")
    log_proba = classifier.predict_log_proba([raw for _, raw in documents])
    for i, ((source, raw), row) in enumerate(zip(documents, log_proba)):
        decision = decide(classes, row.tolist(), source, cutoffs, threshold)
        # A mail decision is explained as spam over ham, whatever its verdict: the terms then
        # add up to its spam log-odds, the number the cutoffs decide on.
        why = classifier.explain(raw, top=top or len(classifier.vocabulary_),
                                 label=cutoffs[0] if cutoffs else decision["label"])
        if output == "json":
            decision.pop("probabilities")
            click.echo(json.dumps({**decision, "explanation": asdict(why)}, ensure_ascii=False,
                                  default=str))
        else:
            rule = (_cutoffs_rule(cutoffs) if cutoffs else
                    None if threshold is None or len(classes) != 2 else
                    threshold_rule(classes, threshold))
            click.echo(("\n" if i else "") + explanation_table(source, decision, why, rule))
    return 0


def _cutoffs_rule(cutoffs: tuple[str, float, float]) -> str:
    spam, high, low = cutoffs
    return f"cutoffs: {spam} at spam-log-odds >= {high:+.3f}, ham <= {low:+.3f}"


def explanation_table(source: str, decision: dict[str, Any], why: Explanation,
                      rule: str | None = None) -> str:
    """The decision on one line, its verdict and scores named as classify names them (and the
    ``rule`` that made it: cutoffs or a threshold), then prior, absent words and terms in
    aligned columns with the running total; the last row is the log-odds explained (a mail
    decision's spam log-odds)."""
    rows: list[tuple[str, str, float]] = [(f"prior ({why.label} vs {why.against})", "",
                                           why.prior_log_odds)]
    if why.baseline:
        rows.append(("(absent words)", "", why.baseline))
    if why.unseen:
        rows.append((f"({why.unseen} unseen words)", "", why.unseen_log_odds))
    rows += [(_cut(c.term), _weight(c.weight), c.log_odds) for c in why.terms]
    if why.rest:
        rows.append(("(other terms)", "", why.rest))
    width = max(len("term"), *(len(name) for name, _, _ in rows))
    weight_width = max(len("weight"), *(len(weight) for _, weight, _ in rows))
    _, probability, log_odds = scores(decision)
    p_name, odds_name = names(decision)
    over = "" if "status" in decision else f" over {why.against}"
    lines = [f"{source}: {decision['verdict']}  {p_name} {probability:.4f}  "
             f"{odds_name} {log_odds:+.3f}{over}" + (f"  ({rule})" if rule else ""), "",
             f"{'term':<{width}}  {'weight':>{weight_width}}  {'log-odds':>9}  {'running':>9}"]
    total = 0.0
    for name, weight, value in rows:
        total += value
        lines.append(f"{name:<{width}}  {weight:>{weight_width}}  {value:+9.3f}  {total:+9.3f}")
    lines.append(f"{'total':<{width}}  {'':>{weight_width}}  {why.log_odds:+9.3f}")
    return "\n".join(lines)


def _cut(term: str) -> str:
    """A term for one table cell: control characters shown escaped, long ones cut."""
    term = term.encode("unicode_escape").decode("ascii") if not term.isprintable() else term
    return term if len(term) <= _TERM_WIDTH else term[:_TERM_WIDTH - 1] + "…"


def _weight(value: float) -> str:
    """A whole count as such; a weighted one (tf/norm settings) with 4 significant digits."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.4g}"
