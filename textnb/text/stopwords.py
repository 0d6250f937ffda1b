"""Stop-word sets: NLTK's English list (installed corpus, else the packaged copy), that list
without its negations, none, or a file."""

from __future__ import annotations

import os
import sys
import zipfile
from importlib import resources
from typing import Iterable

from ..errors import TextnbError

# textnb/data/english_stopwords.txt is NLTK's stopwords/english (179 words), so results do not
# depend on whether the NLTK data has been downloaded.
_PACKAGED = {"english": "english_stopwords.txt"}
# The English list's negations — "no", "nor", "not" and its "n't" words, each also as the word
# a tokenizer that splits at the apostrophe leaves ("don") — and "very": a review's sentiment
# ("not good", "very good"), which removing them loses. "english-without-negations" keeps them
# in the text (test accuracy against the whole list: Rotten Tomatoes snippets 0.7557 / 0.7572
# → 0.7596 / 0.7623, IMDB 0.8864 / 0.8981 → 0.8923 / 0.8992, four pairs of newsgroups with
# word pairs +0.1 to +0.7 points but comp.graphics/comp.windows.x −0.13, 20 Newsgroups 0.8654
# → 0.8651). Keeping every stop word read the snippets better still (0.7893 / 0.7807) but cost
# talk.religion.misc/alt.atheism 2.8 points.
NEGATIONS = frozenset("""
    no nor not very ain aren aren't couldn couldn't didn didn't doesn doesn't don don't hadn
    hadn't hasn hasn't haven haven't isn isn't mightn mightn't mustn mustn't needn needn't shan
    shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't""".split())


def load_stop_words(spec: str | Iterable[str] | None) -> frozenset[str]:
    """Return the stop words named by ``spec``.

    ``"english"`` is ``nltk.corpus.stopwords.words('english')``; ``"english-without-negations"``
    that list less :data:`NEGATIONS`; ``"none"`` or ``None`` is the empty set; any other string
    is a file path, one word per line (``#`` starts a comment); an iterable of strings is taken
    as it is.
    """
    if spec is None or spec == "none":
        return frozenset()
    if not isinstance(spec, str):
        return frozenset(spec)
    if spec == "english-without-negations":
        return load_stop_words("english") - NEGATIONS
    if spec in _PACKAGED:
        return frozenset(_nltk_words(spec) or _packaged_words(spec))
    try:
        with open(spec, encoding="utf-8", errors="replace") as f:
            lines = (line.split("#", 1)[0].strip() for line in f)
            return frozenset(line for line in lines if line)
    except OSError as error:
        reason = error.strerror or str(error)
        raise TextnbError(f"cannot read stop-word file '{spec}': {reason} "
                          f"(use 'english', 'none' or a file with one word per line)") from None


def _nltk_words(language: str) -> list[str]:
    """NLTK's list when its stopwords corpus is installed, else [] (no download is attempted).

    The corpus is read where ``nltk.data.path`` looks by default, without importing NLTK:
    importing it takes over a second, which ``textnb train`` would pay on every run.
    """
    roots = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    roots += [os.path.expanduser("~/nltk_data")]
    roots += [os.path.join(sys.prefix, sub) for sub in ("nltk_data", "share/nltk_data", "lib/nltk_data")]
    roots += ["/usr/share/nltk_data", "/usr/local/share/nltk_data", "/usr/lib/nltk_data",
              "/usr/local/lib/nltk_data"]
    for root in roots:
        corpus = os.path.join(root, "corpora", "stopwords")
        try:
            with open(os.path.join(corpus, language), encoding="utf-8") as f:
                return f.read().split()
        except OSError:
            pass
        try:
            with zipfile.ZipFile(corpus + ".zip") as archive:
                return archive.read(f"stopwords/{language}").decode("utf-8").split()
        except (OSError, KeyError, zipfile.BadZipFile):
            pass
    return []


def _packaged_words(language: str) -> list[str]:
    text = resources.files("textnb").joinpath("data", _PACKAGED[language]).read_text("utf-8")
    return text.split()
