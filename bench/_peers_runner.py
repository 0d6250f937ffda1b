"""The peers of bench.peers, one process a step, run by the peers' Python (its own virtual
environment): it imports the standard library, numpy and the peer's package only, never
textnb or bench, so that the step's wall time and peak RSS, measured from outside, are the
peer's own.

    python _peers_runner.py check SYSTEM                          # prints the package's version
    python _peers_runner.py train SYSTEM SETTINGS LISTING MODEL   # MODEL: a new directory
    python _peers_runner.py classify SYSTEM MODEL LISTING OUT
    python _peers_runner.py tune SYSTEM GRID LISTING VALIDATION OUT

LISTING: one document a line, ``label<TAB>path`` (classify ignores the label). SETTINGS: a
JSON object; GRID: a JSON list of them. OUT (classify): one line a document,
``label<TAB>score``, the predicted label and, with two classes, the margin of the class last in
sorted order over the other (log-odds, decision value or raw score: higher is more of that
class), empty with more; tune writes one JSON line a setting: the setting, its seconds and the
validation documents' labels and scores so.

Every system reads the files' bytes as latin-1 (which never fails), as scikit-learn's
fetch_20newsgroups does. Vowpal Wabbit and fastText take text cut into tokens by white space:
both get the lower-cased words and single punctuation marks (``\\w+|[^\\w\\s]``), fastText's own
examples' preprocessing.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# system → (the module it imports, the distribution that installs it)
PACKAGES = {"sklearn-nb": ("sklearn", "scikit-learn"), "sklearn-sgd": ("sklearn", "scikit-learn"),
            "nblr": ("sklearn", "scikit-learn"), "vw": ("vowpalwabbit", "vowpalwabbit"),
            "fasttext": ("fasttext", "fasttext-wheel")}
TOKEN = re.compile(r"\w+|[^\w\s]")
VW_SPECIAL = {":": "COLON", "|": "PIPE"}   # a feature name holds neither
THREADS = os.cpu_count() or 1              # fastText's threads: every core, as textnb's workers


def read_listing(path: str) -> tuple[list[str], list[str]]:
    """(labels, texts) of a listing's documents."""
    labels, texts = [], []
    for line in Path(path).read_text().splitlines():
        label, _, source = line.partition("\t")
        labels.append(label)
        texts.append(Path(source).read_bytes().decode("latin-1"))
    return labels, texts


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def margin(classes, values: np.ndarray) -> np.ndarray | None:
    """Two classes: the last class's column minus the first's; else None."""
    return values[:, 1] - values[:, 0] if len(classes) == 2 else None


# -- scikit-learn ----------------------------------------------------------------------------

def sklearn_fit(system: str, labels: list[str], texts: list[str]):
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.linear_model import LogisticRegression, SGDClassifier
    from sklearn.naive_bayes import MultinomialNB
    y = np.array(labels)
    if system == "sklearn-nb":
        vectorizer = CountVectorizer()
        return vectorizer, MultinomialNB().fit(vectorizer.fit_transform(texts), y)
    if system == "sklearn-sgd":
        vectorizer = TfidfVectorizer(ngram_range=(1, 2))
        return vectorizer, SGDClassifier(loss="modified_huber", random_state=0).fit(
            vectorizer.fit_transform(texts), y)
    # NB-weighted logistic regression (Wang & Manning 2012): binary words and pairs scaled by
    # the log-count ratio r = log((p/|p|₁) / (q/|q|₁)), p and q the feature counts of the class
    # and of the rest plus α = 1; one regression a class (one for two classes). The scaling is
    # folded into the weights, (x∘r)·w = x·(r∘w), so that the model holds one row a class.
    vectorizer = CountVectorizer(ngram_range=(1, 2), binary=True)
    X = vectorizer.fit_transform(texts).tocsr()
    classes = np.unique(y)
    rows, bias = [], []
    for c in classes[1:] if classes.size == 2 else classes:
        p = 1.0 + np.asarray(X[y == c].sum(axis=0)).ravel()
        q = 1.0 + np.asarray(X[y != c].sum(axis=0)).ravel()
        r = np.log(p / p.sum()) - np.log(q / q.sum())
        lr = LogisticRegression(solver="liblinear", dual=True).fit(X.multiply(r).tocsr(), y == c)
        rows.append(r * lr.coef_.ravel())
        bias.append(lr.intercept_[0])
    return vectorizer, {"classes": classes, "W": np.array(rows), "b": np.array(bias)}


