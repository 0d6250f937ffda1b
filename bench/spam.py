"""The project's spam bar: textnb against bogofilter and scikit-learn on the SpamAssassin corpus.

What it measures
----------------
The whole SpamAssassin public corpus (spam/ 500 + spam_2/ 1396 = 1896 spam; easy_ham/ 2500 +
easy_ham_2/ 1400 + hard_ham/ 250 = 4150 ham) is split once, stratified, 70 % train / 30 % test,
with ``numpy.random.default_rng(SEED)`` (``--seed``, default 0: the split bench.tune tunes
on, files listed per directory in sorted order). Every system trains on the same 70 % and
scores the same 30 %:

* **textnb command**: what a user types, at its defaults: ``textnb train -m MODEL spam/ ham/``
  on the training part (laid out as two directories of links to the files) and ``textnb
  classify -m MODEL --format json`` of the test part, each a fresh process; ranked by the spam
  log-odds it prints, decided by its verdict (the cutoffs ``textnb train`` learned). Its train
  and classify times include the processes' start-up and imports (``--no-command`` skips it).
* **textnb** through the Python API with its defaults, as ``textnb train`` runs them:
  ``TextClassifier(spam_class="spam")`` (training "auto": full or on error, whichever
  cross-validates better) fitted on the :class:`textnb.documents.message.Document` objects that
  ``read_documents`` gives for the files; ranked by the spam log-odds ln P(spam|x) − ln P(ham|x)
  (it does not saturate as the probability does); decided by the cutoffs it learned by
  cross-validation on the training part. Beside it, by default, ``training=full`` and
  ``orders=1`` (training on error in one walk; the default, textnb.nb.on_error.ORDERS, averages
  four); ``--candidate`` replaces those rows and ``--settings key=value`` (repeatable) adds one
  (values are Python literals: ``alpha=0.1``, ``ngram_range=(1,2)``, ``norm=None``; anything
  else is a string).
* **bogofilter** (when on PATH): a fresh database directory (``-d``, ``-C``: no config files),
  spam registered with ``-s -B files...``, ham with ``-n -B files...``, test messages
  classified in bulk with ``-v -B files...`` (spamicity printed to 16 digits); ranked by the
  spamicity, default decision its Spam/Ham/Unsure (spam_cutoff 0.99, ham_cutoff 0.45).
* **scikit-learn** (when installed): ``CountVectorizer()`` + ``MultinomialNB(alpha=1)`` on the
  raw bytes decoded as latin-1; ranked by the difference of ``predict_log_proba``; default
  decision ``predict`` (argmax, i.e. 0.5). With ``--sklearn-linear`` also TF-IDF +
  ``LogisticRegression`` (C of 1–1000 by 5-fold CV of the training part, ROC AUC) and TF-IDF
  of words and word pairs + ``LinearSVC``, ranked by ``decision_function``, deciding at 0.

Reported per system: 1 − ROC AUC in % (lower is better; Mann–Whitney with ties counting
one half), FPR (ham called spam) and FNR (spam called ham) at the default decision, the share
of all messages and of spam left unsure, the spam not caught (in the inbox or unsure), the
least spam any cutoff with FPR ≤ ``--max-fpr`` could leave uncaught, chosen on the test scores
themselves (what the ranking allows: the gap to the row's own figure is the cutoff choice), and
train / classify wall time with messages per second. Train time counts what each system must
do from the files on disk: textnb reads and parses them (``read_documents``) and fits;
scikit-learn decodes the bytes (already in memory, read before any timing so every system finds
the files in the page cache) and fits; bogofilter is two processes reading the files; the
command is one process. Classify time likewise. Ratios are against bogofilter.

``--swap SHARE`` swaps each training label with that probability (the same draw for every
system; the test labels stay true): a user's folders hold some mis-sorted mail, and a cutoff
learned from the training messages must not follow it.

``--copies SHARE`` learns each training message twice with that probability (the same draw for
every system): a user's folders hold copies (a message filed twice, a list's copy of one's own),
and the cross-validation that chooses the cutoffs must not score a message by a model that
learned its copy.

``--sample SPAM:HAM`` trains every system on that many spam and ham drawn by the seed and
tests on all the other messages: a user's first, small folders, where too few ham are held
out to read a spam cutoff for an FPR of 0.1 % off their scores (textnb then extrapolates it,
textnb.decision.cutoffs.extrapolated).

Then the test messages textnb misclassified with the most confidence.

``--cv`` does not touch the 30 % test part: it runs K-fold (``--folds``, default 5) stratified
cross-validation of textnb (``TextClassifier(spam_class="spam")``, as ``textnb train`` makes
it, each fold's model learning its own cutoffs inside its training part) on the 70 % training
part only and prints, from the out-of-fold scores, FPR / FNR / unsure / spam not caught at each
fold model's learned cutoffs and at fixed spam and ham cutoffs, plus the lowest spam cutoff with
an FPR ≤ ``--max-fpr`` (default 0.1 %) and the FNR / unsure shares of several ham cutoffs with
it. bogofilter, when installed, and the command at its defaults (``textnb train`` and
``textnb classify`` a fold) are cross-validated on the same folds.

``--scales`` (textnb alone, each split of ``--seeds``) shows whether the held-out scores the
cutoffs are chosen on lie where the trained model puts new mail: per scoring (the folds' models
of their held-out messages, the same taken as new mail, the trained model's left-out scores of
its training mail, its scores of the test mail) the ham's 99th and 99.9th percentiles and
highest score and the spam's 10th percentile; then the test mail at the learned cutoffs and at
the same rule's on the left-out scores, beside the least spam any cutoff leaves with at most
A = max(1, 0.1 % of the test ham) called spam, and with none.

Run (from the repository root)::

    python -m bench.spam                   # corpora/full/spamassassin, else the shared archive
    python -m bench.spam --data corpora/spamassassin        # the bundled sample: seconds
    python -m bench.spam --cv
    python -m bench.spam --settings alpha=0.1 --settings tf=log
    python -m bench.spam --seeds 0 1 2 3 --no-command
    python -m bench.spam --scales --seeds 0 1 2 3

``--seeds`` runs the splits of several seeds in turn, each reported as above, and ends with a
table of every system's figures over them all: the mean 1 − AUC and its ratio to bogofilter's
split by split, the test ham called spam summed, the means of unsure, spam not caught and the
best any cutoff allows.

``--data DIR`` holds easy_ham/ easy_ham_2/ hard_ham/ spam/ spam_2/ (or spam/ and ham/).
Without it, corpora/full/spamassassin, else ``--archive`` (default
``../shared/corpora/spamassassin-public.tar.gz``) unpacked once into the cache
(bench.common.corpora). A run takes about 15 s on 2 cores once the corpus is in the cache,
``--cv`` about 30 s (13 s and 25 s measured with textnb's compiled modules).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import list_spam, spam_dir
from bench.common.metrics import best_not_caught, decide, logit, rates, roc_auc, sigmoid
from bench.common.report import pct, ratio, table as _table
from bench.common.splits import sample_split, stratified_folds, stratified_split, time_split
from bench.common.systems import (bogofilter_classify, bogofilter_path, bogofilter_register,
                                  command_info, command_run, documents, has_sklearn, warm_up)
from textnb.decision.rules import HAM_CUTOFF, SPAM_CUTOFF  # a model's cutoffs when none learned

PROB_CUTOFFS = [0.5, 0.9, 0.99, 0.999]
LOGODDS_CUTOFFS = [0.0, 2.0, 5.0, 10.0]
HAM_PROB_CUTOFFS = [0.01, 0.1, 0.5, 0.9]
# The rows beside the defaults when no --candidate is given: every message learned (the default,
# training "auto", picks between that and training on error by cross-validation), and training on
# error in one walk, as before four were averaged.
DEFAULT_CANDIDATES = ["training=full", "training='on-error';orders=1"]
COMMAND = "textnb command"


def table(header: list[str], rows: list[list[str]], indent: str = "  ") -> str:
    return _table(header, rows, indent)


# -- systems -------------------------------------------------------------------------------------

@dataclass
class Result:
    name: str
    score: np.ndarray                      # higher = more spam; used for ROC AUC
    status: np.ndarray                     # spam/ham/unsure at the default decision
    train_s: float
    classify_s: float
    n_train: int
    n_test: int
    note: str = ""
    extra: dict = field(default_factory=dict)




def run_textnb(name: str, settings: dict, train_paths, y_train, test_paths) -> Result:
    """textnb as `textnb train` runs it: the cutoffs learned by CV on the training part. The
    setting ``orders=N`` is not TextClassifier's: it sets how many walks training on error
    averages (textnb.nb.on_error.ORDERS) for this row."""
    from textnb import TextClassifier
    from textnb.nb import on_error
    settings = dict(settings)
    orders, averaged = settings.pop("orders", on_error.ORDERS), on_error.ORDERS
    t0 = time.perf_counter()
    clf = TextClassifier(spam_class="spam", **{"training": "auto", **settings})
    on_error.ORDERS = orders
    try:
        clf.fit(documents(train_paths), y_train)
    finally:
        on_error.ORDERS = averaged
    train_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    log_proba = clf.predict_log_proba(documents(test_paths))
    classify_s = time.perf_counter() - t0
    s = list(clf.classes_).index("spam")
    log_odds = log_proba[:, s] - log_proba[:, 1 - s]
    p_spam = np.exp(log_proba[:, s])
    cut = clf.cutoffs_
    status = decide(log_odds, cut["spam"], cut["ham"])
    return Result(name, log_odds, status, train_s, classify_s, len(train_paths), len(test_paths),
                  note=f"{cut.get('training', clf.training)} training; learned cutoffs: log-odds "
                       f">= {cut['spam']:+.2f} spam, <= {cut['ham']:+.2f} ham",
                  extra={"p_spam": p_spam, "terms": len(clf.vocabulary_),
                         "training": cut.get("training", clf.training),
                         # What the cutoffs promise: their rates on the training part's
                         # held-out scores, as `textnb info` shows them.
                         "promised": {k: cut[k] for k in ("fpr", "unsure", "spam_not_caught")}})


def run_command(train_paths, y_train, test_paths, scratch: Path) -> Result:
    """The command a user types, at its defaults: ``textnb train -m MODEL spam/ ham/`` on the
    training part (links to its files in two directories) and ``textnb classify -m MODEL
    --format json`` of the test part, each a fresh process; its spam log-odds and verdicts,
    and what its cutoffs promised (``textnb info``)."""
    run = command_run(scratch, {label: [Path(p) for p, y in zip(train_paths, y_train) if y == label]
                                for label in ("spam", "ham")}, [Path(p) for p in test_paths])
    cut = command_info(run.model).get("cutoffs") or {}
    score = np.array([r["spam_log_odds"] for r in run.records])
    note = ("`textnb train spam/ ham/` + `textnb classify`"
            + (f"; learned cutoffs: log-odds >= {cut['spam']:+.2f} spam, <= {cut['ham']:+.2f} ham"
               if cut else ""))
    return Result(COMMAND, score, run.verdicts, run.train.wall, run.classify.wall,
                  len(train_paths), len(test_paths), note=note,
                  extra={"printed": run.printed, "train_rss": run.train.rss,
                         **({"promised": {k: cut[k] for k in ("fpr", "unsure", "spam_not_caught")}}
                            if cut else {})})


def run_sklearn(train_raw, y_train, test_raw, linear: bool = False) -> list[Result]:
    """scikit-learn's Count + MultinomialNB; with ``linear`` also the discriminative models a
    data scientist would try next: TF-IDF + logistic regression, its C chosen by 5-fold CV of
    the training part (ROC AUC), and TF-IDF of words and word pairs + a linear SVM."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.svm import LinearSVC
    train_text = [r.decode("latin-1") for r in train_raw]
    test_text = [r.decode("latin-1") for r in test_raw]
    is_spam = np.asarray(y_train) == "spam"
    systems = [("sklearn Count+MNB", CountVectorizer(), MultinomialNB(alpha=1.0),
                "predict(): argmax, i.e. 0.5")]
    if linear:
        systems += [("sklearn TF-IDF+LR", TfidfVectorizer(),
                     GridSearchCV(LogisticRegression(max_iter=2000),
                                  {"C": [1, 10, 100, 1000]}, cv=5, scoring="roc_auc"),
                     "predict(): 0.5, C by 5-fold CV"),
                    ("sklearn TF-IDF 1-2+SVM", TfidfVectorizer(ngram_range=(1, 2)),
                     LinearSVC(), "predict(): margin 0")]
    results = []
    for name, vectorizer, model, note in systems:
        t0 = time.perf_counter()
        model.fit(vectorizer.fit_transform(train_text), is_spam)
        train_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        X_test = vectorizer.transform(test_text)
        if isinstance(model, MultinomialNB):   # no decision_function: its probabilities' log-odds
            log_proba = model.predict_log_proba(X_test)
            score = log_proba[:, 1] - log_proba[:, 0]
        else:
            score = model.decision_function(X_test)
        classify_s = time.perf_counter() - t0
        status = np.where(score > 0, "spam", "ham")
        results.append(Result(name, score, status, train_s, classify_s, len(train_raw),
                              len(test_raw), note=note))
    return results



