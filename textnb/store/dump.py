r"""TextClassifier ⇄ portable text dump (UTF-8 lines: settings, one line per term, digests); merge.

What ``bogoutil -d/-l`` does for bogofilter: a model as text, for backups, inspection with
grep or a spreadsheet, and moving models between textnb versions. Loading a dump rebuilds the
model exactly: every count is written in the shortest form that reads back to the same float,
so dump → load → dump gives the same bytes and the same probabilities. The layout::

    #textnb-dump<TAB>1
    #{"kind": "text-classifier", "params": {...}, "classes": [...], "class_count": [...], ...}
    #term<TAB>ham<TAB>spam                   the columns: a term, then its count in each class
    cheap<TAB>0<TAB>12
    meeting<TAB>7.5<TAB>0.25
    #digest<TAB>3f09c2e1a4b5d6e7<TAB>spam    one per learned document (what unlearn checks),
    #digest<TAB>0b1c2d3e4f506172<TAB>ham<TAB>0.75   with its weight in the counts when not 1
    #end

Terms and class names are escaped so that any string fits on one line: backslash, tab, line
feed and carriage return become ``\\``, ``\t``, ``\n``, ``\r``, and a leading ``#`` becomes
``\#``. Term lines may come in any order (a loaded model's terms are sorted again); the
``#end`` line tells a complete dump from a truncated one.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any, IO, Iterable, Iterator

import numpy as np

from .. import __version__
from ..classifier import TextClassifier
from ..errors import ModelFileError
from .text_model import load_model, restore, saved_meta

MAGIC = "#textnb-dump"
VERSION = 1
_KIND = "text-classifier"
# Header keys a dump must have (after "kind"), each checked when read.
_REQUIRED = ("params", "classes", "class_count", "stop_words")
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r", "#": "#"}
# One backslash and the character after it: a single pass, nothing to rescan.
_ESCAPED = re.compile(r"\\(.?)", re.DOTALL)
_SPECIAL = re.compile(r"[\\\t\n\r]")
# Counts in [0, 2**53) that are whole numbers are written as integers ("3", not "3.0").
_EXACT_INTEGERS = 2.0 ** 53


def dump_lines(classifier: TextClassifier) -> Iterator[str]:
    """The dump of a fitted classifier, line by line (each ending in a line feed)."""
    classifier._check_fitted()
    model = classifier.model_
    labels = [_json_label(label) for label in model.classes_]
    header = {"kind": _KIND, "textnb": __version__, **saved_meta(classifier),
              "class_count": model.class_count_.tolist()}
    yield f"{MAGIC}\t{VERSION}\n"
    yield "#" + json.dumps(header, ensure_ascii=False) + "\n"
    yield "\t".join(["#term"] + [escape(str(label)) for label in labels]) + "\n"
    counts = _format_counts(model.feature_count_.T)
    for term, row in zip(classifier.vocabulary_.terms_, counts.tolist()):
        yield escape(term) + "\t" + "\t".join(row) + "\n"
    for digest, label, weight in zip(classifier.digests_.tolist(),
                                     classifier.digest_labels_.tolist(),
                                     classifier.digest_weights_.tolist()):
        share = "" if weight == 1 else f"\t{weight!r}"  # repr: the same float back
        yield f"#digest\t{digest:016x}\t{escape(label)}{share}\n"
    yield "#end\n"


def write_dump(classifier: TextClassifier, out: IO[bytes]) -> None:
    """Write the dump of ``classifier`` to a binary file, UTF-8 encoded."""
    block: list[str] = []
    for line in dump_lines(classifier):
        block.append(line)
        if len(block) == 4096:   # a few hundred KB at a time: no copy of the whole dump
            out.write("".join(block).encode("utf-8"))
            block.clear()
    out.write("".join(block).encode("utf-8"))


def read_dump(lines: Iterable[bytes | str], name: str = "<dump>") -> TextClassifier:
    """Rebuild the classifier a dump describes; ModelFileError naming the line if it is bad."""
    numbered = enumerate(lines, start=1)
    header: dict[str, Any] = {}
    terms: list[str] = []
    counts: list[str] = []
    term_lines: list[int] = []
    digests: list[int] = []
    digest_labels: list[str] = []
    digest_weights: list[float] = []
    columns = None
    number = 0
    ended = False
    for number, raw in numbered:
        line = _decode(raw, name, number)
        if line.endswith("\n"):
            line = line[:-1]
        if ended:
            raise _error(name, number, "text after the #end line")
        if number == 1:
            _check_magic(line, name)
        elif number == 2:
            header = _header(line, name)
            columns = [escape(str(label)) for label in header["classes"]]
        elif number == 3:
            if line.split("\t") != ["#term"] + columns:
                raise _error(name, number, "expected the column line '#term<TAB>" +
                             "<TAB>".join(columns) + "'")
        elif line.startswith("#digest\t"):
            digest, label, weight = _digest(line, header["classes"], name, number)
            digests.append(digest)
            digest_labels.append(label)
            digest_weights.append(weight)
        elif line == "#end":
            ended = True
        elif line.startswith("#"):
            raise _error(name, number, f"unknown line {line[:40]!r} (a term starting with # "
                                       f"is written \\#)")
        else:
            fields = line.split("\t")
            if len(fields) != len(columns) + 1:
                raise _error(name, number, f"expected a term and {len(columns)} counts separated "
                                           f"by tabs, got {len(fields)} fields")
            terms.append(unescape(fields[0], name, number))
            counts += fields[1:]
            term_lines.append(number)
    if number < 3:
        raise ModelFileError(f"dump '{name}' is empty or truncated: it ends at line {number} "
                             f"before its column line")
    if not ended:
        raise _error(name, number, "the dump ends without its #end line (truncated?)")
    feature_count = _parse_counts(counts, len(columns), term_lines, name)
    return _assemble(header, terms, feature_count, term_lines, digests, digest_labels,
                     digest_weights, name)


def load_dump(path: str | os.PathLike, add_to: TextClassifier | None = None) -> TextClassifier:
    """Read the dump at ``path`` ('-' is not special here: the CLI passes stdin as a file);
    with ``add_to``, add its counts and digests to that classifier and return it."""
    with open(path, "rb") as f:
        loaded = read_dump(f, os.fspath(path))
    return loaded if add_to is None else add_to.merge(loaded)


def merge_models(paths: Iterable[str | os.PathLike]) -> TextClassifier:
    """The classifier whose counts are the sum of the model files' (same settings needed)."""
    paths = list(paths)
    merged = load_model(paths[0])
    for path in paths[1:]:
        merged.merge(load_model(path))
    return merged


