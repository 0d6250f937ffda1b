"""Benchmark expectation–maximisation in textnb: semi-supervised NB and clustering.

1. 20 Newsgroups (bydate): n = 1, 3, 10, 30, 100 labeled training posts per class (the first
   n of each group by article number, issue #42's draw; ``--draw random``: drawn with
   ``--seed``), the rest of the 11314 training posts unlabeled; accuracy on the 7532 test posts
   of the supervised multinomial NB on the labeled posts alone and of EM
   (:class:`textnb.nb.em.SemiSupervisedNB`, Nigam et al., 2000). λ, the weight of the unlabeled
   posts, is chosen by 3-fold CV on the labeled posts among ``textnb.nb.em.WEIGHTS`` when every
   class has at least 3 (the held-out fold stays in the unlabeled pool), else λ = 1.
2. SpamAssassin (bench.spam's seeded 70/30 split): 20 labeled messages per class, the rest of
   the training part unlabeled; accuracy. And issue #42's mail case (``--only mail``), the
   command alone: 30 spam and 30 ham labeled, 400 spam and 1,000 ham unlabeled (drawn with
   ``--seed``), the other messages the test; accuracy and the test ham whose verdict is spam.
3. Clustering the 20 Newsgroups training posts into 20: NMI, adjusted Rand index and purity of
   :class:`textnb.nb.em.MixtureNB` (the model ``textnb cluster`` fits) and, when scikit-learn is
   installed, of its text-clustering example (TfidfVectorizer(max_df=0.5, min_df=5,
   stop_words="english") + KMeans(n_init=5)), with their times.

Terms (the library rows): the TextClassifier tokenizer (NLTK stop words) over all training
posts, min_df 2 for clustering; raw counts; α = ``--alpha`` (default 0.01: α = 1 over 172,000
terms made EM put nearly every post in one class — 16% accuracy at 10 labels per class, 4% with
λ = 0.1 — while 0.01 and 0.001 gave about 60%; measured with textnb.nb.em at seed 0).

Beside each library row, the command a user types, at its defaults (``--no-command`` skips
them): ``textnb train labeled/`` and ``textnb train labeled/ --unlabeled unlabeled/`` (the
labeled posts one directory a class, the unlabeled ones in one directory), each followed by
``textnb classify`` of the test posts (``--unlabeled`` chooses λ and α by CV on the labeled
posts, or plain training: :mod:`textnb.semisupervised`); and ``textnb cluster -k 20`` of the
training posts (its
``--seed`` the study's, so that runs repeat). Their times are the commands' wall times, start-up
and reading the files included; the row also gives plain ``train``'s, and the EM line that
``train --unlabeled`` printed (its choice).

Run (from the repository root)::

    python -m bench.em --quick      # n = 10 only, 20NG and spam, one clustering start: 5 min
    python -m bench.em --quick --only 20ng --draw random --seed 1   # another draw
    python -m bench.em --only mail  # the mail case: two trainings and classifications
    python -m bench.em              # everything (the library's rows took about 20 minutes on
                                    # 2 cores; the command's add a few)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import BenchError, args as options
from bench.common.corpora import list_spam, news_dir, news_files, spam_dir
from bench.common.measure import measure
from bench.common.splits import stratified_folds, stratified_split
from bench.common.systems import command_run, latin1, textnb_command
from textnb.classifier import TextClassifier
from textnb.cluster import CLUSTER_ALPHA
from textnb.nb.em import WEIGHTS, MixtureNB, SemiSupervisedNB
from textnb.evaluation.metrics import adjusted_rand_index, normalized_mutual_info, purity
from textnb.nb.discrete import MultinomialNB
from textnb.text.vocabulary import Vocabulary, to_scipy

LABELED = (1, 3, 10, 30, 100)
CV_FOLDS = 3
CHUNK = 2000  # posts tokenized at a time: the token lists are counted as they come


def read_20ng(data: Path | None, archive: Path | None):
    """(train texts, groups, paths; test texts, groups, paths) of 20 Newsgroups bydate."""
    directory = news_dir(data, archive)
    out = []
    for split in ("20news-bydate-train", "20news-bydate-test"):
        paths, labels = news_files(directory / split)
        out += [[p.read_bytes() for p in paths], np.array(labels), paths]
    return tuple(out)


def read_spam(data: Path | None, archive: Path | None):
    """The same, of bench.spam's 70/30 split of seed 0 of the SpamAssassin corpus."""
    paths, y = list_spam(spam_dir(data, archive))
    train, test = stratified_split(y, 0.7, 0)
    texts = [Path(p).read_bytes() for p in paths]
    return ([texts[i] for i in train], y[train], [Path(paths[i]) for i in train],
            [texts[i] for i in test], y[test], [Path(paths[i]) for i in test])