def run_bogofilter(bogofilter: str, scratch: Path, train_paths, y_train, test_paths) -> Result:
    db = Path(tempfile.mkdtemp(prefix="bogo-", dir=scratch))
    spam = [p for p, c in zip(train_paths, y_train) if c == "spam"]
    ham = [p for p, c in zip(train_paths, y_train) if c == "ham"]
    t0 = time.perf_counter()
    bogofilter_register(bogofilter, db, spam, ham)
    train_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    score, status = bogofilter_classify(bogofilter, db, test_paths)
    classify_s = time.perf_counter() - t0
    return Result("bogofilter", score, status, train_s, classify_s, len(train_paths), len(test_paths),
                  note="its Spam/Ham/Unsure (cutoffs 0.99 / 0.45)")



# -- reports -------------------------------------------------------------------------------------

def main_table(results: list[Result], is_spam: np.ndarray, reference: str | None,
               max_fpr: float = 0.001) -> str:
    """Two tables: ranking and decisions; speed. Ratios are against ``reference``."""
    ref = next((r for r in results if r.name == reference), None)
    ref_auc = (1 - roc_auc(is_spam, ref.score)) if ref else None
    quality, speed = [], []
    for r in results:
        one_minus_auc = 1 - roc_auc(is_spam, r.score)
        m = rates(is_spam, r.status)
        promised = r.extra.get("promised")
        quality.append([r.name, f"{100 * one_minus_auc:.3f} %", ratio(one_minus_auc, ref_auc),
                        f"{pct(m['fpr'])} ({m['fp']})", f"{pct(m['fnr'])} ({m['fn']})",
                        pct(m["unsure"], 1), pct(m["spam_unsure"], 1),
                        f"{pct(m['not_caught'], 1)} ({m['missed']})",
                        pct(promised["spam_not_caught"], 1) if promised else "-",
                        pct(best_not_caught(is_spam, r.score, max_fpr), 1), r.note])
        speed.append([r.name, f"{r.train_s:.2f} s", f"{r.n_train / r.train_s:.0f}",
                      ratio(r.train_s, ref and ref.train_s),
                      f"{r.classify_s:.2f} s", f"{r.n_test / r.classify_s:.0f}",
                      ratio(r.classify_s, ref and ref.classify_s)])
    return (table(["system", "1-AUC", "vs bogofilter", "FPR (n)", "FNR (n)", "unsure",
                   "spam unsure", "spam not caught (n)", "promised",
                   f"best at FPR <= {pct(max_fpr, 1)}", "decision"], quality)
            + f"\n  unsure: of all messages; spam not caught: in the inbox or unsure; promised: "
              f"what the learned cutoffs' own estimate said (textnb info); best: the "
              f"least spam not caught by any spam cutoff with FPR <= {pct(max_fpr, 1)}, chosen on "
              f"these test scores (what the ranking allows)\n\n"
            + table(["system", "train", "msg/s", "vs bogofilter", "classify", "msg/s",
                     "vs bogofilter"], speed))


