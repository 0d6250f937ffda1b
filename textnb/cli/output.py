"""How the commands print: classify's columns, train's and info's cutoffs and threshold lines,
--tune's table, evaluate's report."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..classifier import TextClassifier
from ..decision.cutoffs import extrapolated, ham_bounding
from ..decision.rules import scores, threshold_rule


def threshold_line(classifier: TextClassifier) -> str:
    """A two-class model's decision threshold, as train and info say it."""
    rule = threshold_rule(classifier.classes_, classifier.decision_threshold_)
    return f"threshold   {rule}, else {classifier.classes_[0]}"


def on_error_line(report: dict[str, Any]) -> str:
    """Training on error in train's summary, each number named: the documents the model holds
    (those any of the walks learned), and the first walk's, which add up: one of each class
    to start it, then what each of its passes learned."""
    passes = report["passes"]
    first = report["started"] + sum(passes)
    walks = report["walks"]
    held = (f"learned {report['learned']} of {report['documents']} documents (those any of "
            f"{walks} walks in different orders learned, each weighted by the share of walks "
            f"that did); " if walks > 1 else
            f"learned {report['learned']} of {report['documents']} documents: ")
    return (f"on error    {held}the first walk learned {first}: {report['started']} to start, "
            f"then {', '.join(map(str, passes))} in its {len(passes)} "
            f"pass{'' if len(passes) == 1 else 'es'}")


def tuning_table(tuned, top: int = 10) -> str:
    """--tune's cross-validation: the best settings first, mean ± sd over the folds, and what
    each cost: its share of the wall seconds of the cross-validation that scored it (the α
    values of one setting are scored together) and the MB of the arrays it held; a setting
    stopped early (far behind the best on its first folds) shows its mean over those folds."""
    seconds = sum(row.get("seconds", 0.0) for row in tuned.rows)
    lines = [f"{tuned.folds}-fold cross-validation of {len(tuned.rows)} settings "
             f"({tuned.metric}; best first; * chosen: the most smoothing within one standard "
             f"error of the best; {seconds:.1f} s of scoring in all):",
             *([f"  {tuned.note}"] if tuned.note else []),
             f"  {'model':<12} {'alpha':>6} {'ngrams':>6} {'stop words':<10} {'tf':<7} "
             f"{'norm':<5} {tuned.metric:>14} {'s':>6} {'MB':>6}"]
    for i, row in enumerate(tuned.rows[:max(top, tuned.chosen + 1)]):
        stopped = row.get("stopped")
        spread = "" if stopped else f"± {row['sd']:.4f}"
        lines.append(f"{'*' if i == tuned.chosen else ' '} {row['model']:<12} {row['alpha']:>6g} "
                     f"{row['ngram_range'][1]:>6} {row['stop_words']:<10.10} {row['tf']:<7} "
                     f"{str(row['norm'] or 'none'):<5} {row['mean']:>8.4f} {spread:<8} "
                     f"{row.get('seconds', 0.0):>6.2f} {row.get('megabytes', 0.0):>6.0f}"
                     + (f"  stopped after {stopped} fold{'s' * (stopped > 1)}" if stopped else ""))
    return "\n".join(lines)


def cutoffs_line(cutoffs: dict[str, Any]) -> str:
    """The learned cutoffs and what they gave on the held-out scores (each message's by a model
    of the rest, the folds' held-out messages scored as new ones, or as the folds scored them),
    in one line, and a note under it where too few ham were held out to read the spam cutoff
    off their scores."""
    how = f", {cutoffs['training']} training" if "training" in cutoffs else ""
    left = f", {cutoffs['suspects']} left out" if cutoffs.get("suspects") else ""
    # The spam class by name where it is not "spam" (a folder named Junk or .Junk, say).
    named = "" if cutoffs.get("spam_class", "spam") == "spam" else f" ({cutoffs['spam_class']})"
    whole = cutoffs.get("sampled_from", cutoffs["messages"])
    sample = f"a sample of {cutoffs['messages']} of " if whole > cutoffs["messages"] else ""
    # The rates' scores: each message's by a model of the others (full training), or the
    # folds' models' of their held-out messages taken as new ones (training on error).
    rated = {"left out": "; each message scored by a model of the rest",
             "as new": "; held-out messages scored as new ones"}.get(cutoffs.get("rated"), "")
    line = (f"cutoffs     spam{named} at spam-log-odds >= {cutoffs['spam']:+.3f}, "
            f"ham <= {cutoffs['ham']:+.3f} "
            f"({cutoffs['folds']}-fold CV of {sample}{whole} messages{how}{left}{rated}: "
            f"FPR {cutoffs['fpr']:.2%}, FNR {cutoffs['fnr']:.2%}, "
            f"unsure {cutoffs['unsure']:.2%}, spam not caught {cutoffs['spam_not_caught']:.2%})")
    ham = cutoffs.get("messages", 0) - cutoffs.get("spam_messages", 0)
    target = cutoffs.get("target_fpr", 0.0)
    if ham > 0 and extrapolated(ham, target):
        line += "\n" + young_note(cutoffs, ham, target)
    return line