def escape(text: str) -> str:
    """``text`` on one line without tabs: backslash, tab, LF, CR escaped; a leading # too."""
    if _SPECIAL.search(text):
        text = _SPECIAL.sub(lambda m: _ESCAPES[m.group()], text)
    return "\\" + text if text.startswith("#") else text


def unescape(text: str, name: str = "<dump>", number: int = 0) -> str:
    """The inverse of :func:`escape`; ModelFileError for an unknown escape."""
    if "\\" not in text:
        return text

    def one(match: re.Match) -> str:
        try:
            return _UNESCAPES[match.group(1)]
        except KeyError:
            raise _error(name, number, f"unknown escape {match.group()!r} "
                                       f"(known: \\\\ \\t \\n \\r \\#)") from None

    return _ESCAPED.sub(one, text)


# -- helpers ---------------------------------------------------------------------------------

def _format_counts(values: np.ndarray) -> np.ndarray:
    """Each count as the shortest text that reads back to the same float (Python's repr),
    whole numbers without ".0": an array of str of the same shape. Only the stored counts are
    formatted; most of a text model's are zeros."""
    text = np.full(values.shape, "0", dtype="<U32")
    nonzero = values != 0
    whole = nonzero & (values == np.floor(values)) & (np.abs(values) < _EXACT_INTEGERS)
    text[whole] = values[whole].astype(np.int64).astype(str)
    fractional = nonzero & ~whole
    # repr: 2x faster than numpy's astype(str), and the same shortest round-trip digits.
    text[fractional] = list(map(repr, values[fractional].tolist()))
    return text


def _parse_counts(counts: list[str], n_columns: int, term_lines: list[int],
                  name: str) -> np.ndarray:
    """The term lines' counts (flat, line after line) as a (n_classes, n_terms) float array;
    ModelFileError naming the line of the first one that is not a number >= 0."""
    text = np.array(counts, dtype=str)
    values = np.zeros(text.size)
    stored = np.flatnonzero(text != "0")
    try:
        values[stored] = list(map(float, text[stored].tolist()))
    except ValueError:
        values[stored] = [_number(t) for t in text[stored].tolist()]
    bad = np.flatnonzero(~(values >= 0) | ~np.isfinite(values))
    if bad.size:
        row, column = divmod(int(bad[0]), n_columns)
        raise _error(name, term_lines[row], f"count {column + 1} is {str(text[bad[0]])!r}, "
                                            f"not a number >= 0")
    return np.ascontiguousarray(values.reshape(len(term_lines), n_columns).T)