def cutoff_tables(is_spam: np.ndarray, log_odds: np.ndarray, p_spam: np.ndarray) -> str:
    """FPR / FNR / unsure at several spam cutoffs (ham cutoff = default) and ham cutoffs."""
    rows = []
    ham_lo = logit(HAM_CUTOFF) if 0 < HAM_CUTOFF < 1 else 0.0
    for p in PROB_CUTOFFS:
        status = decide(p_spam, p, min(HAM_CUTOFF, p))
        two = rates(is_spam, decide(p_spam, p, p))
        m = rates(is_spam, status)
        rows.append([f"P(spam) >= {p:g}", f"{logit(p):+.2f}", f"{pct(m['fpr'])} ({m['fp']})",
                     f"{pct(m['fnr'])} ({m['fn']})", pct(m["spam_unsure"]), pct(m["ham_unsure"]),
                     f"{pct(two['fnr'])} ({two['fn']})"])
    for lo in LOGODDS_CUTOFFS:
        status = decide(log_odds, lo, min(ham_lo, lo))
        two = rates(is_spam, decide(log_odds, lo, lo))
        m = rates(is_spam, status)
        rows.append([f"log-odds >= {lo:g}", f"p={sigmoid(lo):.5f}", f"{pct(m['fpr'])} ({m['fp']})",
                     f"{pct(m['fnr'])} ({m['fn']})", pct(m["spam_unsure"]), pct(m["ham_unsure"]),
                     f"{pct(two['fnr'])} ({two['fn']})"])
    spam_rows = table(["spam cutoff", "same as", "FPR (n)", "FNR (n)", "spam unsure",
                       "ham unsure", "FNR 2-state (n)"], rows)
    rows = []
    for h in HAM_PROB_CUTOFFS:
        m = rates(is_spam, decide(p_spam, SPAM_CUTOFF, min(h, SPAM_CUTOFF)))
        rows.append([f"P(spam) <= {h:g}", f"{logit(h):+.2f}", f"{pct(m['fnr'])} ({m['fn']})",
                     pct(m["spam_unsure"]), pct(m["ham_unsure"])])
    ham_rows = table(["ham cutoff", "log-odds", "FNR (n)", "spam unsure", "ham unsure"], rows)
    n_spam, n_ham = int(is_spam.sum()), int((~is_spam).sum())
    saturated = (f"  P(spam) rounds to exactly 1.0 for {int((p_spam >= 1.0).sum())} messages "
                 f"and to 0.0 for {int((p_spam <= 0.0).sum())}; log-odds range "
                 f"{log_odds.min():+.0f} .. {log_odds.max():+.0f}")
    return (f"spam cutoffs ({n_spam} spam, {n_ham} ham; ham cutoff P <= {HAM_CUTOFF:g}, "
            f"i.e. log-odds <= {ham_lo:g}):\n{spam_rows}\n\n"
            f"ham cutoffs (spam cutoff P >= {SPAM_CUTOFF:g}):\n{ham_rows}\n{saturated}")