def columns(mail: bool) -> tuple[str, str, str, str]:
    """classify's column names: source, verdict and the decisions' scores (a mail model's
    spam-probability and spam-log-odds, else the label's probability and log-odds)."""
    prefix = "spam-" if mail else ""
    return "source", "verdict", f"{prefix}probability", f"{prefix}log-odds"


def young_note(cutoffs: dict[str, Any], ham: int, target: float) -> str:
    """What a young model's user will see, in plain words: spam it is unsure of lands in the
    unsure pile, not the inbox, until they train on errors."""
    spam_unsure = cutoffs.get("spam_unsure", 0.0)
    most = "most" if spam_unsure > 0.5 else f"{spam_unsure:.0%} of"
    ham_unsure = cutoffs.get("ham_unsure", 0.0)
    return (f"note        with {ham} training ham, expect {most} spam to be unsure rather than "
            f"spam (and {ham_unsure:.0%} of ham) until you train on errors: `textnb learn` "
            f"the unsure mail into its class. {ham} ham are too few to read the spam cutoff "
            f"for {target:.2%} of new ham off their scores: it is extrapolated from their "
            f"highest scores (`textnb tune-cutoffs` reads it off {ham_bounding(target)} ham or "
            f"more)")



def column_widths(decisions: Iterable[dict[str, Any]], header: bool) -> tuple[int, int, int, int]:
    """The widest source, verdict, probability and log-odds of a batch (and of the header)."""
    widths = [0, 0, 0, 0]
    mail = False
    for d in decisions:
        _, probability, log_odds = scores(d)
        mail = "status" in d
        cells = (d["source"], str(d["verdict"]), f"{probability:.4f}", f"{log_odds:+.2f}")
        widths = [max(width, len(cell)) for width, cell in zip(widths, cells)]
    if header:
        # The header's log-odds name stands over the whole "log-odds +1.23" cell, not the number.
        widths[:3] = [max(w, len(name)) for w, name in zip(widths[:3], columns(mail))]
    source, verdict, probability, log_odds = widths
    return source, verdict, probability, log_odds


def header_line(output: str, widths: Sequence[int], mail: bool) -> str:
    """The first line of classify --header: the column names, aligned as the text lines."""
    names = columns(mail)
    if output == "tsv":
        return "\t".join(name.replace("-", "_") for name in names)
    source, verdict, probability, _ = widths
    return (f"{names[0]:<{source}}  {names[1]:<{verdict}}  {names[2]:>{probability}}  "
            f"{names[3]}")


def explanation_record(explanation) -> dict[str, Any]:
    return {"label": str(explanation.label), "against": str(explanation.against),
            "log_odds": explanation.log_odds, "prior_log_odds": explanation.prior_log_odds,
            "absent_words": explanation.baseline, "other_terms": explanation.rest,
            "unseen_words": explanation.unseen, "unseen_log_odds": explanation.unseen_log_odds,
            "terms": [{"term": c.term, "weight": c.weight, "log_odds": c.log_odds}
                      for c in explanation.terms]}


# evaluate's confusion matrix is headed by the class names while they fit in this many
# characters, by numbers beyond (20 Newsgroups' names take 447).
WIDE = 100


def decisions_table(r: dict[str, Any], spread, folds: int) -> list[str]:
    """evaluate's first lines for a mail model: the spam / unsure / ham decisions the cutoffs
    make (as ``textnb filter`` makes them), the share of each true class given each, then FPR
    (ham decided spam), FNR (spam decided ham), unsure and spam not caught (FNR + spam unsure)."""
    c, a = r["cutoffs"], r["at_cutoffs"]
    how = ("learned per fold, mean" if folds else "learned") if c["learned"] else "defaults"
    spam = r["positive_class"]
    ham = next(name for name in r["classes"] if name != spam)
    n_spam, n_ham = a["spam_messages"], a["messages"] - a["spam_messages"]
    shares = {spam: (1 - a["fnr"] - a["spam_unsure"], a["spam_unsure"], a["fnr"], n_spam),
              ham: (a["fpr"], a["ham_unsure"], 1 - a["fpr"] - a["ham_unsure"], n_ham)}
    width = max(len("true class"), len(spam), len(ham))
    return [f"decisions at the cutoffs ({how}: spam at spam-log-odds >= {c['spam']:+.3f}, "
            f"ham <= {c['ham']:+.3f})",
            f"{'true class':<{width}}  {'spam':>8}  {'unsure':>8}  {'ham':>8}  documents",
            *(f"{name:<{width}}  {s:>8.2%}  {u:>8.2%}  {h:>8.2%}  {n:>9d}"
              for name, (s, u, h, n) in shares.items()),
            f"false positive rate  {spread('fpr_at_cutoffs', a['fpr'], '.4%')} (ham decided spam)",
            f"false negative rate  {spread('fnr_at_cutoffs', a['fnr'], '.4%')} (spam decided ham)",
            f"unsure               {spread('unsure_at_cutoffs', a['unsure'], '.4%')} "
            f"(spam {a['spam_unsure']:.2%}, ham {a['ham_unsure']:.2%})",
            f"spam not caught      {a['spam_not_caught']:.4%} (spam decided ham or unsure)"]


