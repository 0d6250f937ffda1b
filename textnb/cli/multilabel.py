"""Multi-label models on the command line: what ``train --labels``, ``classify``, ``evaluate``
and ``info`` do with a :class:`~textnb.multilabel.MultiLabelClassifier`.

A command module of the CLI: cli.py parses the options and calls these when the model (or the
training data) is multi-label; they print, the library computes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import click
import numpy as np

from ..documents.sources import read_raw
from ..errors import DocumentError
from ..multilabel import (MultiLabelClassifier, decide, label_matrix, merge_duplicates,
                          read_label_file)
from ..store.multilabel_model import load_model, save_model


def read_documents(label_file: str | None, sources: Sequence[tuple[str, str]],
                   on_error: Callable[[str, str], None]) -> tuple[list[bytes], list[list[str]]]:
    """Documents' bytes and label sets: each document a label file names, with its labels,
    and each document under a (class, path) source, labelled by its class. Identical
    documents under several classes (a post found in several class directories) become one
    with all their labels; those a label file names stay apart, as it labels each: Reuters-
    21578 holds the same story twice with different topics (and 47 stories with no text),
    and their union made 133 training stories of more topics than either copy."""
    texts, label_sets = _read(read_label_file(label_file) if label_file is not None else [],
                              on_error)
    more = _read([(path, [label]) for label, path in sources], on_error)
    merged = merge_duplicates(*more)
    texts += merged[0]
    label_sets += merged[1]
    if not texts:
        raise DocumentError("no readable documents to train or evaluate on")
    return texts, label_sets


def _read(entries: list[tuple[str, list[str]]], on_error: Callable[[str, str], None]
          ) -> tuple[list[bytes], list[list[str]]]:
    """The bytes of each readable document of (path, labels) entries, and their labels."""
    texts, label_sets = [], []
    for path, labels in entries:
        for _, raw in read_raw([path], on_error=on_error):
            texts.append(raw)
            label_sets.append(labels)
    return texts, label_sets


def settings(given: dict[str, Any], prior: Any) -> dict[str, Any]:
    """MultiLabelClassifier settings from the training options given (cli's settings); options
    a one-vs-rest multinomial model cannot honour are refused."""
    if given.get("model", "multinomial") != "multinomial":
        raise click.UsageError("a multi-label model is one-vs-rest multinomial NB: "
                               "--event-model must be multinomial")
    if prior:
        raise click.UsageError("--prior does not apply to a multi-label model: each label's "
                               "prior is learned, and its threshold chosen by cross-validation")
    return {name: value for name, value in given.items() if name != "model"}


def train(texts: list[bytes], label_sets: list[list[str]], path: Path,
          settings: dict[str, Any], quiet: bool) -> None:
    """Fit and save a multi-label model; unless quiet, say what was learned."""
    classifier = MultiLabelClassifier(**settings).fit(texts, label_sets)
    save_model(classifier, path)
    if quiet:
        return
    several = sum(len(labels) > 1 for labels in label_sets)
    cv = classifier.cv_
    f1 = np.array(cv["f1"])
    click.echo(f"trained {len(texts)} documents ({several} with several labels), "
               f"{len(classifier.labels_)} labels, {len(classifier.vocabulary_)} terms -> {path}")
    click.echo(f"thresholds  per label by {min(classifier.folds, len(texts))}-fold CV: "
               f"out-of-fold F1 mean {f1.mean():.4f}, lowest {f1.min():.4f} "
               f"({classifier.labels_[int(np.argmin(f1))]})")
    click.echo(f"scoring     {_choice(classifier)}")
    fell = [str(label) for label, reason in zip(classifier.labels_, cv["fallback"]) if reason]
    if fell:
        click.echo(f"fallback    {len(fell)} labels of too few documents or a low CV F1 "
                   f"keep a threshold of at least 0 (P >= 0.5): {_some(fell)}")


def _choice(classifier: MultiLabelClassifier) -> str:
    """The scoring and α used (with "per-label", how many labels each scores), and the CV
    micro-F1 of each scoring tried (a file of before the choice has none)."""
    tried = (classifier.cv_ or {}).get("choice") or []
    figures = ", ".join(f"{t['scoring']} {t['micro_f1']:.4f}" for t in tried)
    rest = int(classifier.one_vs_rest_.sum())
    counts = {"posterior": classifier.one_vs_rest_.size - rest, "one-vs-rest": rest}
    used = ", ".join(f"{scoring}, alpha {alpha:g}"
                     + (f" ({counts[scoring]} labels)" if len(classifier.alphas_) > 1 else "")
                     for scoring, alpha in classifier.alphas_.items())
    return (f"{'each label the better by CV F1: ' if len(classifier.alphas_) > 1 else ''}"
            f"{used}" + (f" (CV micro-F1: {figures})" if figures else ""))


def _some(names: list[str], shown: int = 5) -> str:
    """The first ``shown`` names, and how many more."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + e^−z) without overflow: exp(−log(1 + e^−z))."""
    return np.exp(-np.logaddexp(0.0, -z))


def classify(path: Path, documents: list[bytes], sources: list[str], output: str,
             header: bool) -> None:
    """Print each document's labels (all at or above their thresholds, at least the best) and
    their log-odds: aligned text, TSV or JSON lines (every label's score in JSON)."""
    classifier = load_model(path)
    if not documents:
        return
    scores = classifier.decision_function(documents)
    chosen = decide(scores, classifier.thresholds_)
    labels, thresholds = classifier.labels_, classifier.thresholds_
    rows = []
    for source, row, take in zip(sources, scores, chosen):
        order = np.argsort(-(row - thresholds), kind="stable")
        ranked = [{"label": str(labels[j]), "log_odds": float(row[j]),
                   "probability": float(_sigmoid(row[j])), "threshold": float(thresholds[j])}
                  for j in order.tolist()]
        taken = set(labels[take].tolist())
        rows.append({"source": source, "labels": [r for r in ranked if r["label"] in taken],
                     "scores": {r["label"]: r["log_odds"] for r in ranked}})
    if output == "json":
        for r in rows:
            click.echo(json.dumps(r, ensure_ascii=False))
        return
    cells = [(r["source"], ",".join(x["label"] for x in r["labels"]),
              ",".join(f"{x['log_odds']:+.2f}" for x in r["labels"])) for r in rows]
    if output == "tsv":
        if header:
            click.echo("source\tlabels\tlog_odds")
        for cell in cells:
            click.echo("\t".join(cell))
        return
    heads = ("source", "labels", "log-odds") if header else ("", "", "")
    widths = [max(len(heads[i]), *(len(c[i]) for c in cells)) for i in range(2)]
    for cell in ([heads] if header else []) + cells:
        click.echo(f"{cell[0]:<{widths[0]}}  {cell[1]:<{widths[1]}}  {cell[2]}".rstrip())


def evaluate(path: Path, texts: list[bytes], label_sets: list[list[str]], output: str) -> None:
    """Micro- and macro-averaged precision, recall and F1, Hamming loss and subset accuracy of
    a multi-label model on labelled documents, and each label's figures."""
    from ..evaluation.metrics import multilabel_summary
    classifier = load_model(path)
    labels = classifier.labels_
    names, Y = label_matrix(label_sets)
    unknown = sorted(set(names.tolist()) - set(labels.tolist()))
    if unknown:
        raise DocumentError(f"label {unknown[0]!r} is not in the model "
                            f"(labels: {', '.join(labels)})")
    truth = np.zeros((len(texts), labels.size), dtype=bool)
    truth[:, np.searchsorted(labels, names)] = Y
    result = multilabel_summary(truth, classifier.predict_indicator(texts), labels)
    if output == "json":
        click.echo(json.dumps(result))
        return
    click.echo(report_text(result))


def report_text(r: dict[str, Any]) -> str:
    """evaluate's multi-label report: averages, then one line per label."""
    width = max(len("label"), *(len(name) for name in r["labels"]))
    lines = [f"documents        {r['documents']} (labels per document: "
             f"{r['label_cardinality']:.3f} true, {r['predicted_cardinality']:.3f} predicted)",
             f"micro F1         {r['micro']['f1']:.4f}  (precision {r['micro']['precision']:.4f}, "
             f"recall {r['micro']['recall']:.4f})",
             f"macro F1         {r['macro']['f1']:.4f}  (precision {r['macro']['precision']:.4f}, "
             f"recall {r['macro']['recall']:.4f})",
             f"Hamming loss     {r['hamming_loss']:.4f}",
             f"subset accuracy  {r['subset_accuracy']:.4f}", "",
             f"{'label':<{width}}  precision  recall      f1  support  predicted"]
    lines += [f"{name:<{width}}  {p:9.4f}  {rc:6.4f}  {f:6.4f}  {n:7d}  {m:9d}"
              for name, p, rc, f, n, m in zip(r["labels"], r["precision"], r["recall"], r["f1"],
                                              r["support"], r["predicted"])]
    return "\n".join(lines)


def info(path: Path, output: str) -> None:
    """Labels with their document counts and thresholds, terms, settings, CV figures."""
    classifier = load_model(path)
    cv = classifier.cv_ or {}
    data = {"model": str(path), "kind": "multi-label",
            "documents": int(round(classifier.n_documents_)),
            "labels": {str(label): {"documents": int(round(n)), "threshold": float(t),
                                    "scoring": "one-vs-rest" if rest else "posterior",
                                    **({"cv_f1": cv["f1"][i]} if "f1" in cv else {}),
                                    **({"fallback": cv["fallback"][i]}
                                       if "fallback" in cv else {})}
                       for i, (label, n, t, rest) in enumerate(zip(
                           classifier.labels_, classifier.label_count_, classifier.thresholds_,
                           classifier.one_vs_rest_.tolist()))},
            "terms": len(classifier.vocabulary_), "parameters": classifier.get_params()}
    if output == "json":
        click.echo(json.dumps(data, ensure_ascii=False, default=str))
        return
    width = max(len(name) for name in data["labels"])
    lines = [f"model       {data['model']} (multi-label, {classifier.scoring_})",
             f"documents   {data['documents']}",
             f"terms       {data['terms']}",
             f"scoring     {_choice(classifier)}",
             "parameters  " + ", ".join(f"{k}={v}" for k, v in data["parameters"].items()
                                        if k != "stop_words" or isinstance(v, str)),
             "", f"{'label':<{width}}  documents  scoring      threshold  CV F1   fallback"]
    lines += [f"{name:<{width}}  {d['documents']:9d}  {d['scoring']:<11}  {d['threshold']:+9.3f}  "
              f"{d.get('cv_f1', float('nan')):.4f}  {d.get('fallback', '')}".rstrip()
              for name, d in data["labels"].items()]
    click.echo("\n".join(lines))
