#!/usr/bin/env python3
"""Crafted model files against every reader: which refuse each, in how long, in how much memory.

What it measures
----------------
:func:`crafted` writes 146 model files, each a small textnb model (two classes, spam and
ham, trained on a dozen texts) changed in one way: sizes beyond the limits, deep or huge JSON,
counts and settings at and beyond their extremes, NaN and infinities, members twice, missing or
unknown, .npy headers of pickles, of huge or nested shapes, zips truncated, re-packed,
encrypted, with bytes before, after or between their members — and valid files of every format
(1, 2, 3, a hashed vocabulary, big-endian arrays, Fortran order, a 4 MB vocabulary of 360,000
terms, settings at their limits). Each says whether a reader must score it or refuse it.

Each file is then read by every reader, each in a fresh process (``python -m textnb`` or
``python -c``), the message :data:`MESSAGE` on standard input:

* ``load_model`` — :func:`textnb.store.text_model.load_model`;
* ``filter`` — ``textnb filter`` (the numpy-free scorer, the mail filter's);
* ``classify`` — ``textnb classify -``;
* ``info`` — ``textnb info``;
* ``serve`` — ``textnb.serve.model.Model(path)``, the daemon's load.

Printed: per file, each reader's verdict (scored, or refused: one line naming the file), its
wall time and its peak RSS (``wait4``'s ru_maxrss), whether every reader agrees with the file's
expectation; then the slowest and largest file per reader. The bar: every reader refuses the
same files, each within 1 s and 200 MB.

tests/test_hostile_models.py reads the same 146 files with the same readers, in processes forked
from the test, and fails on a disagreement, a verdict not expected, or a reader over 1 s of CPU
or over 140 MB above the test's own memory.

Run::

    python -m bench.hostile_models                 # ≈ 4 minutes on 2 cores
    python -m bench.hostile_models --only wide     # the cases whose name holds "wide"
    python -m bench.hostile_models --python ../before/.venv/bin/python --only bomb
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

MESSAGE = (b"From: a@example.com\nSubject: cheap pills\n\n"
           b"win cheap money now, meeting at noon with notes\n")
SPAM = ["cheap pills now", "cheap money now!!! $500", "win money, win cheap pills",
        "pills pills cheap", "money for nothing, win now", "cheap cheap offer win"]
HAM = ["meeting at noon", "lunch at noon with notes", "notes from the meeting",
       "the agenda for monday", "noon lunch with the team", "minutes of the meeting"]
READERS = ("load_model", "filter", "classify", "info", "serve")


class Case:
    """A crafted file: its name, its path, whether readers must score it (``accept``) and, if
    not, what their one line of refusal says (``reason``, a regular expression)."""

    def __init__(self, name: str, path: Path, accept: bool, reason: str = "",
                 two_classes: bool = True) -> None:
        self.name, self.path, self.accept, self.reason = name, path, accept, reason
        self.two_classes = two_classes  # serve reads two-class models only


# -- writing files ------------------------------------------------------------------------------

def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def npy_header(descr: str, shape: Any, fortran: bool = False, version: int = 1,
               extra: str = "") -> bytes:
    """A .npy header as numpy writes it (dict, spaces, line break), whatever it says."""
    text = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, {extra}}}"
    text += " " * (63 - (len(text) + 10) % 64) + "\n"
    width = 2 if version == 1 else 4
    return (b"\x93NUMPY" + bytes([version, 0]) + len(text).to_bytes(width, "little")
            + text.encode("latin-1"))


def members_of(path: Path) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(path) as archive:
        return [(name, archive.read(name)) for name in archive.namelist()]


def write_zip(path: Path, members: list[tuple[str, bytes]],
              compression: int = zipfile.ZIP_STORED) -> Path:
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # "Duplicate name": on purpose
        with zipfile.ZipFile(path, "w", compression) as archive:
            for name, data in members:
                archive.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data,
                                 compress_type=compression)
    return path


def edited(base: Path, target: Path, meta: Callable[[dict], Any] | None = None,
           arrays: dict[str, Callable[[np.ndarray], np.ndarray]] | None = None,
           drop: tuple[str, ...] = (), add: tuple[tuple[str, bytes], ...] = ()) -> Path:
    """A copy of ``base`` (valid CRCs) with meta.json edited in place by ``meta``, arrays
    replaced by a function of the old one, members dropped or added."""
    out = []
    for name, data in members_of(base):
        if name in drop:
            continue
        if name == "meta.json" and meta is not None:
            header = json.loads(data)
            meta(header)
            data = json.dumps(header).encode()
        elif name[:-4] in (arrays or {}):
            data = npy(arrays[name[:-4]](np.lib.format.read_array(io.BytesIO(data)).copy()))
        out.append((name, data))
    return write_zip(target, out + list(add))


def params(**changes: Any) -> Callable[[dict], None]:
    return lambda meta: meta["params"].update(changes)


def top(**changes: Any) -> Callable[[dict], None]:
    return lambda meta: meta.update(changes)


def without(*keys: str, of: str | None = None) -> Callable[[dict], None]:
    def change(meta: dict) -> None:
        for key in keys:
            del (meta[of] if of else meta)[key]
    return change


def raw_meta(base: Path, target: Path, data: bytes) -> Path:
    return write_zip(target, [(n, data if n == "meta.json" else d) for n, d in members_of(base)])


def bytes_edit(base: Path, target: Path, edit: Callable[[bytearray], Any]) -> Path:
    data = bytearray(base.read_bytes())
    edit(data)
    target.write_bytes(bytes(data))
    return target


def directory_entry(data: bytearray, member: str) -> int:
    """The offset of ``member``'s record in the zip's central directory."""
    at = data.index(b"PK\x01\x02")
    while data[at + 46:at + 46 + int.from_bytes(data[at + 28:at + 30], "little")] != member.encode():
        at = data.index(b"PK\x01\x02", at + 4)
    return at


def local_data(data: bytearray, member: str) -> int:
    """Where ``member``'s data starts."""
    at = int.from_bytes(data[directory_entry(data, member) + 42:][:4], "little")
    return at + 30 + int.from_bytes(data[at + 26:at + 28], "little") + int.from_bytes(
        data[at + 28:at + 30], "little")