def tokens(classifier: TextClassifier, texts):
    """The token lists of ``texts``, tokenized a chunk at a time."""
    for start in range(0, len(texts), CHUNK):
        yield from classifier.tokenize(texts[start:start + CHUNK])


def matrices(train_texts, test_texts, min_df: int = 1):
    """Raw count matrices (scipy CSR) over the training posts' vocabulary."""
    clf = TextClassifier(model="multinomial", norm=None)
    vocabulary = Vocabulary(min_df=min_df)
    X = vocabulary.fit_count(tokens(clf, train_texts))
    T = vocabulary.count(tokens(clf, test_texts))
    return to_scipy(X), to_scipy(T), vocabulary


def pick_labeled(y: np.ndarray, n: int, rng) -> np.ndarray:
    return np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), n, replace=False)
                                   for c in np.unique(y)]))


def pick_first(y: np.ndarray, paths: list[Path], n: int) -> np.ndarray:
    """The first n posts of each group by article number (the file's name; shorter first, so
    numbers sort as numbers)."""
    def number(i: int) -> tuple[int, str]:
        return len(paths[i].name), paths[i].name
    return np.sort(np.concatenate([sorted(np.flatnonzero(y == c), key=number)[:n]
                                   for c in np.unique(y)]))


def em_fit(X, y_semi, weight: float, alpha: float) -> SemiSupervisedNB:
    return SemiSupervisedNB(alpha=alpha, unlabeled_weight=weight).fit(X, y_semi)


def choose_weight(X, y, labeled, alpha: float, seed: int) -> tuple[float, dict]:
    """λ by CV on the labeled posts; the held-out fold joins the unlabeled pool."""
    folds = stratified_folds(y[labeled], CV_FOLDS, seed)
    scores = {}
    for weight in WEIGHTS:
        hits = 0
        for k in range(CV_FOLDS):
            y_semi = np.full(len(y), -1, dtype=object)
            kept = labeled[folds != k]
            y_semi[kept] = y[kept]
            held = labeled[folds == k]
            model = em_fit(X, y_semi, weight, alpha)
            hits += int((model.predict(X[held]) == y[held]).sum())
        scores[weight] = hits / len(labeled)
    best = max(WEIGHTS, key=lambda w: (scores[w], w))
    return best, scores


def semi_supervised(name, X, y, T, t, counts, alpha, seed, command=None,
                    first: list[Path] | None = None) -> list[list[str]]:
    """A row of the library (α, λ by CV) for each n, and with ``command`` = (training paths,
    test paths, scratch) a row of the command at its defaults on the same labeled posts. The
    labeled posts: the first n of each class by ``first``'s names (article numbers), or
    drawn with ``seed``."""
    rows = []
    for n in counts:
        labeled = (pick_labeled(y, n, np.random.default_rng(seed)) if first is None
                   else pick_first(y, first, n))
        supervised = MultinomialNB(alpha=alpha).fit(X[labeled], y[labeled])
        acc_sup = float((supervised.predict(T) == t).mean())
        start = time.perf_counter()
        if n >= CV_FOLDS:
            weight, scores = choose_weight(X, y, labeled, alpha, seed)
            how = "CV " + " ".join(f"{w}:{s:.3f}" for w, s in scores.items())
        else:
            weight, how = 1.0, "fixed"
        y_semi = np.full(len(y), -1, dtype=object)
        y_semi[labeled] = y[labeled]
        model = em_fit(X, y_semi, weight, alpha)
        seconds = time.perf_counter() - start
        acc_em = float((model.predict(T) == t).mean())
        fixed = {w: float((em_fit(X, y_semi, w, alpha).predict(T) == t).mean())
                 for w in ((1.0, 0.1) if n >= CV_FOLDS else (0.1,))}
        rows.append([name, f"library, α={alpha:g}", str(n), str(len(labeled)), f"{acc_sup:.2%}",
                     f"{acc_em:.2%}", f"{(acc_em - acc_sup) * 100:+.1f}", f"{weight}",
                     str(model.n_iter_), f"{seconds:.1f}",
                     " ".join(f"λ={w}:{a:.2%}" for w, a in fixed.items()), how])
        print("  " + " | ".join(rows[-1]), flush=True)
        if command is not None:
            rows.append(command_row(name, n, labeled, y, t, *command))
            print("  " + " | ".join(rows[-1]), flush=True)
    return rows