def choose_cutoff(is_spam: np.ndarray, log_odds: np.ndarray, max_fpr: float) -> str:
    """The lowest log-odds spam cutoff whose FPR is at most max_fpr (on these scores)."""
    ham_scores = np.sort(log_odds[~is_spam])[::-1]
    allowed = int(math.floor(max_fpr * ham_scores.size + 1e-9))   # ham allowed above the cutoff
    # The cutoff must lie above the (allowed+1)-th highest ham score.
    boundary = ham_scores[allowed] if allowed < ham_scores.size else -np.inf
    cut = float(np.nextafter(boundary, np.inf))
    m = rates(is_spam, decide(log_odds, cut, min(cut, 0.0)))
    lines = [f"lowest spam cutoff with FPR <= {pct(max_fpr)} ({allowed} of {ham_scores.size} ham "
             f"allowed): log-odds > {boundary:+.2f} (P(spam) > {sigmoid(boundary):.6f}); there "
             f"FNR {pct(m['fnr'])}, spam unsure {pct(m['spam_unsure'])} (ham cutoff log-odds 0)",
             "  highest-scoring ham (log-odds): "
             + ", ".join(f"{v:+.1f}" for v in ham_scores[:8]),
             "  ham cutoffs with that spam cutoff:"]
    rows = []
    for h in (-10.0, -5.0, -2.0, -1.0, 0.0, 1.0, 2.0):
        if h >= cut:
            continue
        m = rates(is_spam, decide(log_odds, cut, h))
        rows.append([f"log-odds <= {h:+g}", f"{sigmoid(h):.4f}", f"{pct(m['fpr'])} ({m['fp']})",
                     f"{pct(m['fnr'])} ({m['fn']})", pct(m["spam_unsure"]), pct(m["ham_unsure"])])
    return "\n".join(lines) + "\n" + table(["ham cutoff", "P(spam)", "FPR (n)", "FNR (n)",
                                             "spam unsure", "ham unsure"], rows, indent="    ")


def worst_errors(paths, is_spam, log_odds, n: int) -> str:
    from textnb.documents.message import parse_message
    def subject(path):
        fields = parse_message(Path(path).read_bytes(), path).fields
        return next((v for k, v in fields if k == "subject"), "")[:50]
    lines = []
    ham_idx = np.flatnonzero(~is_spam)
    spam_idx = np.flatnonzero(is_spam)
    for label, idx, key in (("ham scored most spammy", ham_idx, -log_odds),
                            ("spam scored most hammy", spam_idx, log_odds)):
        top = idx[np.argsort(key[idx], kind="stable")[:n]]
        lines.append(f"  {label}:")
        for i in top:
            rel = os.path.join(*Path(paths[i]).parts[-2:])
            lines.append(f"    {log_odds[i]:+9.1f}  {rel[:52]:<52}  {subject(paths[i])!r}")
    return "\n".join(lines)


# -- held-out scores against the trained model's (--scales) -------------------------------------

SCALE_COLUMNS = ["ham 99 %", "ham 99.9 %", "highest ham", "spam 10 %"]


def scale_row(score: np.ndarray, is_spam: np.ndarray) -> list[float]:
    """Where a scoring puts the top of the ham and the bottom of the spam: the ham's 99th and
    99.9th percentiles and highest score, the spam's 10th percentile (log-odds)."""
    ham, spam = score[~is_spam], score[is_spam]
    return [float(np.quantile(ham, 0.99)), float(np.quantile(ham, 0.999)), float(ham.max()),
            float(np.quantile(spam, 0.1))]


def at_cutoffs(score: np.ndarray, is_spam: np.ndarray, spam_cut: float, ham_cut: float,
               max_fpr: float) -> dict:
    """A spam/unsure/ham decision on test scores: the ham called spam, whether more than
    A = max(1, ⌊max_fpr · test ham⌋), the share of spam not caught (under the spam cutoff) and
    of all messages unsure."""
    ham_spam = int(np.sum(score[~is_spam] >= spam_cut))
    allowed = max(1, math.floor(max_fpr * int((~is_spam).sum()) + 1e-9))
    return {"ham_spam": ham_spam, "over": ham_spam > allowed,
            "not_caught": float(np.mean(score[is_spam] < spam_cut)),
            "unsure": float(np.mean((score > ham_cut) & (score < spam_cut)))}


def left_out_scores(clf, docs: list, labels: np.ndarray) -> np.ndarray:
    """Each training message's spam log-odds by the trained model less its own counts, cut to
    the model's terms as a new message is (textnb.decision.cutoffs.left_out, exact for full
    training). Trained on error, a message the walks did not learn is scored by the model as
    it is, one they learned less its share of the walks: the walk without it would have learned
    another in its place, so this overstates how far such a message scores on its class's
    wrong side."""
    from textnb.decision.cutoffs import left_out
    from textnb.text.features import noting_digests, text_iterable
    found: list[np.ndarray] = []
    raw = clf.vocabulary_.count_parts(noting_digests(clf._count_stream(text_iterable(docs)), found))
    digests = np.concatenate(found)
    code = {name: i for i, name in enumerate(clf._digest_names.tolist())}
    learned: Counter = Counter()       # the weight each (digest, label) has in the counts
    for digest, label, weight in zip(clf.digests_.tolist(), clf._digest_codes.tolist(),
                                     clf.digest_weights_.tolist()):
        learned[digest, label] += weight
    pairs = list(zip(digests.tolist(), [code[label] for label in labels.tolist()]))
    copies = Counter(pairs)            # each copy takes its share out
    weight = np.array([learned[pair] / copies[pair] for pair in pairs])
    scores = left_out(clf, raw, clf._weigh(raw), labels.tolist(), digests, clf.model_, weight)
    return scores if np.unique(labels)[1] == "spam" else -scores


def run_scales(args, paths: list[str], y: np.ndarray) -> dict:
    """textnb at its defaults on the 70/30 split of each seed: the spam log-odds of four
    scorings side by side (scale_row), and the test mail decided by the learned cutoffs and by
    the same rule (textnb.decision.cutoffs.choose_cutoffs) on the trained model's left-out
    scores of its training mail."""
    from unittest import mock

    from textnb import TextClassifier
    from textnb.decision import cutoffs
    names = ["the folds' models (cutoffs chosen on)", "the folds' models, as new mail",
             "the trained model, left out", "the trained model, test mail"]
    splits = []
    for seed in args.seeds or [args.seed]:
        train, test = stratified_split(y, 0.7, seed)
        y_train, is_spam = y[train], y[test] == "spam"
        docs = documents([paths[i] for i in train])
        with mock.patch.object(cutoffs, "choose_cutoffs", wraps=cutoffs.choose_cutoffs) as spy:
            clf = TextClassifier(spam_class="spam").fit(docs, y_train)
        cut = clf.cutoffs_
        # fit cross-validates training on error first (scored as new too), then full training.
        calls = [c.args + (None,) * (6 - len(c.args)) for c in spy.call_args_list]
        folds = next(c for c in calls if (c[5] is None) == (cut["training"] == "full"))
        kept = np.ones(train.size, dtype=bool)
        kept[clf.suspects_] = False
        own = left_out_scores(clf, [d for d, k in zip(docs, kept) if k], y_train[kept])
        log_proba = clf.predict_log_proba(documents([paths[i] for i in test]))
        s = list(clf.classes_).index("spam")
        score = log_proba[:, s] - log_proba[:, 1 - s]
        rows = [scale_row(folds[0], folds[1]),
                scale_row(folds[5], folds[1]) if folds[5] is not None else None,
                scale_row(own, y_train[kept] == "spam"), scale_row(score, is_spam)]
        on_own = cutoffs.choose_cutoffs(own, y_train[kept] == "spam")
        ham = np.sort(score[~is_spam])[::-1]
        allowed = max(1, math.floor(args.max_fpr * ham.size + 1e-9))
        split = {"seed": seed, "training": cut["training"], "scales": rows,
                 "learned": at_cutoffs(score, is_spam, cut["spam"], cut["ham"], args.max_fpr),
                 "left out": at_cutoffs(score, is_spam, on_own["spam"], on_own["ham"],
                                        args.max_fpr),
                 "oracle": float(np.mean(score[is_spam] <= ham[allowed])),
                 "no ham": float(np.mean(score[is_spam] <= ham[0]))}
        splits.append(split)
        print(f"seed {seed}: {cut['training']} training, {int(train.size)} training messages, "
              f"{int(is_spam.size)} test ({int((~is_spam).sum())} ham)")
        print(table(["spam log-odds of"] + SCALE_COLUMNS,
                    [[n] + (["-"] * 4 if r is None else [f"{v:+.2f}" for v in r])
                     for n, r in zip(names, rows)]))
        print(scales_rules([split]) + "\n", flush=True)
    if len(splits) > 1:
        print(f"== Over the splits of seeds {', '.join(str(s['seed']) for s in splits)} (means) ==")
        mean = [[float(np.mean([s["scales"][i][j] for s in splits if s["scales"][i] is not None]))
                 if any(s["scales"][i] is not None for s in splits) else None for j in range(4)]
                for i in range(4)]
        print(table(["spam log-odds of"] + SCALE_COLUMNS,
                    [[n] + (["-"] * 4 if r[0] is None else [f"{v:+.2f}" for v in r])
                     for n, r in zip(names, mean)]))
        print(scales_rules(splits))
    return {"scales": splits}