def local_name(data: bytearray, member: str) -> int:
    """Where ``member``'s name starts in its local header."""
    return int.from_bytes(data[directory_entry(data, member) + 42:][:4], "little") + 30


def set_field(data: bytearray, member: str, offset: int, value: int, size: int = 2) -> None:
    at = directory_entry(data, member)
    data[at + offset:at + offset + size] = value.to_bytes(size, "little")


def save_v2(classifier: Any, path: Path, fortran: bool = False) -> Path:
    """Format 2, as save_model wrote it before format 3: dense counts and score weights."""
    from textnb.store import schema
    from textnb.store.text_model import saved_meta
    model = classifier.model_
    terms = "\n".join(classifier.vocabulary_.terms_).encode()
    ends = np.append(np.flatnonzero(np.frombuffer(terms, np.uint8) == 10), len(terms)) + 1
    bias, weights = model.decomposition()
    row = {label: i for i, label in enumerate(model.classes_.astype(str))}
    weights = np.asfortranarray(weights.T) if fortran else np.ascontiguousarray(weights.T)
    arrays = {"class_count": model.class_count_, "feature_count": model.feature_count_,
              "digests": classifier.digests_,
              "digest_classes": np.array([row[c] for c in classifier.digest_labels_], np.int64),
              "terms": np.frombuffer(terms, np.uint8), "term_ends": ends.astype(np.uint64),
              "score_bias": bias, "score_weights": weights}
    header = {"format": schema.FORMAT, "version": 2, "kind": schema.TEXT_CLASSIFIER,
              **saved_meta(classifier)}
    return write_zip(path, [("meta.json", json.dumps(header).encode())]
                     + [(f"{name}.npy", npy(array)) for name, array in arrays.items()])


def synthetic(path: Path, n_classes: int, n_terms: int, word: str = "t") -> Path:
    """A valid format-3 file of ``n_classes`` classes and ``n_terms`` terms, one count each."""
    from textnb import TextClassifier
    from textnb.store.text_model import saved_meta
    from textnb.store.schema import FORMAT, TEXT_CLASSIFIER, VERSION
    labels = (["ham", "spam"] if n_classes == 2 else [f"c{i:04d}" for i in range(n_classes)])
    terms = [f"{word}{i:07d}" for i in range(n_terms)]
    blob = "\n".join(terms).encode()
    ends = np.append(np.flatnonzero(np.frombuffer(blob, np.uint8) == 10), len(blob)) + 1
    clf = TextClassifier(stop_words="none", model="multinomial", alpha=1.0).fit(
        ["ham words", "spam words"], ["ham", "spam"])
    meta = {"format": FORMAT, "version": VERSION, "kind": TEXT_CLASSIFIER, **saved_meta(clf),
            "classes": labels}
    counts = np.ones(n_terms, np.uint8)
    classes = (np.arange(n_terms) % n_classes).astype(np.uint16)
    per_class = np.bincount(classes, minlength=n_classes).astype(float)
    a = np.log(per_class + n_terms)
    arrays = {"class_count": np.ones(n_classes), "digests": np.arange(n_classes, dtype=np.uint64),
              "digest_classes": np.arange(n_classes, dtype=np.uint16),
              "terms": np.frombuffer(blob, np.uint8), "term_ends": ends.astype(np.uint32),
              "count_indptr": np.arange(n_terms + 1, dtype=np.uint32), "count_classes": classes,
              "count_values": counts, "score_bias": np.full(n_classes, -np.log(n_classes)),
              "score_constants": np.array([a, -np.ones(n_classes)])}
    return write_zip(path, [("meta.json", json.dumps(meta).encode())]
                     + [(f"{name}.npy", npy(array)) for name, array in arrays.items()])


def _saved(classifier: Any, path: Path) -> Path:
    from textnb import save_model
    save_model(classifier, path)
    return path


# -- the cases ----------------------------------------------------------------------------------