def sklearn_predict(model, texts: list[str]) -> tuple[list[str], np.ndarray | None]:
    vectorizer, estimator = model
    X = vectorizer.transform(texts)
    if isinstance(estimator, dict):                      # the NB-weighted regression
        classes = estimator["classes"]
        values = X @ estimator["W"].T + estimator["b"]
        if classes.size == 2:
            return list(classes[(values[:, 0] > 0).astype(int)]), values[:, 0]
        return list(classes[values.argmax(axis=1)]), None
    classes = estimator.classes_
    if hasattr(estimator, "predict_log_proba") and not hasattr(estimator, "decision_function"):
        values = estimator.predict_log_proba(X)          # MultinomialNB
    else:
        values = estimator.decision_function(X)
        if values.ndim == 1:
            values = np.c_[-values, values] / 2          # two classes: last minus first
    return list(classes[values.argmax(axis=1)]), margin(classes, values)


# -- Vowpal Wabbit ---------------------------------------------------------------------------

def vw_lines(texts: list[str], targets: list[str] | None = None) -> str:
    features = (" ".join(VW_SPECIAL.get(t, t) for t in tokens(text)) for text in texts)
    return "".join(f"{'' if targets is None else targets[i]} |w {f}\n"
                   for i, f in enumerate(features))


def vw_fit(settings: dict, labels: list[str], texts: list[str], model: Path) -> None:
    from vowpalwabbit import Workspace
    classes = sorted(set(labels))
    binary = len(classes) == 2
    targets = ([("1" if label == classes[1] else "-1") for label in labels] if binary
               else [str(classes.index(label) + 1) for label in labels])
    (model / "classes.json").write_text(json.dumps(classes))
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "train.vw"
        data.write_text(vw_lines(texts, targets))
        args = (f"-d {data} -f {model / 'vw.model'} -b {settings['bits']} "
                f"-l {settings['learning_rate']} --passes {settings['passes']} --holdout_off "
                f"-c --cache_file {Path(scratch) / 'cache'} --loss_function logistic"
                + (f" --ngram w{settings['ngrams']}" if settings["ngrams"] > 1 else "")
                + ("" if binary else f" --oaa {len(classes)}"))
        Workspace(args, quiet=True).finish()


def vw_predict(model: Path, texts: list[str]) -> tuple[list[str], np.ndarray | None]:
    from vowpalwabbit import Workspace
    classes = json.loads((model / "classes.json").read_text())
    with tempfile.TemporaryDirectory() as scratch:
        data, out = Path(scratch) / "test.vw", Path(scratch) / "predictions"
        data.write_text(vw_lines(texts))
        # Two classes: the raw score (-r), which -p clips to ±50, tying hundreds of messages.
        output = "-r" if len(classes) == 2 else "-p"
        Workspace(f"-i {model / 'vw.model'} -t -d {data} {output} {out}", quiet=True).finish()
        values = np.array([float(line.split()[0]) for line in out.read_text().splitlines()])
    if len(classes) == 2:                        # the raw score of the last class
        return [classes[int(v > 0)] for v in values], values
    return [classes[int(v) - 1] for v in values], None


# -- fastText --------------------------------------------------------------------------------

