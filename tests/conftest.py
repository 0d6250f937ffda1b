"""Shared test data: the eight e-mails of the event models' worked example, as texts and as the printed count table; the
first SpamAssassin messages of the shared archive."""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_matrix

import textnb.text.tokens

# The eight e-mails of the two event models' worked example (McCallum & Nigam 1998): e1..e4
# are spam (+), e5..e8 ham (−); d and e are stop words.
EIGHT_EMAILS_TEXTS = [
    "b d e b b d e",          # e1
    "b c e b b d d e c c",    # e2
    "a d a d e a e e",        # e3
    "b a d b e d a b",        # e4
    "a b a b a b a e d",      # e5
    "a c a c a c a e d",      # e6
    "e a e d a e a",          # e7
    "d e d e d",              # e8: only stop words, an empty document
]
EIGHT_EMAILS_LABELS = ["spam"] * 4 + ["ham"] * 4
EIGHT_EMAILS_STOP_WORDS = {"d", "e"}

NO_C = "textnb's C parts were not built (no C compiler at install time)"


def with_c_and_python(module: object, name: str, python: object, built: object = "tokens"):
    """An autouse fixture that runs each test of a test module twice: with ``module.name`` as
    the C part gives it (skipped where ``built``, the C module, is None: not built; by default
    textnb._tokens), and set to ``python``."""
    @pytest.fixture(autouse=True, params=["C", "python"])
    def implementation(request, monkeypatch):
        if request.param == "C" and (textnb.text.tokens._fast if built == "tokens" else built) is None:
            pytest.skip(NO_C)
        if request.param == "python":
            monkeypatch.setattr(module, name, python)
        return request.param
    return implementation


SPAMASSASSIN = (Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
                / "spamassassin-public.tar.gz")


def spamassassin_sample(per_class: int) -> dict[str, list[bytes]] | None:
    """The first ``per_class`` spam and easy-ham messages of the shared SpamAssassin archive,
    as bytes, under "spam" and "ham"; None where the archive is absent."""
    if not SPAMASSASSIN.is_file():
        return None
    found: dict[str, list[bytes]] = {"spam": [], "easy_ham": []}
    with tarfile.open(SPAMASSASSIN) as tar:
        for member in tar:
            part = member.name.split("/")[0]
            if member.isfile() and part in found and len(found[part]) < per_class \
                    and not member.name.endswith("cmds"):
                found[part].append(tar.extractfile(member).read())
            if all(len(v) == per_class for v in found.values()):
                break
    return {"spam": found["spam"], "ham": found["easy_ham"]}

# The seed's count table (#a, #b, #c) for e1..e8, as printed.
EIGHT_EMAILS_COUNTS = np.array([[0, 3, 0], [0, 3, 3], [3, 0, 0], [2, 3, 0],
                           [4, 3, 0], [4, 0, 3], [3, 0, 0], [0, 0, 0]])
# The seed's bit vectors (a?, b?, c?), as printed.
EIGHT_EMAILS_BITS = np.array([[0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 1, 0],
                         [1, 1, 0], [1, 0, 1], [1, 0, 0], [0, 0, 0]])


@pytest.fixture
def no_shapes(monkeypatch) -> None:
    """Tokens as textnb read them before a word of three digits counted its shape too: the
    tokenizer that wrote the format-2 files under tests/data/models."""
    import textnb.text.counting
    import textnb.text.tokens
    monkeypatch.setattr(textnb.text.tokens, "shapes", lambda words: [])
    monkeypatch.setattr(textnb.text.counting, "_fast", None)  # its numbering counts shapes in C


@pytest.fixture
def eight_emails() -> tuple[list[str], list[str]]:
    """The eight e-mails' e-mails as real texts and their labels."""
    return list(EIGHT_EMAILS_TEXTS), list(EIGHT_EMAILS_LABELS)


@pytest.fixture
def eight_counts() -> tuple[np.ndarray, list[str]]:
    """The eight e-mails' count vectors (columns a, b, c) and their labels."""
    return EIGHT_EMAILS_COUNTS.copy(), list(EIGHT_EMAILS_LABELS)


@pytest.fixture
def random_counts() -> tuple:
    """A random sparse count matrix (80 × 25, some empty rows) and labels of three classes."""
    rng = np.random.default_rng(9417)
    dense = rng.integers(1, 6, size=(80, 25)) * (rng.random((80, 25)) < 0.2)
    dense[[5, 17, 60]] = 0
    y = rng.choice(["ham", "news", "spam"], size=80)
    return csr_matrix(dense), y