def command_row(name, n, labeled, y, t, train_paths, test_paths, scratch) -> list[str]:
    """``textnb train labeled/`` and ``textnb train labeled/ --unlabeled unlabeled/``, at their
    defaults, each then ``textnb classify`` of the test posts: their accuracy."""
    groups = {label: [train_paths[i] for i in labeled if y[i] == label] for label in np.unique(y)}
    supervised = command_run(scratch, groups, test_paths)
    unlabeled = scratch / f"unlabeled-{name}-{n}"
    unlabeled.mkdir()
    chosen = set(labeled.tolist())
    for i, path in enumerate(train_paths):
        if i not in chosen:
            (unlabeled / f"{i:06d}").symlink_to(Path(path).resolve())
    semi = command_run(scratch, groups, test_paths, train_options=["--unlabeled", str(unlabeled)])
    acc_sup = float(np.mean(supervised.labels == t))
    acc_em = float(np.mean(semi.labels == t))
    return [name, "command, defaults", str(n), str(len(labeled)), f"{acc_sup:.2%}",
            f"{acc_em:.2%}", f"{(acc_em - acc_sup) * 100:+.1f}", "CV", "-",
            f"{semi.train.wall:.1f} (train {supervised.train.wall:.1f})", "-", em_printed(semi)]


def em_printed(run) -> str:
    """The EM line ``train --unlabeled`` printed: its choice."""
    return " ".join(next((line for line in run.printed.splitlines() if line.startswith("EM ")),
                         "(no EM line)").split())


def mail_case(data, archive, seed: int, scratch: Path) -> list[list[str]]:
    """Issue #42's mail case, the command at its defaults: 30 spam and 30 ham labeled, 400 spam
    and 1,000 ham unlabeled, the rest the test; ``textnb train`` with and without
    ``--unlabeled``, then ``textnb classify``: accuracy and test ham whose verdict is spam."""
    paths, y = list_spam(spam_dir(data, archive))
    rng = np.random.default_rng(seed)
    spam = rng.permutation(np.flatnonzero(y == "spam"))
    ham = rng.permutation(np.flatnonzero(y != "spam"))
    labeled = {"spam": spam[:30], "ham": ham[:30]}
    unlabeled = np.concatenate([spam[30:430], ham[30:1030]])
    test = np.sort(np.concatenate([spam[430:], ham[1030:]]))
    groups = {c: [Path(paths[i]) for i in rows] for c, rows in labeled.items()}
    folder = scratch / "mail-unlabeled"
    folder.mkdir()
    for i in unlabeled:
        (folder / f"{i:06d}").symlink_to(Path(paths[i]).resolve())
    t = np.where(y[test] == "spam", "spam", "ham")
    rows = []
    for how, extra in (("train", []), ("train --unlabeled", ["--unlabeled", str(folder)])):
        run = command_run(scratch, groups, [Path(paths[i]) for i in test], train_options=extra)
        ham_spam = int(np.sum((run.verdicts == "spam") & (t == "ham")))
        n_ham = int(np.sum(t == "ham"))
        rows.append(["mail 30+30, 1,400 unlabeled", how, f"{np.mean(run.labels == t):.2%}",
                     f"{ham_spam} of {n_ham} ({ham_spam / n_ham:.2%})",
                     f"{run.train.wall:.1f}", em_printed(run) if options else "-"])
        print("  " + " | ".join(rows[-1]), flush=True)
    return rows


def clustering(X, y, texts, k, n_init, seed, alpha, paths=None, scratch=None) -> list[list[str]]:
    rows = []
    start = time.perf_counter()
    mixture = MixtureNB(n_clusters=k, alpha=alpha, n_init=n_init, random_state=seed).fit(X)
    seconds = time.perf_counter() - start
    rows.append(_cluster_row(f"textnb MixtureNB a={alpha} n_init={n_init}", y,
                             mixture.labels_, seconds))
    print("  " + " | ".join(rows[-1]), flush=True)
    if paths is not None:
        rows.append(command_cluster(paths, y, k, seed, scratch))
        print("  " + " | ".join(rows[-1]), flush=True)
    try:
        from sklearn.cluster import KMeans
        from sklearn.feature_extraction.text import TfidfVectorizer
    except ImportError:
        print("  (scikit-learn not installed: no KMeans row)")
        return rows
    start = time.perf_counter()
    tfidf = TfidfVectorizer(max_df=0.5, min_df=5, stop_words="english").fit_transform(latin1(texts))
    labels = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(tfidf)
    seconds = time.perf_counter() - start
    rows.append(_cluster_row(f"sklearn tfidf+KMeans n_init={n_init}", y, labels, seconds))
    print("  " + " | ".join(rows[-1]), flush=True)
    return rows