def scales_rules(splits: list[dict]) -> str:
    """The test mail at the learned cutoffs and at the rule's on the left-out scores, over
    ``splits`` (run_scales'): test ham called spam (the splits over A), mean spam not caught
    and unsure; beside them the least spam any cutoff leaves with at most A, and with no test
    ham called spam, chosen on the test scores themselves."""
    rows = []
    for name in ("learned", "left out"):
        r = [s[name] for s in splits]
        rows.append([{"learned": "spam cutoff as learned",
                      "left out": "the same rule on the left-out scores"}[name],
                     f"{sum(x['ham_spam'] for x in r)} ({sum(x['over'] for x in r)})",
                     pct(float(np.mean([x["not_caught"] for x in r]))),
                     pct(float(np.mean([x["unsure"] for x in r])))])
    for name, key in (("any cutoff, at most A (oracle)", "oracle"),
                      ("any cutoff, no test ham", "no ham")):
        rows.append([name, "", pct(float(np.mean([s[key] for s in splits]))), ""])
    return table(["test mail at", "ham called spam (splits over A)", "spam not caught", "unsure"],
                 rows)


# -- modes ---------------------------------------------------------------------------------------


def split(args, paths: list[str], y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (train, test) indices ``--split``, ``--sample`` and ``--seed`` name."""
    if args.sample:
        return sample_split(y, *args.sample, args.seed)
    return time_split(paths, args.seed) if args.split == "time" else stratified_split(y, 0.7, args.seed)


def run_bench(args, paths, y, scratch: Path) -> dict:
    train, test = split(args, paths, y)
    if args.copies:  # each training message a second time with probability --copies
        train = np.concatenate([train, train[np.random.default_rng(8).random(train.size)
                                             < args.copies]])
    train_paths = [paths[i] for i in train]
    test_paths = [paths[i] for i in test]
    y_train, y_test = y[train], y[test]
    is_spam = y_test == "spam"
    print(f"SpamAssassin: {len(paths)} messages ({int((y == 'spam').sum())} spam, "
          f"{int((y == 'ham').sum())} ham); "
          + (f"{args.sample[0]} spam and {args.sample[1]} ham drawn to train, the rest to test"
             if args.sample else "2002 parts train, 2003 parts test (hard_ham halved)"
             if args.split == "time" else "stratified 70/30 split") + f", seed {args.seed}: "
          f"train {len(train)} ({int((y_train == 'spam').sum())} spam), test {len(test)} "
          f"({int(is_spam.sum())} spam, {int((~is_spam).sum())} ham)", flush=True)
    if args.swap:
        # Mis-sorted training mail, as a user's folders hold some: each training label swapped
        # with probability --swap (the same draw for every system); the test labels stay true.
        swapped = np.random.default_rng(7).random(y_train.size) < args.swap
        y_train = np.where(swapped, np.where(y_train == "spam", "ham", "spam"), y_train)
        print(f"  training labels swapped: {int(swapped.sum())} ({args.swap:.1%} drawn)", flush=True)
    # Read every file once before timing anything: all systems then find them in the page cache.
    raw = [Path(p).read_bytes() for p in paths]
    train_raw, test_raw = [raw[i] for i in train], [raw[i] for i in test]

    results: list[Result] = []
    print(f"  textnb warm-up (one-time imports, not counted below): "
          f"{warm_up(train_paths, y_train):.1f} s", flush=True)
    if args.command:
        print(f"  {COMMAND} (textnb train, textnb classify: defaults) ...", end="", flush=True)
        results.append(run_command(train_paths, y_train, test_paths, scratch))
        print(f" {results[-1].train_s + results[-1].classify_s:.1f} s", flush=True)
    print("  textnb (defaults) ...", end="", flush=True)
    r = run_textnb("textnb default", {}, train_paths, y_train, test_paths)
    results.append(r)
    print(f" {r.train_s + r.classify_s:.1f} s ({r.extra['terms']} terms)", flush=True)
    custom = options.parse_settings(args.settings)
    if custom:
        name = "textnb " + ",".join(f"{k}={v}" for k, v in custom.items())
        print(f"  {name} ...", end="", flush=True)
        results.append(run_textnb(name, custom, train_paths, y_train, test_paths))
        print(f" {results[-1].train_s + results[-1].classify_s:.1f} s", flush=True)
    for spec in args.candidate or ([] if args.no_candidates else DEFAULT_CANDIDATES):
        extra = options.parse_settings(spec.split(";"))
        name = "textnb " + ",".join(f"{k}={v}" for k, v in extra.items())
        print(f"  {name} ...", end="", flush=True)
        results.append(run_textnb(name, extra, train_paths, y_train, test_paths))
        print(f" {results[-1].train_s + results[-1].classify_s:.1f} s", flush=True)
    bogofilter = None if args.no_bogofilter else bogofilter_path(args.bogofilter)
    if bogofilter:
        print(f"  bogofilter ({bogofilter}) ...", end="", flush=True)
        results.append(run_bogofilter(bogofilter, scratch, train_paths, y_train, test_paths))
        print(f" {results[-1].train_s + results[-1].classify_s:.1f} s", flush=True)
    elif not args.no_bogofilter:
        print("  bogofilter not found: skipped", flush=True)
    if not args.no_sklearn and has_sklearn():
        print("  scikit-learn ...", end="", flush=True)
        done = run_sklearn(train_raw, y_train, test_raw, args.sklearn_linear)
        results += done
        print(f" {sum(r.train_s + r.classify_s for r in done):.1f} s", flush=True)
    elif not args.no_sklearn:
        print("  scikit-learn not installed: skipped", flush=True)

    default = next(r for r in results if r.name == "textnb default")
    print(f"\n== Test part ({len(test)} messages): ranking, default decisions, speed "
          f"(ratios vs bogofilter) ==")
    print(main_table(results, is_spam, "bogofilter" if bogofilter else None, args.max_fpr))
    command = next((r for r in results if r.name == COMMAND), None)
    if command:
        bogo = next((r for r in results if r.name == "bogofilter"), None)
        print(f"\n  the command at its defaults: `textnb train -m MODEL spam/ ham/` on the "
              f"{len(train)} training messages: {command.train_s:.2f} s"
              + (f" ({command.train_s / bogo.train_s:.2f}x bogofilter's registration)" if bogo else "")
              + f", peak RSS {command.extra['train_rss']:.0f} MiB; it printed:")
        print("".join(f"    {line}\n" for line in command.extra["printed"].splitlines()), end="")
    print("\n== textnb default: the most confident mistakes on the test part (log-odds) ==")
    print(worst_errors(test_paths, is_spam, default.score, args.show_errors))
    if bogofilter:
        bogo = next(r for r in results if r.name == "bogofilter")
        print("\n== bogofilter: highest-scoring test ham, lowest-scoring test spam (spamicity) ==")
        for label, mask, order in (("ham", ~is_spam, -1), ("spam", is_spam, 1)):
            idx = np.flatnonzero(mask)
            top = idx[np.argsort(order * bogo.score[idx], kind="stable")[:args.show_errors]]
            print(f"  {label}: " + ", ".join(f"{Path(test_paths[i]).parent.name}/"
                                             f"{Path(test_paths[i]).name[:5]} {bogo.score[i]:.4f}"
                                             for i in top))
    return {"seed": args.seed, "n_train": len(train), "n_test": len(test),
            "n_ham": int((~is_spam).sum()),
            "results": [{"name": r.name, "one_minus_auc": 1 - roc_auc(is_spam, r.score),
                         **rates(is_spam, r.status),
                         "best_not_caught": best_not_caught(is_spam, r.score, args.max_fpr),
                         **({"promised": r.extra["promised"]} if "promised" in r.extra else {}),
                         "train_s": r.train_s, "classify_s": r.classify_s} for r in results]}


def pooled_table(splits: list[dict], max_fpr: float) -> str:
    """Each system's figures over several splits (run_bench's results, one a seed): the mean
    1 − AUC and, split by split, its ratio to bogofilter's; the test ham called spam, summed;
    the means of unsure, spam not caught, what the learned cutoffs promised of it (textnb's
    rows) and the least any cutoff with FPR ≤ ``max_fpr`` leaves on each split's test scores."""
    names = [r["name"] for r in splits[0]["results"]]
    by = [{r["name"]: r for r in split["results"]} for split in splits]
    mean, rows = statistics.mean, []
    for name in names:
        got = [split[name] for split in by if name in split]
        ratios = [split[name]["one_minus_auc"] / split["bogofilter"]["one_minus_auc"]
                  for split in by if name in split and "bogofilter" in split
                  and split["bogofilter"]["one_minus_auc"] > 0]
        rows.append([name, f"{100 * mean(r['one_minus_auc'] for r in got):.4f} %",
                     f"{min(ratios):.2f}-{max(ratios):.2f}x, below on "
                     f"{sum(x < 1 for x in ratios)} of {len(ratios)}" if ratios else "-",
                     f"{sum(r['fp'] for r in got)} of {sum(s['n_ham'] for s in splits)} "
                     f"(at most {max(r['fp'] for r in got)})",
                     pct(mean(r["unsure"] for r in got)),
                     f"{pct(mean(r['not_caught'] for r in got))} "
                     f"({100 * min(r['not_caught'] for r in got):.1f}-"
                     f"{100 * max(r['not_caught'] for r in got):.1f})",
                     pct(mean(r["promised"]["spam_not_caught"] for r in got))
                     if all("promised" in r for r in got) else "-",
                     pct(mean(r["best_not_caught"] for r in got))])
    return table(["system", "1-AUC, mean", "vs bogofilter, by split", "test ham called spam",
                  "unsure", "spam not caught", "promised", f"best at FPR <= {pct(max_fpr, 1)}"],
                 rows)