def _number(text: str) -> float:
    """float(text), or NaN (refused by the caller) for what is not a number."""
    try:
        return float(text)
    except ValueError:
        return float("nan")


def _assemble(header: dict[str, Any], terms: list[str], feature_count: np.ndarray,
              term_lines: list[int], digests: list[int], digest_labels: list[str],
              digest_weights: list[float], name: str) -> TextClassifier:
    """A fitted TextClassifier from a dump's parts, as load_model builds one from a file."""
    order = sorted(range(len(terms)), key=terms.__getitem__)
    terms = [terms[i] for i in order]
    for i, (a, b) in enumerate(zip(terms, terms[1:])):
        if a == b:
            first, second = sorted((term_lines[order[i]], term_lines[order[i + 1]]))
            raise _error(name, second, f"the term {a!r} again (first on line {first})")
    classes = [str(c) for c in header.get("classes", [])] if isinstance(header, dict) else []
    unknown = sorted(set(digest_labels) - set(classes))
    if unknown:
        raise ModelFileError(f"dump '{name}': a digest of class {unknown[0]!r}, not a class of "
                             f"the model")
    try:
        return restore(header, terms, np.array(header["class_count"], dtype=float),
                       np.ascontiguousarray(feature_count[:, order]),
                       np.array(digests, dtype=np.uint64),
                       np.array([classes.index(label) for label in digest_labels], dtype=np.int64),
                       np.array(digest_weights, dtype=float))
    except (KeyError, TypeError, ValueError) as error:
        raise ModelFileError(f"dump '{name}', line 2: bad settings ({error})") from None


def _check_magic(line: str, name: str) -> None:
    magic, _, version = line.partition("\t")
    if magic != MAGIC:
        raise _error(name, 1, f"not a textnb dump (it should start with '{MAGIC}')")
    if not version.isdigit():
        raise _error(name, 1, f"the dump format version {version!r} is not a number")
    if int(version) > VERSION:
        raise _error(name, 1, f"dump format version {version}; this textnb reads up to "
                              f"{VERSION}: upgrade textnb")


def _header(line: str, name: str) -> dict[str, Any]:
    try:
        header = json.loads(line[1:]) if line.startswith("#") else None
    except json.JSONDecodeError as error:
        raise _error(name, 2, f"the settings are not valid JSON ({error})") from None
    if not isinstance(header, dict):
        raise _error(name, 2, "expected the settings as '#' and a JSON object")
    if header.get("kind") != _KIND:
        raise _error(name, 2, f"holds a {header.get('kind')!r} model, not a {_KIND!r} one")
    missing = [key for key in _REQUIRED if key not in header]
    if missing:
        raise _error(name, 2, f"the settings lack {', '.join(missing)}")
    if not isinstance(header["classes"], list) or not header["classes"]:
        raise _error(name, 2, "'classes' must be a list of class labels")
    if not isinstance(header["params"], dict):
        raise _error(name, 2, "'params' must be a JSON object")
    return header


def _digest(line: str, classes: list[Any], name: str, number: int) -> tuple[int, str, float]:
    fields = line.split("\t")
    if len(fields) not in (3, 4) or not re.fullmatch(r"[0-9a-f]{16}", fields[1]):
        raise _error(name, number, "expected '#digest<TAB>16 hex digits<TAB>class[<TAB>weight]'")
    label = unescape(fields[2], name, number)
    if label not in {str(c) for c in classes}:
        raise _error(name, number, f"the digest's class {label!r} is not one of the model's")
    try:
        weight = float(fields[3]) if len(fields) == 4 else 1.0
    except ValueError:
        weight = math.nan
    if not 0 < weight < math.inf:
        raise _error(name, number, f"the digest's weight {fields[3]!r} is not a positive number")
    return int(fields[1], 16), label, weight


def _decode(raw: bytes | str, name: str, number: int) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _error(name, number, f"not UTF-8 ({error.reason} at byte {error.start})") from None


def _error(name: str, number: int, message: str) -> ModelFileError:
    return ModelFileError(f"dump '{name}', line {number}: {message}")


def _json_label(label: Any) -> Any:
    return label.item() if isinstance(label, np.generic) else label
