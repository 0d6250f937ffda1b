"""Choose textnb's default settings by cross-validation on training data only.

Two corpora, each read as :class:`textnb.documents.message.Document` (header fields give prefixed
tokens), as ``textnb train`` reads them:

* 20 Newsgroups: the 11314 posts of 20news-bydate-train (the test split is not touched);
  metric: accuracy.
* SpamAssassin public corpus (spam, spam_2 = spam; easy_ham, easy_ham_2, hard_ham = ham): a
  stratified 70 % training part, drawn with ``numpy.random.default_rng(SEED)`` (seed 0 by
  default); the other 30 % is not touched. Metric: ROC AUC of the log-odds
  log P(spam|x) − log P(ham|x) (the probabilities saturate at 0 and 1 on long messages, the
  log-odds does not), by the rank formula with average ranks for ties; accuracy is shown too
  and breaks ties.

Each corpus is split into 5 stratified folds (seeded; every class is shuffled and dealt round
robin to the folds), and every setting of the grid

    model ∈ {multinomial, complement} × alpha ∈ {0.01, 0.03, 0.1, 0.3, 1} × tf ∈ {raw, log}
    × norm ∈ {None, l2} × fit_prior ∈ {True, False} × stop_words ∈ {english, none}

(160 settings) is scored by its mean over the folds. Nothing is shrunk: the whole grid runs in
about 2 minutes on 2 cores (3 with --final-test; the command's folds 4 more), because the work is shared the way the settings nest:

* the posts are tokenized once per stop-word setting (``TextClassifier.tokenize``), and the
  token lists are reused by every fold;
* per fold and stop-word setting, one :class:`textnb.Vocabulary` is built on the training folds
  (with TextClassifier's default min_df/max_df/max_features) and counts both parts;
* per tf/norm weighting (the same arithmetic as ``textnb.text.features.weigh``) and model, the model
  is fitted once; alpha and fit_prior only change the log parameters derived from the same
  counts, so they are set with ``set_params``, which re-derives them.

Before the grid, a self-check fits ``TextClassifier`` itself on part of the data for a few
settings and asserts that this composition gives the same scores.

The settings are ranked per corpus (1 = best; equal scores share the average rank); the
recommended default is the best mean of the two ranks (ties: higher 20 Newsgroups accuracy).
``--final-test`` then fits it and the current defaults on each full training part and scores
them once on the untouched test parts — for information only, it does not choose anything.

Beside the grid, the command at its defaults: ``textnb train`` on each fold's training
documents (one directory of links a class) and ``textnb classify`` of the held-out ones, fresh
processes, on the same folds (``--no-command`` skips it): its mean score and where it would rank
in the grid. It is what users get, settings the grid does not vary (word pairs, training on
error, learned cutoffs) included.

Run (from the repository root)::

    python -m bench.tune                             # both corpora, full grid, 5 folds
    python -m bench.tune --final-test --json tune.json
    python -m bench.tune --corpus 20news --top 20
    python -m bench.tune --20news DIR --spamassassin DIR

Data: ``--20news DIR`` holds 20news-bydate-train/, ``--spamassassin DIR`` holds the five
corpus directories. Without them, ``corpora/full/...`` (python -m bench.fetch_corpora) is used
if present, else the archives in ``../shared/corpora/`` unpacked once into the cache.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import BenchError, args as options
from bench.common.corpora import list_spam, news_dir, news_files, spam_dir
from bench.common.metrics import average_ranks, roc_auc
from bench.common.report import table as _table
from bench.common.splits import stratified_folds, stratified_split
from bench.common.systems import command_run
from textnb import TextClassifier, Vocabulary
from textnb.classifier import MODELS

GRID = {
    "model": ["multinomial", "complement"],
    "alpha": [0.01, 0.03, 0.1, 0.3, 1.0],
    "tf": ["raw", "log"],
    "norm": [None, "l2"],
    "fit_prior": [True, False],
    "stop_words": ["english", "none"],
}
KEYS = list(GRID)
CURRENT = {k: getattr(TextClassifier(), k) for k in KEYS}  # the defaults as they are now


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--20news", dest="news", type=Path, metavar="DIR",
                        help="directory holding 20news-bydate-train/")
    parser.add_argument("--spamassassin", type=Path, metavar="DIR",
                        help="directory holding spam/ spam_2/ easy_ham/ easy_ham_2/ hard_ham/")
    parser.add_argument("--corpus", choices=["both", "20news", "spamassassin"], default="both")
    parser.add_argument("--folds", type=int, default=5, help="number of CV folds (default 5)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the folds and of the SpamAssassin 70/30 split (default 0)")
    parser.add_argument("--jobs", type=int, default=2,
                        help="tokenizing processes (TextClassifier n_jobs; default 2)")
    parser.add_argument("--top", type=int, default=10, help="rows per ranked table (default 10)")
    parser.add_argument("--final-test", action="store_true",
                        help="afterwards, score the recommended and the current defaults once on "
                             "the untouched test parts (information only)")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the self-check against TextClassifier")
    options.no_command(parser)
    parser.add_argument("--json", type=Path, help="write every setting's scores to this file")
    args = parser.parse_args(argv)
    if args.folds < 2:
        parser.error("--folds must be at least 2")
    if args.jobs == 0 or args.jobs < -1:
        parser.error("--jobs must be a positive number of processes, or -1 for all cores")
    return options.run("tune", lambda: run(args))


def say(*parts: object) -> None:
    print(*parts, flush=True)


# -- data ------------------------------------------------------------------------------------

def _reader():
    try:
        from textnb.documents.message import read_bytes
        return read_bytes, "Documents (textnb.documents.message.read_bytes)"
    except ImportError:
        return (lambda raw, source: raw), "raw bytes (textnb.documents.message is missing)"


def _read(paths: list[Path], read) -> list:
    return [read(Path(p).read_bytes(), str(p)) for p in paths]


def load_20news(directory: Path, split: str, read) -> tuple[list, np.ndarray, list[Path]]:
    """The posts of a split, read; their groups; their files."""
    paths, labels = news_files(directory / split)
    return _read(paths, read), np.array(labels), paths


def load_spamassassin(directory: Path, read) -> tuple[list, np.ndarray, list[Path]]:
    """The messages, read; their classes; their files."""
    paths, labels = list_spam(directory)
    return _read(paths, read), labels, [Path(p) for p in paths]


# -- the composition of TextClassifier's steps ---------------------------------------------------

def weigh(X, tf: str, norm: str | None):
    """textnb.text.features.weigh for a counting model: log(1 + count) if tf='log', then L2 rows."""
    from textnb.nb.sparse import CSR
    if tf == "raw" and norm is None:
        return X
    data = np.log1p(X.data) if tf == "log" else X.data.copy()
    if norm == "l2":
        row = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        lengths = np.sqrt(np.bincount(row, weights=data ** 2, minlength=X.shape[0]))
        data /= lengths[row]
    return CSR(data, X.indices, X.indptr, X.shape)


def _vocabulary() -> Vocabulary:
    default = TextClassifier()
    return Vocabulary(min_df=default.min_df, max_df=default.max_df,
                      max_features=default.max_features)


def tokenize(docs: list, stop_words: str, jobs: int) -> list[list[str]]:
    return TextClassifier(stop_words=stop_words, n_jobs=jobs).tokenize(docs)


def score_grid(tokens: dict[str, list[list[str]]], y: np.ndarray, folds: np.ndarray,
               metric: str, positive: str | None = None) -> dict[tuple, dict[str, list[float]]]:
    """{setting: {"accuracy": [per fold], "auc": [per fold]}} over the whole grid."""
    results: dict[tuple, dict[str, list[float]]] = {}
    k = int(folds.max()) + 1
    for stop_words, token_lists in tokens.items():
        for fold in range(k):
            train, valid = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
            vocabulary = _vocabulary()
            X_train = vocabulary.fit_count([token_lists[i] for i in train])
            X_valid = vocabulary.count([token_lists[i] for i in valid])
            for tf, norm in itertools.product(GRID["tf"], GRID["norm"]):
                W_train, W_valid = weigh(X_train, tf, norm), weigh(X_valid, tf, norm)
                for model_name in GRID["model"]:
                    model = MODELS[model_name](alpha=1.0).fit(W_train, y[train])
                    for alpha, fit_prior in itertools.product(GRID["alpha"], GRID["fit_prior"]):
                        model.set_params(alpha=alpha, fit_prior=fit_prior)  # re-derives the logs
                        jll = model.predict_joint_log_proba(W_valid)
                        predicted = model.classes_[np.argmax(jll, axis=1)]
                        setting = (model_name, alpha, tf, norm, fit_prior, stop_words)
                        scores = results.setdefault(setting, {"accuracy": [], "auc": []})
                        scores["accuracy"].append(float(np.mean(predicted == y[valid])))
                        if metric == "auc":
                            column = int(np.searchsorted(model.classes_, positive))
                            other = 1 - column
                            log_odds = jll[:, column] - jll[:, other]
                            scores["auc"].append(roc_auc(y[valid] == positive, log_odds))
    return results


def self_check(docs: list, y: np.ndarray, jobs: int, seed: int) -> None:
    """The composition above must score exactly as TextClassifier does."""
    rng = np.random.default_rng(seed)
    chosen = rng.permutation(y.size)[:1500]
    train, valid = chosen[:1000], chosen[1000:]
    for model, alpha, tf, norm, fit_prior, stop_words in [
            ("multinomial", 1.0, "raw", None, True, "english"),
            ("complement", 0.1, "log", "l2", False, "none"),
            ("multinomial", 0.03, "log", None, False, "english")]:
        classifier = TextClassifier(model=model, alpha=alpha, tf=tf, norm=norm,
                                    fit_prior=fit_prior, stop_words=stop_words, n_jobs=1)
        classifier.fit([docs[i] for i in train], y[train])
        expected = classifier.predict_joint_log_proba([docs[i] for i in valid])
        tokens = tokenize([docs[i] for i in chosen], stop_words, 1)
        vocabulary = _vocabulary()
        X_train = weigh(vocabulary.fit_count(tokens[:1000]), tf, norm)
        X_valid = weigh(vocabulary.count(tokens[1000:]), tf, norm)
        mine = MODELS[model](alpha=1.0).fit(X_train, y[train])
        mine.set_params(alpha=alpha, fit_prior=fit_prior)
        got = mine.predict_joint_log_proba(X_valid)
        if not np.allclose(got, expected, rtol=1e-9, atol=1e-6):
            raise BenchError(f"self-check failed for {model}/{alpha}/{tf}/{norm}/{fit_prior}/"
                            f"{stop_words}: max difference {np.max(np.abs(got - expected)):.3g}")


# -- ranking and tables ----------------------------------------------------------------------

def summarise(results: dict[tuple, dict[str, list[float]]], metric: str) -> dict[tuple, dict]:
    """Mean and standard deviation per setting, and its rank (1 = best, ties averaged)."""
    table = {}
    for setting, scores in results.items():
        row = {}
        for name, values in scores.items():
            if values:
                row[name] = float(np.mean(values))
                row[name + "_std"] = float(np.std(values))
        table[setting] = row
    settings = list(table)
    # Rank by the metric, ties by accuracy; rounded, so float noise does not split true ties
    # (with two classes, complement and multinomial NB give the same log-odds).
    pairs = [(round(table[s][metric], 6), round(table[s]["accuracy"], 6)) for s in settings]
    position = {pair: i for i, pair in enumerate(sorted(set(pairs), reverse=True))}
    ranks = average_ranks(np.array([position[pair] for pair in pairs], dtype=float))
    for setting, rank in zip(settings, ranks):
        table[setting]["rank"] = float(rank)
    return table


def fmt_setting(setting: tuple) -> list[str]:
    model, alpha, tf, norm, fit_prior, stop_words = setting
    return [model, f"{alpha:g}", tf, str(norm), str(fit_prior), stop_words]




def ranked_table(table: dict[tuple, dict], metric: str, top: int, other: dict | None,
                 other_name: str) -> str:
    settings = sorted(table, key=lambda s: (table[s]["rank"], s != _current()))
    shown = settings[:top]
    if _current() in table and _current() not in shown:
        shown.append(_current())
    header = ["rank", "model", "alpha", "tf", "norm", "fit_prior", "stop_words"]
    if metric == "auc":
        header += ["AUC", "±", "accuracy", "±"]
    else:
        header += ["accuracy", "±"]
    if other is not None:
        header.append(f"rank {other_name}")
    rows = []
    for s in shown:
        r = table[s]
        row = [f"{r['rank']:g}"] + fmt_setting(s)
        if metric == "auc":
            row += [f"{r['auc']:.5f}", f"{r['auc_std']:.5f}"]
        row += [f"{r['accuracy']:.4f}", f"{r['accuracy_std']:.4f}"]
        if other is not None:
            row.append(f"{other[s]['rank']:g}")
        if s == _current():
            row[0] += "*"
        rows.append(row)
    return _table(header, rows) + "\n* the current TextClassifier defaults"


def _current() -> tuple:
    return tuple(CURRENT[k] for k in KEYS)


# -- main ------------------------------------------------------------------------------------

def run(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    read, how = _reader()
    grid_size = int(np.prod([len(v) for v in GRID.values()]))
    say(f"grid: {grid_size} settings × {args.folds} folds per corpus; seed {args.seed}; "
        f"inputs: {how}")
    say(f"current TextClassifier defaults: {_describe(_current())}")
    tables: dict[str, dict] = {}
    commands: dict[str, dict] = {}
    data: dict[str, tuple] = {}
    with tempfile.TemporaryDirectory(prefix="textnb-tune-") as scratch:
        scratch = Path(scratch)
        if args.corpus in ("both", "20news"):
            directory = news_dir(args.news)
            t = time.perf_counter()
            docs, y, paths = load_20news(directory, "20news-bydate-train", read)
            say(f"\n20 Newsgroups: {len(docs)} training posts, {np.unique(y).size} groups "
                f"(read in {time.perf_counter() - t:.1f} s)")
            if not args.no_check:
                self_check(docs, y, args.jobs, args.seed)
                say("self-check: the composition scores as TextClassifier does")
            tables["20news"] = _cross_validate(docs, y, args, "accuracy")
            if args.command:
                commands["20news"] = command_cv(paths, y, args, scratch, "accuracy")
            data["20news"] = (directory, None)
            del docs
        if args.corpus in ("both", "spamassassin"):
            directory = spam_dir(args.spamassassin)
            t = time.perf_counter()
            docs, y, paths = load_spamassassin(directory, read)
            train, test = stratified_split(y, 0.7, args.seed)
            say(f"\nSpamAssassin: {len(docs)} messages ({int(np.sum(y == 'spam'))} spam); "
                f"tuning on the stratified 70 % part (seed {args.seed}): {train.size} messages "
                f"({int(np.sum(y[train] == 'spam'))} spam); {test.size} held out "
                f"(read in {time.perf_counter() - t:.1f} s)")
            if args.corpus == "spamassassin" and not args.no_check:
                self_check([docs[i] for i in train], y[train], args.jobs, args.seed)
                say("self-check: the composition scores as TextClassifier does")
            tables["spamassassin"] = _cross_validate([docs[i] for i in train], y[train], args,
                                                     "auc", positive="spam")
            if args.command:
                commands["spamassassin"] = command_cv([paths[i] for i in train], y[train], args,
                                                      scratch, "auc", positive="spam")
            data["spamassassin"] = (docs, y, train, test, paths)

        news, spam = tables.get("20news"), tables.get("spamassassin")
        if news:
            say(f"\n== 20 Newsgroups (train split), {args.folds}-fold CV accuracy: top {args.top} ==")
            say(ranked_table(news, "accuracy", args.top, spam, "SA"))
        if spam:
            say(f"\n== SpamAssassin (70 % part), {args.folds}-fold CV ROC AUC (ties: accuracy): "
                f"top {args.top} ==")
            say(ranked_table(spam, "auc", args.top, news, "20NG"))
        if commands:
            say(f"\n== The command at its defaults (textnb train / classify, fresh processes), "
                f"the same {args.folds} folds ==")
            say(command_table(commands, tables))
        best = None
        if news and spam:
            best = _both(news, spam, args.top)
        elif news or spam:
            only = news or spam
            best = min(only, key=lambda s: only[s]["rank"])
        if best is not None:
            say(f"\nrecommended default: {_describe(best)}")
            changed = {k: (CURRENT[k], v) for k, v in zip(KEYS, best) if CURRENT[k] != v}
            say("change from the current defaults: " + (", ".join(
                f"{k} {a!r} → {b!r}" for k, (a, b) in changed.items()) or "none"))
        if args.final_test and best is not None:
            _final_test(best, data, args, scratch, read)
    if args.json:
        args.json.write_text(json.dumps({
            "seed": args.seed, "folds": args.folds, "inputs": how, "keys": KEYS,
            "recommended": list(best) if best else None,
            "results": {corpus: [{**dict(zip(KEYS, s)), **r} for s, r in table.items()]
                        for corpus, table in tables.items()},
            "command": commands}, indent=1) + "\n")
    say(f"\ntotal time {time.perf_counter() - started:.0f} s")


def _cross_validate(docs: list, y: np.ndarray, args: argparse.Namespace, metric: str,
                    positive: str | None = None) -> dict[tuple, dict]:
    folds = stratified_folds(y, args.folds, args.seed)
    t = time.perf_counter()
    tokens = {s: tokenize(docs, s, args.jobs) for s in GRID["stop_words"]}
    say(f"tokenized once per stop-word setting in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    results = score_grid(tokens, y, folds, metric, positive)
    say(f"scored {len(results)} settings × {args.folds} folds in {time.perf_counter() - t:.1f} s")
    return summarise(results, metric)


def _both(news: dict, spam: dict, top: int) -> tuple:
    settings = sorted(news, key=lambda s: ((news[s]["rank"] + spam[s]["rank"]) / 2,
                                           -news[s]["accuracy"], -spam[s]["auc"]))
    shown = settings[:top]
    # The current defaults, when the grid holds them (not where a default is one the grid
    # does not vary, such as stop_words="auto").
    if _current() not in shown and _current() in news and _current() in spam:
        shown.append(_current())
    rows = []
    for s in shown:
        mean = (news[s]["rank"] + spam[s]["rank"]) / 2
        label = f"{mean:g}" + ("*" if s == _current() else "")
        rows.append([label, *fmt_setting(s), f"{news[s]['rank']:g}", f"{news[s]['accuracy']:.4f}",
                     f"{spam[s]['rank']:g}", f"{spam[s]['auc']:.5f}", f"{spam[s]['accuracy']:.4f}"])
    say(f"\n== Both corpora: best mean rank, top {top} ==")
    say(_table(["mean rank", "model", "alpha", "tf", "norm", "fit_prior", "stop_words",
                "rank 20NG", "20NG acc", "rank SA", "SA AUC", "SA acc"], rows)
        + "\n* the current TextClassifier defaults")
    return settings[0]


def _final_test(best: tuple, data: dict, args: argparse.Namespace, scratch: Path, read) -> None:
    say("\n== Final test on the untouched parts (information only; chose nothing) ==")
    rows = []
    for corpus in data:
        if corpus == "20news":
            directory, _ = data[corpus]
            train_docs, y_train, train_paths = load_20news(directory, "20news-bydate-train", read)
            test_docs, y_test, test_paths = load_20news(directory, "20news-bydate-test", read)
        else:
            docs, y, train, test, paths = data[corpus]
            train_docs, y_train = [docs[i] for i in train], y[train]
            test_docs, y_test = [docs[i] for i in test], y[test]
            train_paths, test_paths = [paths[i] for i in train], [paths[i] for i in test]
        for name, setting in (("recommended", best), ("current default", _current())):
            classifier = TextClassifier(**dict(zip(KEYS, setting)), n_jobs=args.jobs)
            classifier.fit(train_docs, y_train)
            jll = classifier.predict_joint_log_proba(test_docs)
            predicted = classifier.classes_[np.argmax(jll, axis=1)]
            accuracy = float(np.mean(predicted == y_test))
            auc = ""
            if corpus == "spamassassin":
                column = int(np.searchsorted(classifier.classes_, "spam"))
                auc = f"{roc_auc(y_test == 'spam', jll[:, column] - jll[:, 1 - column]):.5f}"
            rows.append([corpus, name, _describe(setting), f"{accuracy:.4f}", auc])
        if args.command:
            run = command_run(scratch, {label: [p for p, c in zip(train_paths, y_train) if c == label]
                                        for label in np.unique(y_train)}, test_paths)
            auc = (f"{roc_auc(y_test == 'spam', run.positive_log_odds('spam')):.5f}"
                   if corpus == "spamassassin" else "")
            rows.append([corpus, "the command", "textnb train / textnb classify, defaults",
                         f"{np.mean(run.labels == y_test):.4f}", auc])
    say(_table(["corpus", "setting", "parameters", "accuracy", "AUC"], rows))


def command_cv(paths: list[Path], y: np.ndarray, args: argparse.Namespace, scratch: Path,
               metric: str, positive: str | None = None) -> dict:
    """The command at its defaults on the grid's folds: ``textnb train`` on each fold's
    training documents, ``textnb classify`` of its held-out ones; accuracy of the labels, and
    with ``positive`` the ROC AUC of its log-odds, fold by fold."""
    folds = stratified_folds(y, args.folds, args.seed)
    scores: dict[str, list[float]] = {"accuracy": [], "auc": []}
    t = time.perf_counter()
    for fold in range(args.folds):
        held = folds == fold
        run = command_run(scratch, {label: [p for p, c, h in zip(paths, y, held) if c == label and not h]
                                    for label in np.unique(y)},
                          [p for p, h in zip(paths, held) if h])
        scores["accuracy"].append(float(np.mean(run.labels == y[held])))
        if positive is not None:
            scores["auc"].append(roc_auc(y[held] == positive, run.positive_log_odds(positive)))
    say(f"the command on {args.folds} folds in {time.perf_counter() - t:.1f} s")
    return {name: float(np.mean(v)) for name, v in scores.items() if v} | {
        name + "_std": float(np.std(v)) for name, v in scores.items() if v} | {"metric": metric}


def command_table(commands: dict[str, dict], tables: dict[str, dict]) -> str:
    """The command's mean CV score on each corpus beside the grid's: where it would rank."""
    rows = []
    for corpus, r in commands.items():
        metric = r["metric"]
        grid = [t[metric] for t in tables[corpus].values()]
        better = sum(g > round(r[metric], 6) for g in map(lambda v: round(v, 6), grid))
        rows.append([corpus, f"{r[metric]:.5f}", f"{r[metric + '_std']:.5f}",
                     f"{r['accuracy']:.4f}", f"{better + 1} of {len(grid) + 1}",
                     f"{max(grid):.5f}"])
    return _table(["corpus", "score", "±", "accuracy", "rank among the grid", "grid's best"],
                  rows) + "\nscore: accuracy (20 Newsgroups), ROC AUC of the log-odds (SpamAssassin)"


def _describe(setting: tuple) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in zip(KEYS, setting))


if __name__ == "__main__":
    sys.exit(main())