def chi2_log_sf(x2: np.ndarray, dof: np.ndarray) -> np.ndarray:
    """log Q(x2 | dof) for even dof = 2n: Q = e^(−m) Σ_{i<n} m^i / i!, m = x2 / 2, summed in log
    space so that it never underflows (SpamBayes' chi2Q, vectorised)."""
    m = np.asarray(x2, dtype=float) / 2.0
    n = np.asarray(dof) // 2
    total = np.full(m.shape, -np.inf)
    term = np.zeros(m.shape)
    log_m = np.log(np.maximum(m, 1e-300))
    for i in range(int(n.max()) if n.size else 0):
        if i:
            term = term + log_m - math.log(i)
        total = np.where(i < n, np.logaddexp(total, term), total)
    return -m + total


def fisher_scores(X_train, is_spam, X_held, s: float = 0.2, x: float = 0.5) -> np.ndarray:
    """Robinson's f(w) = (s·x + n·p(w)) / (s + n) from message counts, combined by Fisher's
    chi-square over every token of a held-out message (SpamBayes, bogofilter): the score is
    ln Q(−2 Σ ln f, 2n) − ln Q(−2 Σ ln(1 − f), 2n), the log of H over S, which ranks as the
    spamicity (1 + H − S) / 2 does without saturating. Tokens the training part never saw
    count as f = x (Robinson's value for an unknown word)."""
    present_train = (X_train > 0).astype(float)
    spam_df = np.asarray(present_train[is_spam].sum(axis=0)).ravel()
    ham_df = np.asarray(present_train[~is_spam].sum(axis=0)).ravel()
    b, g = spam_df / max(is_spam.sum(), 1), ham_df / max((~is_spam).sum(), 1)
    p = np.divide(b, b + g, out=np.full(b.shape, x), where=(b + g) > 0)
    n = spam_df + ham_df
    f = np.clip((s * x + n * p) / (s + n), 1e-12, 1 - 1e-12)
    present = (X_held > 0).astype(float).tocsr()
    count = np.diff(present.indptr)
    log_h = chi2_log_sf(-2 * (present @ np.log(f)), 2 * count)
    log_s = chi2_log_sf(-2 * (present @ np.log1p(-f)), 2 * count)
    return log_h - log_s