def report_text(r: dict[str, Any]) -> str:
    """evaluate's report: aligned tables, ± the standard deviation over folds with --cv; for a
    mail model the decisions at its cutoffs first, the most probable class's after."""
    from ..evaluation.metrics import mean_sd
    folds = r.get("folds", {})

    def spread(key: str, value: float, style: str = ".4f") -> str:
        if key not in folds or any(v is None for v in folds[key]):
            return f"{value:{style}}"
        _, sd = mean_sd(folds[key])
        return f"{value:{style}} ± {sd:{style}}"

    k = len(folds.get("accuracy", ()))
    width = max(len("weighted avg"), *(len(c) for c in r["classes"]))
    lines = [f"documents  {r['documents']}" + (f" ({k}-fold cross-validation; ± is the standard "
                                                f"deviation over folds)" if k else "")]
    if "at_cutoffs" in r:  # a mail model: first the decisions the filter makes
        lines += ["", *decisions_table(r, spread, k), "", "most probable class (no unsure band)"]
    lines += [f"accuracy   {spread('accuracy', r['accuracy'])}", "",
              f"{'class':<{width}}  precision  recall      f1  support"]
    rows = list(zip(r["classes"], r["precision"], r["recall"], r["f1"], r["support"]))
    rows += [(f"{kind} avg", r[kind]["precision"], r[kind]["recall"], r[kind]["f1"],
              r["documents"]) for kind in ("macro", "weighted")]
    for i, (name, p, rc, f, n) in enumerate(rows):
        if i == len(r["classes"]):
            lines.append("")
        lines.append(f"{name:<{width}}  {p:9.4f}  {rc:6.4f}  {f:6.4f}  {n:7d}")
    if k:
        lines.append(f"{'macro F1 over folds':<{width}}  {spread('macro_f1', r['macro']['f1'])}")
    cells = [[str(n) for n in row] for row in r["confusion"]]
    heads = list(r["classes"])
    title = "confusion (rows: true, columns: predicted)"
    if sum(len(c) + 1 for c in heads) > WIDE:  # the names would not fit: number the columns
        heads = [str(i) for i in range(1, len(heads) + 1)]
        title = "confusion (rows: true, columns: predicted, numbered as the rows)"
    rows = [f"{i:>{len(heads[-1])}} {c:<{width}}" if heads[0] == "1" else f"{c:<{width}}"
            for i, c in enumerate(r["classes"], 1)]
    widths = [max(len(h), *(len(row[j]) for row in cells)) for j, h in enumerate(heads)]
    lines += ["", title,
              " " * (len(rows[0]) + 2) + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths))]
    for label, row in zip(rows, cells):
        lines.append(f"{label}  " + " ".join(f"{n:>{w}}" for n, w in zip(row, widths)))
    if "positive_class" in r:
        auc = "n/a" if r["roc_auc"] is None else spread("roc_auc", r["roc_auc"], ".6f")
        lines += ["", f"positive class       {r['positive_class']} (rates at the most probable "
                      f"class)",
                  f"false positive rate  {spread('false_positive_rate', r['false_positive_rate'], '.4%')}",
                  f"false negative rate  {spread('false_negative_rate', r['false_negative_rate'], '.4%')}",
                  f"ROC AUC              {auc}"]
    if "sweep" in r:
        held = r.get("cutoffs") or {}
        for name, other in (("spam", "ham"), ("ham", "spam")):
            fixed = (f"{held[other]:+.3f}" if other in held else "the default")
            lines += ["", f"{name} cutoff sweep ({other} cutoff held at {fixed}, moved "
                          f"to the {name} cutoff past it)",
                      f"{'log-odds':>10}  {'FPR':>8}  {'FNR':>8}  {'unsure':>8}  {'not caught':>10}"]
            lines += [f"{row['cutoff']:>+10.3f}  {row['fpr']:>8.3%}  {row['fnr']:>8.3%}  "
                      f"{row['unsure']:>8.3%}  {row['spam_not_caught']:>10.3%}"
                      for row in r["sweep"][f"{name}_cutoff"]]
    if "plots" in r:
        directory = os.path.dirname(r["plots"][0])
        names = sorted({Path(p).stem for p in r["plots"]})
        lines += ["", f"plots      {', '.join(names)} (PNG and SVG) -> {directory}"]
    return "\n".join(lines)