def crafted(directory: str | os.PathLike) -> list[Case]:
    """Write the crafted files into ``directory``; their cases."""
    from textnb import TextClassifier, save_model
    from textnb.store import container, schema
    d = Path(directory)
    texts, labels = SPAM + HAM, ["spam"] * len(SPAM) + ["ham"] * len(HAM)
    good = _saved(TextClassifier(stop_words="none", spam_class="spam", training="full")
                  .fit(texts, labels), d / "good.model")
    onerror_clf = TextClassifier(stop_words="none", spam_class="spam", training="on-error",
                                 margin=2.0).fit(texts, labels)
    onerror = _saved(onerror_clf, d / "on-error.model")
    assert "digest_weights.npy" in dict(members_of(onerror))
    full = TextClassifier(stop_words="none", spam_class="spam", training="full").fit(texts, labels)
    v2 = save_v2(full, d / "v2.model")
    cases: list[Case] = []

    def case(name: str, accept: bool, reason: str = "", two_classes: bool = True) -> Path:
        path = d / f"{name}.model"
        cases.append(Case(name, path, accept, reason, two_classes))
        return path

    corrupt, cut = r"is corrupt \(", r"is truncated or corrupt \("
    large = r"is too large to read \("

    # Valid files of every format and shape: every reader scores them, and alike.
    shutil.copy(good, case("valid-format-3", True))
    shutil.copy(onerror, case("valid-trained-on-error", True))
    shutil.copy(v2, case("valid-format-2", True))
    save_v2(full, case("valid-format-2-fortran-weights", True), fortran=True)
    v1_members = [(n, b) for n, b in members_of(v2)
                  if n not in ("terms.npy", "term_ends.npy", "score_bias.npy", "score_weights.npy")]
    v1_meta = json.loads(dict(v1_members)["meta.json"])
    v1_meta.update(version=1, terms=full.vocabulary_.terms_)
    write_zip(case("valid-format-1", True),
              [(n, json.dumps(v1_meta).encode() if n == "meta.json" else b) for n, b in v1_members])
    save_model(TextClassifier(stop_words="none", spam_class="spam", training="full", hash_bits=10)
               .fit(texts, labels), case("valid-hashed-vocabulary", True))
    save_model(TextClassifier(stop_words="none", spam_class="spam", training="full",
                              ngram_range=(1, schema.MAX_NGRAM),
                              max_token_length=schema.MAX_TOKEN_LENGTH_LIMIT).fit(texts, labels),
               case("valid-settings-at-their-limits", True))
    edited(good, case("valid-alpha-at-its-limit", True), params(alpha=schema.MAX_ALPHA))
    edited(good, case("valid-alpha-tiny", True), params(alpha=5e-324))
    edited(good, case("valid-counts-at-2-53", True),
           arrays={"count_values": lambda a: np.where(a == a.max(), 2.0 ** 53, a)})
    edited(good, case("valid-n-jobs-64-runs-none", True), params(n_jobs=64))
    edited(good, case("valid-unknown-cutoffs-key", True),
           lambda meta: meta["cutoffs"].update(note="kept, read by nothing"))
    edited(good, case("valid-tuning-record", True), top(tuning={
        "metric": "macro_f1", "folds": 5, "candidates": 3, "best": {"mean": 0.9, "sd": 0.01},
        "top": [{"mean": 0.9, "sd": 0.01, "model": "complement"}]}))
    edited(good, case("valid-big-endian-arrays", True), arrays={
        name: (lambda a: a.astype(a.dtype.newbyteorder(">")))
        for name in ("class_count", "count_indptr", "count_classes", "count_values",
                     "score_bias", "score_constants", "term_ends", "digests")})
    edited(good, case("valid-score-constants-not-the-counts", True),
           arrays={"score_constants": lambda a: a + np.array([[0.5], [0.0]])})
    synthetic(case("valid-many-short-terms-4MB", True), 2, 360_000)
    synthetic(case("valid-100-classes", True, two_classes=False), 100, 5_000)
    synthetic(case("wide-at-the-limit", True, two_classes=False), 100,
              schema.MAX_COMPARISONS // 100 ** 2)

    # Sizes beyond the limits: refused before any array is read.
    synthetic(case("classes-over-the-limit", False, corrupt + r"classes must be 1 to 1000"),
              1001, 3)
    synthetic(case("classes-squared-by-terms-over", False, large + r"\d+ classes² × terms"),
              1000, schema.MAX_COMPARISONS // 1000 ** 2 + 1)
    members = members_of(good)
    over = schema.MAX_TERMS + 1
    write_zip(case("terms-over-the-limit", False, large + f"{over} terms"),
              [(n, npy(np.zeros(over, np.uint8)) if n == "term_ends.npy" else b) for n, b in members])
    raw_meta(good, case("meta-over-16-MiB", False, large + "meta.json of"),
             b" " * (container.MAX_META_BYTES + 1))
    raw_meta(good, case("meta-json-bomb-3.7MB", False, large + "meta.json of up to"),
             b"[" + b"[]," * 1_250_000 + b"[]]")
    raw_meta(good, case("meta-json-bomb-9MB", False, large + "meta.json of up to"),
             b"[" + b"{}," * 3_000_000 + b"{}]")
    raw_meta(good, case("meta-nested-100000-deep", False, cut), b"[" * 100_000 + b"]" * 100_000)
    write_zip(case("declared-shape-without-data", False, cut + r"count_values.npy holds"),
              [(n, npy_header("<f8", "(100000000000,)") if n == "count_values.npy" else b)
               for n, b in members])
    write_zip(case("declared-shape-square-of-2-40", False, cut + r"count_values.npy"),
              [(n, npy_header("<f8", f"({2 ** 40}, {2 ** 40})") if n == "count_values.npy" else b)
               for n, b in members])
    write_zip(case("npy-header-of-2-GB", False, cut + r"class_count.npy has a .npy header of \d+"),
              [(n, b"\x93NUMPY\x02\x00" + (2 ** 31).to_bytes(4, "little") + b" " * 100
                if n == "class_count.npy" else b) for n, b in members])
    with open(case("sparse-2GB-not-a-zip", False, cut + "not a zip file"), "wb") as f:
        f.truncate(2 << 30)
    with open(case("sparse-2GB-then-a-model", False, cut), "wb") as f:
        f.truncate(2 << 30)
        f.seek(2 << 30)
        f.write(good.read_bytes())

    # Settings: bounded, of their types, none unknown or missing.
    for name, change, reason in [
            ("alpha-nan", params(alpha=float("nan")), "alpha must be a finite number"),
            ("alpha-negative", params(alpha=-1), "alpha must be"),
            ("alpha-zero", params(alpha=0), "alpha must be"),
            ("alpha-1e308", params(alpha=1e308), "alpha must be"),
            ("alpha-a-string", params(alpha="1"), "alpha must be"),
            ("alpha-true", params(alpha=True), "alpha must be"),
            ("n-jobs-a-billion", params(n_jobs=10 ** 9), "n_jobs must be"),
            ("n-jobs-zero", params(n_jobs=0), "n_jobs must be"),
            ("ngrams-a-billion", params(ngram_range=[1, 10 ** 9]), "ngram_range"),
            ("ngrams-reversed", params(ngram_range=[3, 2]), "ngram_range"),
            ("ngrams-counted-from-0", top(ngram_range=[0, 1]), "ngram_range"),
            ("token-length-0", params(max_token_length=0), "max_token_length"),
            ("token-length-a-billion", params(max_token_length=10 ** 9), "max_token_length"),
            ("model-evil", params(model="evil"), "model must be"),
            ("stemmer-os-system", params(stemmer="os.system"), "stemmer"),
            ("lowercase-yes", params(lowercase="yes"), "lowercase"),
            ("tf-tfidf", params(tf="tfidf"), "tf must be"),
            ("unknown-setting", params(evil=1), "unknown setting 'evil'"),
            ("setting-missing", without("tf", of="params"), "no setting tf"),
            ("class-prior-one-of-two", params(class_prior=[0.5]), "class_prior"),
            ("class-prior-zeros", params(class_prior=[0, 0]), "class_prior"),
            ("target-rate-denormal", params(target_fpr=5e-324), "target_fpr"),
            ("hash-bits-99", params(hash_bits=99), "hash_bits"),
            ("margin-1e308", params(margin=1e308), "margin"),
            ("max-passes-0", params(max_passes=0), "max_passes"),
            ("threshold-setting-high", params(decision_threshold="high"), "decision_threshold"),
            ("min-df-negative", params(min_df=-1), "min_df"),
            ("max-features-0", params(max_features=0), "max_features")]:
        edited(good, case(f"setting-{name}", False, corrupt + reason), change)

    # meta.json: format, version, kind, keys, records.
    for name, change, reason in [
            ("version-0", top(version=0), "format version 0 does not exist"),
            ("version-99", top(version=99), "format version 99; this textnb reads up to 3"),
            ("version-a-string", top(version="2"), "is not a number"),
            ("version-true", top(version=True), "is not a number"),
            ("kind-table", top(kind="table"), "holds a 'table' model"),
            ("classes-twice", top(classes=["spam", "spam"]), "classes must be"),
            ("classes-three-for-two", lambda m: m.update(classes=["a", "b", "c"], cutoffs=None,
                                                         decision_threshold=None),
             r"class_count of shape \(2,\), expected \(3,\)"),
            ("classes-lists", top(classes=[["a"], ["b"]]), "classes must be"),
            ("classes-none", top(classes=[]), "classes must be"),
            ("stop-words-a-string", top(stop_words="the"), "stop words"),
            ("unknown-key", top(evil=1), "unknown key 'evil'"),
            ("no-classes", without("classes"), "no classes"),
            ("terms-in-format-3", top(terms=["a"]), "terms must be"),
            ("cutoffs-without-folds", lambda m: m["cutoffs"].pop("folds"), "cutoffs: no folds"),
            ("tuning-without-folds", top(tuning={"metric": "f1", "candidates": 2,
                                                 "best": {"mean": 1, "sd": 0}}),
             "tuning record: no folds"),
            ("tuning-best-without-mean", top(tuning={"metric": "f1", "folds": 5, "candidates": 2,
                                                     "best": {"sd": 0}}), "tuning record: best"),
            ("cutoffs-crossed", lambda m: m["cutoffs"].update(spam=-1.0, ham=1.0),
             "cutoffs are not two ordered"),
            ("cutoffs-of-no-class", lambda m: m["cutoffs"].update(spam_class="nope"),
             "cutoffs do not fit"),
            ("cutoffs-nan", lambda m: m["cutoffs"].update(spam=float("nan")), "cutoffs: spam"),
            ("threshold-1e300", top(decision_threshold=1e300), "decision threshold")]:
        edited(good, case(f"meta-{name}", False, reason), change)
    text = dict(members)["meta.json"].decode()
    raw_meta(good, case("meta-a-key-twice", False, cut + "meta.json names a key twice"),
             text.replace('{"format"', '{"params": {}, "format"', 1).encode())
    raw_meta(good, case("meta-not-utf-8", False, cut + "'utf-8' codec can't decode"),
             b'{"format": "\xff"}')
    raw_meta(good, case("meta-a-list", False, "is not a textnb model file"), b"[1, 2, 3]")
    raw_meta(good, case("meta-empty", False, cut), b"")

    # Members: each once, none unknown, none missing.
    meta_bytes = dict(members)["meta.json"]
    other = json.dumps({**json.loads(meta_bytes), "classes": ["spam", "ham"]}).encode()
    write_zip(case("two-meta-members", False, cut + "two members named meta.json"),
              members + [("meta.json", other)])
    write_zip(case("member-twice", False, cut + "two members named count_values.npy"),
              members + [("count_values.npy", dict(members)["count_values.npy"])])
    write_zip(case("unknown-member-npy", False, corrupt + "unknown member evil.npy"),
              members + [("evil.npy", npy(np.zeros(3)))])
    write_zip(case("unknown-member-text", False, corrupt + "unknown member readme.txt"),
              members + [("readme.txt", b"hello")])
    for gone in ("count_values", "score_constants", "score_bias", "digests", "terms"):
        edited(good, case(f"no-{gone}", False, corrupt + f"no {gone}.npy"), drop=(f"{gone}.npy",))
    edited(good, case("no-meta", False, "is not a textnb model file"), drop=("meta.json",))
    # Scored, alike: a model trained on error written before digest_weights existed has none.
    edited(onerror, case("valid-digest-weights-stripped", True), drop=("digest_weights.npy",))
    edited(good, case("columns-without-hashing", False, corrupt + "columns.npy in a model without"),
           add=(("columns.npy", npy(np.arange(3))),))
    edited(v2, case("digest-weights-in-format-2", False, corrupt + "unknown member digest_weights"),
           add=(("digest_weights.npy", npy(np.ones(len(SPAM + HAM)))),))

    # The zip: stored members one after another, nothing else, each CRC right.
    data = good.read_bytes()
    case("truncated-half", False, cut).write_bytes(data[:len(data) // 2])
    case("truncated-by-one", False, cut).write_bytes(data[:-1])
    case("empty-file", False, cut).write_bytes(b"")
    case("not-a-zip", False, cut + "not a zip file").write_bytes(b"this is no model\n" * 10)
    bytes_edit(good, case("a-flipped-byte", False, cut + "count_values.npy is truncated or corrupt"),
               lambda b: b.__setitem__(local_data(b, "count_values.npy") + 200,
                                       b[local_data(b, "count_values.npy") + 200] ^ 0x20))
    write_zip(case("re-packed-deflated", False, cut + "meta.json is not stored as textnb stores"),
              members,
              zipfile.ZIP_DEFLATED)
    bytes_edit(good, case("member-marked-encrypted", False, cut + "count_values.npy is not stored"),
               lambda b: set_field(b, "count_values.npy", 8, 1))
    bytes_edit(good, case("member-with-a-data-descriptor", False, cut + "meta.json is not stored"),
               lambda b: set_field(b, "meta.json", 8, 8))
    bytes_edit(good, case("a-zip-comment", False, cut + "not a zip file"),
               lambda b: b.__setitem__(slice(-2, None), (7).to_bytes(2, "little")) or b.extend(b"comment"))
    case("bytes-after-the-zip", False, cut).write_bytes(data + b"\0" * 100)
    case("bytes-before-the-zip", False, cut).write_bytes(b"MZ" + b"\0" * 98 + data)
    bytes_edit(good, case("local-name-not-the-directory's", False, cut + "bad local header"),
               lambda b: b.__setitem__(slice(local_name(b, "count_values.npy"),
                                             local_name(b, "count_values.npy") + 16),
                                       b"count_valuez.npy"))
    bytes_edit(good, case("two-entries-one-member", False, cut),
               lambda b: set_field(b, "count_values.npy", 42,
                                   int.from_bytes(b[directory_entry(b, "count_classes.npy") + 42:][:4],
                                                  "little"), 4))
    bytes_edit(good, case("zip64-end-record", False, cut),
               lambda b: b.__setitem__(slice(-12, -8), (0xFFFFFFFF).to_bytes(4, "little")))

    # .npy headers: plain numbers of at most two dimensions, the member's type, read without eval.
    def header_case(name: str, member: str, header: bytes, body: bytes, reason: str) -> None:
        write_zip(case(name, False, reason),
                  [(n, header + body if n == member else b) for n, b in members])

    header_case("npy-pickle", "class_count.npy", npy_header("|O", "(2,)"), b"\x80\x04N." * 4,
                cut + "class_count.npy has a .npy header")
    header_case("npy-unicode", "class_count.npy", npy_header("<U8", "(2,)"), bytes(64),
                cut + "class_count.npy has a .npy header")
    header_case("npy-complex", "class_count.npy", npy_header("<c16", "(2,)"), bytes(32),
                cut + "class_count.npy has a .npy header")
    header_case("npy-float16", "class_count.npy", npy_header("<f2", "(2,)"), bytes(4),
                corrupt + "class_count holds <f2")
    header_case("npy-three-dimensions", "class_count.npy", npy_header("<f8", "(1, 1, 2)"),
                bytes(16), cut + "class_count.npy has a .npy header")
    header_case("npy-shape-nested-5000", "class_count.npy",
                npy_header("<f8", "(" * 5000 + "2," + ")" * 5000, version=2), bytes(16),
                cut + "class_count.npy has a .npy header")
    header_case("npy-fortran-1-d", "class_count.npy", npy_header("<f8", "(2,)", fortran=True),
                np.ones(2).tobytes(), corrupt + "class_count in Fortran order")
    header_case("npy-version-4", "class_count.npy",
                b"\x93NUMPY\x04\x00" + npy_header("<f8", "(2,)")[8:], np.ones(2).tobytes(),
                cut + "class_count.npy is not a .npy array")
    header_case("npy-extra-key", "class_count.npy",
                npy_header("<f8", "(2,)", extra="'evil': 1, "), np.ones(2).tobytes(),
                cut + "class_count.npy has a .npy header")
    edited(good, case("npy-float-class-numbers", False, corrupt + "count_classes holds <f8"),
           arrays={"count_classes": lambda a: a.astype(np.float64)})
    edited(good, case("npy-signed-digests", False, corrupt + "digests holds <i8"),
           arrays={"digests": lambda a: a.astype(np.int64)})
    edited(good, case("npy-signed-indptr", False, corrupt + "count_indptr holds <i8"),
           arrays={"count_indptr": lambda a: a.astype(np.int64)})

    # Values: counts, weights and scores finite and bounded, class numbers in range, order.
    for name, member, change, reason in [
            ("class-count-nan", "class_count", lambda a: a * np.nan, "class_count: counts"),
            ("class-count-negative", "class_count", lambda a: -a, "class_count: counts"),
            ("counts-infinite", "count_values", lambda a: np.where(a == a.max(), np.inf, a),
             "count_values: counts"),
            ("counts-1e308", "count_values", lambda a: np.where(a == a.max(), 1e308, a),
             "count_values: counts"),
            ("counts-2-63", "count_values", lambda a: a.astype(np.uint64) * 0 + 2 ** 63,
             "count_values: counts"),
            ("counts-negative", "count_values", lambda a: a.astype(float) - 100,
             "count_values: counts"),
            ("bias-nan", "score_bias", lambda a: a * np.nan, "score_bias: scores"),
            ("bias-1e300", "score_bias", lambda a: a + 1e300, "score_bias: scores"),
            ("constants-1e300", "score_constants", lambda a: a + np.array([[1e300], [0]]),
             "score_constants"),
            ("divisor-zero", "score_constants", lambda a: a * np.array([[1], [0]]),
             "score_constants"),
            ("divisor-positive", "score_constants", lambda a: a * np.array([[1], [-1]]),
             "score_constants"),
            ("digest-class-out-of-range", "digest_classes", lambda a: a + 5, "digest_classes"),
            ("indptr-not-from-0", "count_indptr", lambda a: a + 1, "count_indptr"),
            ("indptr-decreasing", "count_indptr",
             lambda a: np.concatenate([a[:3], a[3:4] + 1, a[4:5] - 0, a[5:]])
             if a[3] + 1 > a[4] else np.concatenate([a[:3], a[4:5] + 1, a[4:]]), "count_indptr"),
            ("class-number-out-of-range", "count_classes", lambda a: a + 2, "count_classes"),
            ("terms-out-of-order", "terms", lambda a: np.frombuffer(
                b"\n".join(sorted(a.tobytes().split(b"\n"), reverse=True)), np.uint8), "terms"),
            ("terms-not-utf-8", "terms", lambda a: np.where(a == a[0], 0xFF, a).astype(np.uint8),
             "terms"),
            ("terms-fewer-than-term-ends", "terms",
             lambda a: np.frombuffer(a.tobytes().rsplit(b"\n", 1)[0], np.uint8), "terms")]:
        edited(good, case(f"values-{name}", False, corrupt + reason), arrays={member: change})
    edited(onerror, case("values-weight-zero", False, corrupt + "digest_weights: weights"),
           arrays={"digest_weights": lambda a: a * 0})
    edited(onerror, case("values-weight-nan", False, corrupt + "digest_weights: weights"),
           arrays={"digest_weights": lambda a: a * np.nan})
    edited(v2, case("values-format-2-weights-nan", False, corrupt + "score_weights: scores"),
           arrays={"score_weights": lambda a: a * np.nan})
    edited(v2, case("values-format-2-counts-negative", False, corrupt + "feature_count: counts"),
           arrays={"feature_count": lambda a: a - 5})
    _rows_cases(good, case, corrupt)
    edited(good, case("values-terms-twice", False, corrupt + "terms"),
           arrays={"terms": lambda a: np.frombuffer(_twice(a.tobytes()), np.uint8)})
    hashed = d / "hashed.model"
    save_model(TextClassifier(stop_words="none", hash_bits=10).fit(texts, labels), hashed)
    edited(hashed, case("values-hashed-columns-decreasing", False, corrupt + "columns"),
           arrays={"columns": lambda a: a[::-1].copy()})
    return cases


def _twice(blob: bytes) -> bytes:
    """The sorted lines with the second one the first again: a term twice."""
    lines = blob.split(b"\n")
    return b"\n".join([lines[0], lines[0], *lines[2:]])


def _rows_cases(good: Path, case: Callable, corrupt: str) -> None:
    """Rows of counts out of order in a term the message does not hold: refused all the same."""
    from textnb import load_model
    clf = load_model(good)
    terms = clf.vocabulary_.terms_
    k = terms.index("agenda")        # one count, of ham (class 0); not in MESSAGE
    indptr = np.lib.format.read_array(io.BytesIO(dict(members_of(good))["count_indptr.npy"]))
    assert indptr[k + 1] - indptr[k] == 1

    def twice(a: np.ndarray) -> np.ndarray:   # its row takes in the next term's first count
        return np.concatenate([a[:k + 1], a[k + 1:k + 2] + 1, a[k + 2:]])

    edited(good, case("values-row-out-of-order", False, corrupt + "count_classes"),
           arrays={"count_indptr": twice})


# -- the readers --------------------------------------------------------------------------------

def read_in_this_process(reader: str, path: str) -> dict[str, Any]:
    """What ``reader`` makes of the file at ``path`` with :data:`MESSAGE`, in this process:
    {"verdict": "scored", "log_odds": ...} or {"verdict": "refused", "line": ...}."""
    from textnb.errors import ModelFileError
    try:
        if reader == "load_model":
            from textnb import load_model
            from textnb.documents.message import read_bytes
            classifier = load_model(path)
            row = classifier.predict_log_proba([read_bytes(MESSAGE)])[0]
            return _scored(list(classifier.classes_), row.tolist())
        if reader == "filter":
            from textnb.documents.message import read_bytes
            from textnb.mail.filter import filter_message
            from textnb.store.scorer import score
            out = filter_message(MESSAGE, path)
            assert out.endswith(MESSAGE) and b"X-TextNB-" in out
            document = read_bytes(MESSAGE)
            classes, row, _, _ = score(path, document.text, document.fields)
            return _scored(classes, row)
        if reader == "serve":
            from textnb.serve.model import Model
            model = Model(path)
            weights = model.version.weights
            row = weights.log_proba(weights.classifier.tokenize([MESSAGE])[0])
            return _scored(model.version.classes, row)
        from click.testing import CliRunner
        from textnb.cli.app import main
        args = (["classify", "--format", "json", "-m", path, "-"] if reader == "classify"
                else ["info", "-m", path])
        result = CliRunner().invoke(main, args, input=MESSAGE)
        if result.exit_code == 0:
            if reader == "info":
                return {"verdict": "scored"}
            decision = json.loads(result.stdout)
            return {"verdict": "scored", "log_odds": decision.get("spam_log_odds",
                                                                  decision["log_odds"])}
        return {"verdict": "refused", "line": result.stderr}
    except ModelFileError as error:
        return {"verdict": "refused", "line": f"Error: {error}\n"}


def _scored(classes: list, row: list[float]) -> dict[str, Any]:
    names = [str(c) for c in classes]
    if names == ["ham", "spam"]:
        return {"verdict": "scored", "log_odds": row[1] - row[0]}
    return {"verdict": "scored"}


def _verdict(reader: str, code: int, out: bytes, err: bytes) -> dict[str, Any]:
    """A reader process's verdict from its exit code and output."""
    text = err.decode("utf-8", "replace")
    if reader == "filter":
        if out == MESSAGE and text:
            return {"verdict": "refused", "line": text.replace(
                "textnb filter: message passed through unchanged: ", "Error: ", 1)}
        return {"verdict": "scored" if out.endswith(MESSAGE) and not text else "broken",
                "line": text}
    if reader in ("classify", "info"):
        return ({"verdict": "scored"} if code == 0 else
                {"verdict": "refused" if code == 1 else "broken", "line": text})
    try:
        return json.loads(out.decode().splitlines()[-1])
    except (IndexError, ValueError):
        return {"verdict": "broken", "line": text[-300:]}


def check(case: Case, reader: str, result: dict[str, Any]) -> str | None:
    """What is wrong with a reader's verdict on a case, or None."""
    if reader == "serve" and case.accept and not case.two_classes:
        return None if result["verdict"] == "refused" and "two classes" in result["line"] \
            else f"serve: {result}"
    if result["verdict"] != ("scored" if case.accept else "refused"):
        return f"{reader} {result['verdict']}: {result.get('line', '')[:200]!r}"
    if not case.accept:
        lines = result["line"].splitlines()
        if len(lines) != 1 or str(case.path) not in lines[0] or not lines[0].startswith("Error: "):
            return f"{reader} said {result['line'][:300]!r}"
        if not re.search(case.reason, lines[0]):
            return f"{reader} said {lines[0]!r}, not /{case.reason}/"
        if "allow_pickle" in lines[0]:
            return f"{reader} advises allow_pickle"
    return None


# -- the run ------------------------------------------------------------------------------------

def run(cases: list[Case], readers: tuple[str, ...]) -> list[dict]:
    rows = []
    for case in cases:
        row = {"case": case, "size": case.path.stat().st_size, "readers": {}}
        for reader in readers:
            result, seconds, rss = _timed(reader, case.path)
            row["readers"][reader] = (result, seconds, rss, check(case, reader, result))
        scores = [r[0]["log_odds"] for r in row["readers"].values() if "log_odds" in r[0]]
        row["spread"] = max(scores) - min(scores) if scores else 0.0
        rows.append(row)
        problems = [p for *_, p in row["readers"].values() if p]
        print(f"{case.name:<42} {row['size'] / 1e6:8.2f} MB  "
              f"{'score' if case.accept else 'refuse':<6} "
              + "  ".join(f"{reader[:8]:>8} {r[0]['verdict'][:7]:<7} {r[1]:5.2f}s {r[2]:4.0f}MB"
                          for reader, r in row["readers"].items())
              + (f"  PROBLEM: {problems}" if problems else ""), flush=True)
    return rows


PYTHON = sys.executable  # the readers' (--python: another install of textnb, to compare)
LIMIT = None  # bytes of address space a reader may take (--limit-mb), else no limit


def _timed(reader: str, path: Path) -> tuple[dict[str, Any], float, float]:
    """(what ``reader`` makes of the file, wall seconds, peak RSS in MB) in a fresh process:
    the command itself (``python -m textnb ...``) or :func:`read_in_this_process`, started by
    GNU time, whose report of the peak RSS is the reader's own (a child of this process would
    carry this process's peak over its exec)."""
    if reader in ("filter", "classify", "info"):
        command = [PYTHON, "-m", "textnb", reader, "-m", str(path)] + (
            ["-"] if reader == "classify" else [])
    else:
        # This file as a script: its folder, bench/, first on the path, then PYTHON's textnb.
        command = [PYTHON, __file__, "--read", reader, str(path)]
    with tempfile.NamedTemporaryFile() as report:
        start = time.perf_counter()
        # Not from the repository: python -m and -c would import its textnb, not PYTHON's.
        done = subprocess.run([TIME, "-f", "%M", "-o", report.name, *command], input=MESSAGE,
                              capture_output=True, cwd=tempfile.gettempdir(),
                              preexec_fn=_limited if LIMIT else None)
        seconds = time.perf_counter() - start
        rss = int(Path(report.name).read_text().split()[-1]) / 1024
    return _verdict(reader, done.returncode, done.stdout, done.stderr), seconds, rss


TIME = shutil.which("time", path="/usr/bin:/bin") or "/usr/bin/time"


def _limited() -> None:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def summary(rows: list[dict], readers: tuple[str, ...]) -> str:
    lines = ["", "== per reader (wall time and peak RSS of a fresh process) =="]
    for reader in readers:
        times = [(r["readers"][reader][1], r["case"].name) for r in rows]
        rss = [(r["readers"][reader][2], r["case"].name) for r in rows]
        wrong = [r["case"].name for r in rows if r["readers"][reader][3]]
        lines.append(f"{reader:<11} slowest {max(times)[0]:.2f} s ({max(times)[1]}), "
                     f"median {statistics.median(t for t, _ in times):.2f} s; largest "
                     f"{max(rss)[0]:.0f} MB ({max(rss)[1]}), median "
                     f"{statistics.median(m for m, _ in rss):.0f} MB; "
                     f"{len(wrong)} not as expected{': ' + ', '.join(wrong) if wrong else ''}")
    accepted = [r for r in rows if r["case"].accept]
    spread = max(accepted, key=lambda r: r["spread"])
    lines.append(f"{len(rows)} files ({len(accepted)} valid, {len(rows) - len(accepted)} "
                 f"refused); the spam log-odds load_model and serve give a valid file differ "
                 f"from the filter's by at most {spread['spread']:.2g} ({spread['case'].name})")
    over = [(r["case"].name, reader) for r in rows for reader in readers
            if r["readers"][reader][1] > 1 or r["readers"][reader][2] > 200]
    lines.append(f"over 1 s or 200 MB: {over or 'none'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from bench.common import args as options  # here: a reader's process (--read) runs without
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--only", help="the cases whose name holds this")
    parser.add_argument("--readers", default=",".join(READERS))
    parser.add_argument("--python", default=sys.executable,
                        help="the Python of the textnb install whose readers read the files "
                             "(default: this one's)")
    parser.add_argument("--limit-mb", type=int,
                        help="the address space a reader may take, in MB (a reader that would "
                             "take more fails: to measure a textnb that eats the machine)")
    args = parser.parse_args(argv)
    readers = tuple(args.readers.split(","))
    global PYTHON, LIMIT
    PYTHON, LIMIT = args.python, args.limit_mb and args.limit_mb << 20
    with tempfile.TemporaryDirectory(prefix="hostile-models.") as directory:
        cases = [c for c in crafted(directory) if not args.only or args.only in c.name]
        print(f"{len(cases)} crafted files; readers of {PYTHON}; Python {sys.version.split()[0]}; "
              f"{os.cpu_count()} CPUs\n", flush=True)
        rows = run(cases, readers)
        print(summary(rows, readers))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--read"]:  # one reader's process, started by _timed
        print(json.dumps(read_in_this_process(sys.argv[2], sys.argv[3])))
    else:
        sys.exit(main())