def run_cv(args, paths, y) -> dict:
    from textnb import TextClassifier
    train, _ = split(args, paths, y)
    train_paths = [paths[i] for i in train]
    y_train = y[train]
    folds = stratified_folds(y_train, args.folds, args.seed)
    settings = options.parse_settings(args.settings)
    print(f"SpamAssassin 70 % training part only (seed {args.seed}): {len(train)} messages "
          f"({int((y_train == 'spam').sum())} spam, {int((y_train == 'ham').sum())} ham); "
          f"{args.folds}-fold stratified CV of TextClassifier({', '.join(f'{k}={v!r}' for k, v in {'spam_class': 'spam', **settings}.items())})",
          flush=True)
    t0 = time.perf_counter()
    docs = documents(train_paths)
    log_odds = np.zeros(len(train))
    p_spam = np.zeros(len(train))
    status = np.empty(len(train), dtype=object)
    aucs = []
    for k in range(args.folds):
        held = folds == k
        # As `textnb train` makes it: cutoffs learned by CV within the fold's training part.
        clf = TextClassifier(**{"spam_class": "spam", **settings}).fit(
            [d for d, h in zip(docs, held) if not h], y_train[~held])
        lp = clf.predict_log_proba([d for d, h in zip(docs, held) if h])
        s = list(clf.classes_).index("spam")
        log_odds[held] = lp[:, s] - lp[:, 1 - s]
        p_spam[held] = np.exp(lp[:, s])
        status[held] = decide(log_odds[held], clf.cutoffs_["spam"], clf.cutoffs_["ham"])
        aucs.append(1 - roc_auc(y_train[held] == "spam", log_odds[held]))
        print(f"  fold {k + 1}/{args.folds}: 1-AUC {100 * aucs[-1]:.3f} %", flush=True)
    is_spam = y_train == "spam"
    pooled = 1 - roc_auc(is_spam, log_odds)
    print(f"  ({time.perf_counter() - t0:.0f} s)\n")
    print(f"== textnb out-of-fold scores ({len(train)} messages): 1-AUC pooled "
          f"{100 * pooled:.3f} %, per fold mean {100 * statistics.mean(aucs):.3f} % ==")
    fisher_pooled = None
    if args.fisher:
        # Robinson–Fisher on textnb's tokens and the same folds (one vocabulary of all the
        # training part: an unseen token counts as f = x either way).
        from textnb.text.vocabulary import Vocabulary, to_scipy
        tokens = TextClassifier(**settings).tokenize(docs)
        counts = to_scipy(Vocabulary().fit_count(tokens)).tocsr()
        fisher = np.zeros(len(train))
        spam_train = y_train == "spam"
        for k in range(args.folds):
            held = folds == k
            fisher[held] = fisher_scores(counts[~held], spam_train[~held], counts[held])
        fisher_pooled = 1 - roc_auc(spam_train, fisher)
        print(f"   Robinson-Fisher (s 0.2, x 0.5, every token) on the same folds and tokens: "
              f"1-AUC pooled {100 * fisher_pooled:.3f} %")
    bogofilter = None if args.no_bogofilter else bogofilter_path(args.bogofilter)
    bogo_pooled = None
    if bogofilter:
        # The same folds for bogofilter: its spamicity ranks the held-out messages.
        spamicity = np.zeros(len(train))
        bogo_aucs = []
        with tempfile.TemporaryDirectory(prefix="bogo-cv-") as scratch:
            for k in range(args.folds):
                held = folds == k
                db = Path(scratch) / f"fold{k}"
                db.mkdir()
                bogofilter_register(bogofilter, db,
                                    [p for p, c, h in zip(train_paths, y_train, held) if c == "spam" and not h],
                                    [p for p, c, h in zip(train_paths, y_train, held) if c == "ham" and not h])
                spamicity[held] = bogofilter_classify(
                    bogofilter, db, [p for p, h in zip(train_paths, held) if h])[0]
                bogo_aucs.append(1 - roc_auc(is_spam[held], spamicity[held]))
        bogo_pooled = 1 - roc_auc(is_spam, spamicity)
        wins = sum(t < b for t, b in zip(aucs, bogo_aucs))
        ties = sum(t == b for t, b in zip(aucs, bogo_aucs))
        print(f"   bogofilter on the same folds: 1-AUC pooled {100 * bogo_pooled:.3f} % "
              f"(textnb / bogofilter {pooled / bogo_pooled:.2f}x), per fold mean "
              f"{100 * statistics.mean(bogo_aucs):.3f} % (textnb / bogofilter "
              f"{statistics.mean(aucs) / statistics.mean(bogo_aucs):.2f}x; textnb lower on "
              f"{wins} folds, equal on {ties}, of {args.folds})")
    command = command_cv(train_paths, y_train, folds, args.folds) if args.command else None
    if command:
        print(f"   {COMMAND} (textnb train, textnb classify: defaults) on the same folds: 1-AUC "
              f"pooled {100 * command['one_minus_auc']:.3f} % (textnb / command "
              f"{pooled / command['one_minus_auc']:.2f}x), per fold mean "
              f"{100 * statistics.mean(command['fold_one_minus_auc']):.3f} %; at its learned "
              f"cutoffs FPR {pct(command['fpr'])} ({command['fp']}), FNR {pct(command['fnr'])} "
              f"({command['fn']}), unsure {pct(command['unsure'])}, spam not caught "
              f"{pct(command['not_caught'])} ({command['missed']}); {command['seconds']:.0f} s")
    learned = rates(is_spam, status.astype(str))
    print(f"  at each fold model's learned cutoffs: FPR {pct(learned['fpr'])} ({learned['fp']}), "
          f"FNR {pct(learned['fnr'])} ({learned['fn']}), unsure {pct(learned['unsure'])} of all, "
          f"spam not caught {pct(learned['not_caught'])} ({learned['missed']})")
    m = rates(is_spam, decide(p_spam, SPAM_CUTOFF, HAM_CUTOFF))
    m5 = rates(is_spam, decide(p_spam, 0.5, 0.5))
    print(f"  current defaults (spam >= {SPAM_CUTOFF}, ham <= {HAM_CUTOFF}): FPR {pct(m['fpr'])} "
          f"({m['fp']}), FNR {pct(m['fnr'])} ({m['fn']}), spam unsure {pct(m['spam_unsure'])}, "
          f"ham unsure {pct(m['ham_unsure'])}; threshold 0.5: FPR {pct(m5['fpr'])} ({m5['fp']}), "
          f"FNR {pct(m5['fnr'])} ({m5['fn']})\n")
    print(cutoff_tables(is_spam, log_odds, p_spam))
    print()
    print(choose_cutoff(is_spam, log_odds, args.max_fpr))
    print("\n== the most confident out-of-fold mistakes (log-odds) ==")
    print(worst_errors(train_paths, is_spam, log_odds, args.show_errors))
    return {"seed": args.seed, "folds": args.folds, "one_minus_auc": pooled, "learned": learned,
            "fold_one_minus_auc": aucs, "bogofilter_one_minus_auc": bogo_pooled,
            "bogofilter_fold_one_minus_auc": bogo_aucs if bogofilter else None,
            "fisher_one_minus_auc": fisher_pooled, "command": command}