def fasttext_fit(settings: dict, labels: list[str], texts: list[str], model: Path) -> None:
    import fasttext
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "train.txt"
        data.write_text("".join(f"__label__{label} {' '.join(tokens(text))}\n"
                                for label, text in zip(labels, texts)))
        fitted = fasttext.train_supervised(
            input=str(data), epoch=settings["epochs"], lr=settings["learning_rate"],
            wordNgrams=settings["ngrams"], bucket=settings["buckets"], thread=THREADS,
            verbose=0)
    fitted.save_model(str(model / "fasttext.bin"))


def fasttext_predict(model: Path, texts: list[str]) -> tuple[list[str], np.ndarray | None]:
    import fasttext
    fitted = fasttext.load_model(str(model / "fasttext.bin"))
    classes = sorted(label[len("__label__"):] for label in fitted.get_labels())
    # The binding's own call, a document at a time: FastText.predict's np.array(copy=False)
    # fails under numpy 2, and the binding's multilinePredict repeats a row's first probability.
    values = np.full((len(texts), len(classes)), -np.inf)
    for i, text in enumerate(texts):
        for p, name in fitted.f.predict(" ".join(tokens(text)) + "\n", -1, 0.0, "strict"):
            values[i, classes.index(name[len("__label__"):])] = np.log(max(p, 1e-300))
    return [classes[j] for j in values.argmax(axis=1)], margin(classes, values)


# -- the steps -------------------------------------------------------------------------------

def fit(system: str, settings: dict, labels: list[str], texts: list[str], model: Path) -> None:
    model.mkdir(parents=True, exist_ok=True)
    if system == "vw":
        vw_fit(settings, labels, texts, model)
    elif system == "fasttext":
        fasttext_fit(settings, labels, texts, model)
    else:
        with open(model / "model.pickle", "wb") as f:
            pickle.dump(sklearn_fit(system, labels, texts), f, protocol=pickle.HIGHEST_PROTOCOL)


def predict(system: str, model: Path, texts: list[str]) -> tuple[list[str], np.ndarray | None]:
    if system == "vw":
        return vw_predict(model, texts)
    if system == "fasttext":
        return fasttext_predict(model, texts)
    with open(model / "model.pickle", "rb") as f:
        return sklearn_predict(pickle.load(f), texts)


def write_predictions(out, labels: list[str], scores) -> None:
    for i, label in enumerate(labels):
        out.write(f"{label}\t{'' if scores is None else repr(float(scores[i]))}\n")


def main(argv: list[str]) -> int:
    step, system, *rest = argv
    if step == "check":
        import importlib
        import importlib.metadata
        module, distribution = PACKAGES[system]
        importlib.import_module(module)
        print(importlib.metadata.version(distribution))
    elif step == "train":
        settings, listing, model = rest
        fit(system, json.loads(settings), *read_listing(listing), Path(model))
    elif step == "classify":
        model, listing, out = rest
        labels, scores = predict(system, Path(model), read_listing(listing)[1])
        with open(out, "w") as f:
            write_predictions(f, labels, scores)
    elif step == "tune":
        grid, listing, validation, out = rest
        labels, texts = read_listing(listing)
        held = read_listing(validation)[1]
        with open(out, "w") as f, tempfile.TemporaryDirectory() as scratch:
            for n, settings in enumerate(json.loads(grid)):
                t0 = time.perf_counter()
                try:
                    fit(system, settings, labels, texts, Path(scratch) / str(n))
                    predicted, scores = predict(system, Path(scratch) / str(n), held)
                except Exception as error:   # a setting that diverges (fastText: NaN) loses
                    f.write(json.dumps({"settings": settings, "error": str(error)}) + "\n")
                    continue
                f.write(json.dumps({"settings": settings, "seconds": time.perf_counter() - t0,
                                    "labels": predicted,
                                    "scores": None if scores is None else scores.tolist()}) + "\n")
                f.flush()
    else:
        raise SystemExit(f"unknown step {step!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