def command_cluster(paths: list[Path], y: np.ndarray, k: int, seed: int, scratch: Path) -> list[str]:
    """``textnb cluster -k K --format json`` of the training posts' group directories, at its
    defaults (``--seed`` only, so that runs repeat)."""
    groups = sorted({Path(p).parent for p in paths})
    out = scratch / "clusters.json"
    usage = measure([*textnb_command(), "cluster", "-q", "-k", str(k), "--seed", str(seed),
                     "-m", str(scratch / "clusters.model"), "--format", "json",
                     *map(str, groups)], out=out)
    cluster = {}
    for line in out.read_text().splitlines():
        record = json.loads(line)
        if "source" in record:
            cluster[record["source"]] = record["label"]
    missing = [p for p in paths if str(p) not in cluster]
    if missing:
        raise BenchError(f"textnb cluster gave no cluster for {len(missing)} posts, e.g. {missing[0]}")
    return _cluster_row(f"textnb cluster -k {k} (command, defaults)", y,
                        np.array([cluster[str(p)] for p in paths]), usage.wall)


def _cluster_row(name, y, labels, seconds) -> list[str]:
    return [name, f"{normalized_mutual_info(y, labels):.3f}",
            f"{adjusted_rand_index(y, labels):.3f}", f"{purity(y, labels):.3f}", f"{seconds:.1f}"]


def table(header, rows) -> str:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in [header] + rows]
    return "\n".join(lines[:1] + ["  ".join("-" * w for w in widths)] + lines[1:])


def main(argv=None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--quick", action="store_true", help="n = 10 only; one clustering start")
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=["20ng", "spam", "mail", "cluster"], action="append")
    parser.add_argument("--draw", choices=["first", "random"], default="first",
                        help="20NG's labeled posts: the first n a group by article number "
                             "(default), or drawn with --seed")
    options.news_data(parser, "--news-data", archive=False)
    options.spam_data(parser, "--spam-data")
    options.no_command(parser)
    args = parser.parse_args(argv)
    return options.run("bench.em", lambda: run(args))


def run(args) -> None:
    parts = args.only or ["20ng", "spam", "cluster"]
    counts = (10,) if args.quick else LABELED
    header = ["corpus", "system", "n/class", "labeled", "supervised", "EM", "gain", "λ", "iter",
              "EM s", "EM at fixed λ", "λ choice"]
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        rows, cluster_rows = [], []
        if "20ng" in parts or "cluster" in parts:
            train, y, train_paths, test, t, test_paths = read_20ng(args.news_data, None)
            if "20ng" in parts:
                X, T, vocabulary = matrices(train, test)
                print(f"20NG: {X.shape[0]} training posts, {X.shape[1]} terms", flush=True)
                command = (train_paths, test_paths, scratch) if args.command else None
                rows += semi_supervised(f"20NG ({args.draw})", X, y, T, t, counts, args.alpha,
                                        args.seed, command,
                                        train_paths if args.draw == "first" else None)
            if "cluster" in parts:
                X, _, vocabulary = matrices(train, test[:1], min_df=2)
                print(f"clustering 20NG train: {X.shape[0]} posts, {X.shape[1]} terms", flush=True)
                cluster_rows = clustering(X, y, train, 20 if len(set(y)) >= 20 else len(set(y)),
                                          1 if args.quick else 5, args.seed, CLUSTER_ALPHA,
                                          train_paths if args.command else None, scratch)
        if "spam" in parts:
            train, y, train_paths, test, t, test_paths = read_spam(args.spam_data, args.archive)
            X, T, _ = matrices(train, test)
            print(f"SpamAssassin: {X.shape[0]} training messages, {X.shape[1]} terms", flush=True)
            command = (train_paths, test_paths, scratch) if args.command else None
            rows += semi_supervised("SpamAssassin", X, y, T, t, (20,), args.alpha, args.seed,
                                    command)
        if "mail" in parts:
            mail_rows = mail_case(args.spam_data, args.archive, args.seed, scratch)
    if rows:
        print("\nsemi-supervised (accuracy on the test set)\n" + table(header, rows))
    if "mail" in parts:
        print("\nmail, the command at its defaults (test set)\n" + table(
            ["case", "command", "accuracy", "ham called spam", "train s", "EM choice"], mail_rows))
    if cluster_rows:
        print("\nclustering 20NG train\n" +
              table(["system", "NMI", "ARI", "purity", "seconds"], cluster_rows))


if __name__ == "__main__":
    sys.exit(main())