def command_cv(paths: list[str], y: np.ndarray, folds: np.ndarray, k: int) -> dict:
    """The command at its defaults on the same folds: ``textnb train spam/ ham/`` on each
    fold's training part, ``textnb classify`` of its held-out part; the pooled 1 − AUC of the
    spam log-odds printed and the rates of the verdicts at each fold model's cutoffs."""
    log_odds = np.zeros(len(paths))
    status = np.empty(len(paths), dtype=object)
    aucs = []
    is_spam = y == "spam"
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="command-cv-") as scratch:
        for fold in range(k):
            held = folds == fold
            run = command_run(Path(scratch), {label: [Path(p) for p, c, h in zip(paths, y, held)
                                                      if c == label and not h]
                                              for label in ("spam", "ham")},
                              [Path(p) for p, h in zip(paths, held) if h])
            log_odds[held] = [r["spam_log_odds"] for r in run.records]
            status[held] = run.verdicts
            aucs.append(1 - roc_auc(is_spam[held], log_odds[held]))
    return {"one_minus_auc": 1 - roc_auc(is_spam, log_odds), "fold_one_minus_auc": aucs,
            **rates(is_spam, status.astype(str)), "seconds": time.perf_counter() - started}


def _sizes(text: str) -> tuple[int, int]:
    spam, _, ham = text.partition(":")
    if not (spam.isdigit() and ham.isdigit() and int(spam) > 0 and int(ham) > 0):
        raise argparse.ArgumentTypeError(f"need SPAM:HAM, two positive counts, not {text!r}")
    return int(spam), int(ham)


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.spam_data(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed of the split and folds (default 0)")
    parser.add_argument("--seeds", type=int, nargs="+", metavar="SEED",
                        help="the splits of these seeds in turn (instead of --seed), then every "
                             "system's figures over them all")
    parser.add_argument("--split", choices=("random", "time"), default="random",
                        help="random: stratified 70/30 (default); time: train on the 2002 parts "
                             "(spam/, easy_ham/), test on the 2003 ones (spam_2/, easy_ham_2/), "
                             "hard_ham/ halved by the seed: mail that drifts")
    parser.add_argument("--sample", type=_sizes, metavar="SPAM:HAM",
                        help="train on this many spam and ham drawn by the seed, test on the "
                             "rest (small training sets; instead of --split)")
    parser.add_argument("--candidate", action="append", default=[], metavar="K=V[,K=V]",
                        help="a further textnb row with these settings, separated by ; (repeatable); "
                             "e.g. --candidate alpha=0.01 --candidate ngram_range=(1,2); "
                             "training='on-error' or 'full' (the default row: 'auto', as "
                             "textnb train)")
    parser.add_argument("--no-candidates", action="store_true",
                        help=f"no further textnb rows ({', '.join(DEFAULT_CANDIDATES)} by default)")
    parser.add_argument("--settings", action="append", default=[], metavar="KEY=VALUE",
                        help="extra textnb row (or the CV model) with these TextClassifier "
                             "settings (repeatable)")
    parser.add_argument("--cv", action="store_true",
                        help="K-fold CV of textnb on the 70 %% training part only; cutoff tables")
    parser.add_argument("--folds", type=int, default=5, help="folds for --cv (default 5)")
    parser.add_argument("--scales", action="store_true",
                        help="textnb alone on each split: its held-out scores (what the cutoffs "
                             "are chosen on) beside the trained model's of the test mail")
    parser.add_argument("--swap", type=float, default=0.0, metavar="SHARE",
                        help="swap each training label with this probability (mis-sorted "
                             "training mail; test labels stay true; default 0)")
    parser.add_argument("--copies", type=float, default=0.0, metavar="SHARE",
                        help="learn each training message twice with this probability (copies "
                             "in a user's folders; default 0)")
    parser.add_argument("--max-fpr", type=float, default=0.001,
                        help="FPR bound for the suggested cutoff in --cv (default 0.001)")
    parser.add_argument("--fisher", action="store_true",
                        help="with --cv: also Robinson's f(w) with Fisher's chi-square combining")
    parser.add_argument("--bogofilter", metavar="PATH", help="bogofilter binary (default: on PATH)")
    parser.add_argument("--no-bogofilter", action="store_true")
    parser.add_argument("--no-sklearn", action="store_true")
    parser.add_argument("--sklearn-linear", action="store_true",
                        help="also scikit-learn's TF-IDF + logistic regression (C by CV) and "
                             "TF-IDF of words and pairs + a linear SVM")
    options.no_command(parser)
    parser.add_argument("--no-cli", dest="command", action="store_false",
                        help=argparse.SUPPRESS)  # its name before the command had rows
    parser.add_argument("--show-errors", type=int, default=5, metavar="N",
                        help="most confident mistakes shown per class (default 5)")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    if args.folds < 2:
        parser.error("--folds must be at least 2")
    if args.seeds and args.cv:
        parser.error("--seeds runs the 70/30 splits; --cv cross-validates one seed's training part")
    start = time.perf_counter()
    out = {}

    def work() -> None:
        with tempfile.TemporaryDirectory(prefix="bench-spam-") as scratch:
            directory = spam_dir(args.data, args.archive)
            paths, y = list_spam(directory)
            print(f"data {directory}; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}")
            if args.scales:
                out.update(run_scales(args, paths, y))
            elif args.cv:
                out.update(run_cv(args, paths, y))
            elif args.seeds:
                splits = []
                for seed in args.seeds:
                    args.seed = seed
                    splits.append(run_bench(args, paths, y, Path(scratch)))
                    print()
                print(f"== Over the splits of seeds {', '.join(map(str, args.seeds))} ==")
                print(pooled_table(splits, args.max_fpr))
                out["splits"] = splits
            else:
                out.update(run_bench(args, paths, y, Path(scratch)))

    if options.run("bench.spam", work):
        return 1
    print(f"\n(total {time.perf_counter() - start:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
