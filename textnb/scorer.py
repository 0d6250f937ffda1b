"""model file → log P(c|x) of one document, without numpy: the mail filter's fast path.

A TextClassifier's file holds its scores decomposed as jll(x) = bias + Σ_k x'_k W_k, where x'
is the document's weighted counts over the vocabulary (:meth:`~textnb.models._DiscreteNB.
decomposition`; term k's weights W_k are one row of ``score_weights``). Scoring one message
needs the settings, the sorted terms, and the rows of the terms the message holds, which are
read alone. So ``textnb filter`` costs milliseconds more than Python's start-up, where
importing numpy and reading the whole model took 200 (scripts/bench_filter.py).

The arithmetic is that of :meth:`TextClassifier.predict_log_proba`, in the same order, so the
two agree to rounding (tests/test_scorer.py).
"""

from __future__ import annotations

import json
import math
import os
import re
import zipfile
from array import array
from bisect import bisect_left
from collections import Counter

from .errors import ModelFileError
from .tokens import Tokenizer

_NPY_MAGIC = b"\x93NUMPY"
_NPY_FIELD = re.compile(r"'(descr|fortran_order|shape)':\s*('[^']*'|False|True|\([^)]*\))")


class Scorer:
    """Scores of single documents from a TextClassifier's model file."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        try:
            with zipfile.ZipFile(self.path) as archive:
                meta = json.loads(archive.read("meta.json"))
                if (meta.get("format"), meta.get("kind")) != ("textnb-model", "text-classifier"):
                    raise ValueError("not a textnb text classifier")
                if meta.get("version") != 2:
                    raise ModelFileError(
                        f"model file '{self.path}' has format version {meta.get('version')}; "
                        f"filtering needs version 2: save it again (textnb train or learn)")
                self.classes = list(meta["classes"])
                params = meta["params"]
                self.tokenizer = Tokenizer(
                    lowercase=params["lowercase"], stop_words=meta["stop_words"],
                    stemmer=params["stemmer"], ngram_range=params["ngram_range"],
                    max_length=params["max_token_length"])
                self._binary = params["model"] == "bernoulli"
                self._log_tf = params["tf"] == "log" and not self._binary
                self._l2 = params["norm"] == "l2" and not self._binary
                data = _npy(archive, "terms", "|u1")
                self.terms = data.decode("utf-8").split("\n") if data else []
                self.bias = list(array("d", _npy(archive, "score_bias", "<f8")))
        except (OSError, KeyError, TypeError, ValueError, zipfile.BadZipFile) as error:
            raise ModelFileError(f"model file '{self.path}' cannot be scored without numpy "
                                 f"({error})") from None
        if len(self.bias) != len(self.classes):
            raise ModelFileError(f"model file '{self.path}' is corrupt (bias of "
                                 f"{len(self.bias)} classes, {len(self.classes)} classes)")

    def log_proba(self, text: str, fields: tuple[tuple[str, str], ...] = ()) -> list[float]:
        """log P(c|x) per class, in ``classes`` order, of a text and its header fields."""
        counts = sorted(self._counts(self.tokenizer.document(text, fields)).items())
        values = [1.0 if self._binary else math.log1p(n) if self._log_tf else float(n)
                  for _, n in counts]
        if self._l2 and values:
            length = math.sqrt(sum(v * v for v in values))
            values = [v / length for v in values]
        n_classes = len(self.classes)
        sums = [0.0] * n_classes
        for value, row in zip(values, self._rows([k for k, _ in counts])):
            for c in range(n_classes):
                sums[c] += value * row[c]
        jll = [s + b for s, b in zip(sums, self.bias)]
        top = max(jll)
        norm = top + math.log(sum(math.exp(j - top) for j in jll))
        return [j - norm for j in jll]

    def _counts(self, tokens: list[str]) -> dict[int, int]:
        """Column → count of the tokens that are vocabulary terms (Mitchell's positions)."""
        terms, found = self.terms, {}
        for token, n in Counter(tokens).items():
            k = bisect_left(terms, token)
            if k < len(terms) and terms[k] == token:
                found[k] = n
        return found

    def _rows(self, columns: list[int]) -> list[array]:
        """The weight rows of the given columns (ascending), each read on its own."""
        if not columns:
            return []
        width = 8 * len(self.classes)
        rows = []
        with zipfile.ZipFile(self.path) as archive:
            with archive.open("score_weights.npy") as f:
                start = _npy_data_start(f, "<f8")
                for k in columns:
                    f.seek(start + k * width)
                    row = array("d", f.read(width))
                    if len(row) != len(self.classes):
                        raise ModelFileError(f"model file '{self.path}' is truncated")
                    rows.append(row)
        return rows


def _npy(archive: zipfile.ZipFile, name: str, dtype: str) -> bytes:
    """The data bytes of a .npy member holding a C-ordered array of ``dtype``."""
    with archive.open(f"{name}.npy") as f:
        _npy_data_start(f, dtype)
        return f.read()


def _npy_data_start(f, dtype: str) -> int:
    """Read a .npy header from f; return where its data starts. Only plain C-ordered arrays
    of ``dtype`` are accepted (a pickle never is: its dtype is 'O')."""
    head = f.read(10)
    if head[:6] != _NPY_MAGIC or head[6] not in (1, 2, 3):
        raise ValueError("not a .npy array")
    if head[6] == 1:
        length, start = int.from_bytes(head[8:10], "little"), 10
    else:
        length, start = int.from_bytes(head[8:10] + f.read(2), "little"), 12
    header = dict(_NPY_FIELD.findall(f.read(length).decode("latin-1")))
    if header.get("descr") != f"'{dtype}'" or header.get("fortran_order") != "False":
        raise ValueError(f"array of {header.get('descr')}, expected {dtype}")
    return start + length
