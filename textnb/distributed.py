"""documents on a Dask cluster → counts per partition, on the workers → TextClassifier; and
log P(c|x) of many documents, computed where they are read.

Each worker reads (from paths), parses, tokenizes and counts its partitions with the
classifier's tokenizer — the ``counted_part`` that ``fit``'s joblib workers run — and sends back
only a partition's distinct terms, three arrays and its documents' digests, never its tokens.
Here the parts are stacked in partition order (:meth:`~textnb.text.vocabulary.Vocabulary.fit_parts`)
and the model adds up their rows per class: the count matrix, and so ``class_count_``,
``feature_count_``, the digests and every probability, equal single-machine training to the
bit. (Adding per-class sums on the workers instead would reorder the sums of fractional,
length-normalised counts and lose that.) Cutoffs (``spam_class``) and training on error then
run here, on the stacked matrix, as ``fit`` runs them.

Paths are sent, not bytes: a worker on another machine must see the documents under the same
paths (a shared file system, or copies). ``TextClassifier.fit`` under joblib's Dask backend
(``with joblib.parallel_backend("dask")``) spreads the same counting over the cluster too, but
sends the texts themselves.

Needs the extra: ``pip install 'textnb[dask]'``; dask is imported only when a function here is
called.
"""

from __future__ import annotations

import copy
import os
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from .text.features import SAMPLE_DOCUMENTS, check_training, counted_part, text_list
from . import defaults
from .classifier import TextClassifier
from .documents.sources import first_raw, read_raw, walk
from .errors import DocumentError, TextnbError
from .text.tokens import Tokenizer

# Seconds to wait for the scheduler: distributed's own default is 30, long for a typo.
CONNECT_TIMEOUT = 10
# Parts per worker thread: several even out their lengths (as TextClassifier._count does).
PARTS_PER_THREAD = 4

ErrorHandler = Callable[[str, str], None]


def connect(address: str, timeout: float | None = None):
    """A ``distributed.Client`` of the Dask scheduler at ``address`` (``tcp://HOST:8786``);
    TextnbError if it cannot be reached within ``timeout`` seconds (CONNECT_TIMEOUT)."""
    distributed = _import_distributed()
    try:
        return distributed.Client(address, timeout=timeout or CONNECT_TIMEOUT)
    except (OSError, ValueError, TypeError) as error:
        raise TextnbError(f"cannot reach the Dask scheduler at {address}: {error}") from None


def fit_bag(classifier: TextClassifier, bag: Any, client: Any = None) -> TextClassifier:
    """Fit ``classifier`` on a ``dask.bag`` of ``(text, label)`` pairs, each partition counted
    on a worker; the same model as ``classifier.fit(texts, labels)`` on the pairs in order.

    ``client``: a ``distributed.Client``; None computes with dask's default scheduler (the
    last Client made in this process, if any).

    >>> import dask.bag
    >>> pairs = [("cheap pills", "spam"), ("noon meeting", "ham"), ("cheap offer", "spam")]
    >>> bag = dask.bag.from_sequence(pairs, npartitions=2)
    >>> fit_bag(TextClassifier(stop_words="none"), bag).predict(["pills offer"]).tolist()
    ['spam']
    """
    from dask import delayed
    # Which n-grams to count may depend on the classes, how many texts there are and what
    # they are (ngram_range None): a pass for the classes and the count, and the first texts.
    # So may the stop words (stop_words "auto": how long the texts are, unless they are mail).
    classes, sample, documents = (), (), 0
    if classifier.ngram_range is None or defaults.stop_words_auto(classifier):
        classes, documents = _compute([bag.pluck(1).distinct(), bag.count()], client)
        sample = [text for text, _ in bag.take(SAMPLE_DOCUMENTS, warn=False)]
    classifier.ngram_range_ = classifier.default_ngram_range(classes, sample, documents)
    classifier._build(classes, sample)  # validates the settings, loads the stop words, as fit
    tokenizer = delayed(classifier._tokenizer(), pure=True)
    parts = _compute([delayed(_count_pairs)(tokenizer, part) for part in bag.to_delayed()],
                     client)
    return _fit(classifier, parts)


def fit_files(classifier: TextClassifier, files: Sequence[tuple[str, str]], client: Any = None,
              on_error: ErrorHandler | None = None) -> TextClassifier:
    """Fit ``classifier`` on ``(label, path)`` pairs of files (a file may be an mbox of many
    documents), read and counted on the workers; the same model as reading them in order here
    and calling ``fit``. ``on_error(source, reason)`` hears of each unreadable document (else
    the first raises DocumentError); a label left with no readable document is an error.

    ``client``: a ``distributed.Client``; None: the current one (``distributed.get_client``).
    """
    files = list(files)
    # The first files, read here too, tell full mail from other texts (ngram_range None).
    sample = first_raw([path for _, path in files[:20]], 20)
    classes = {label for label, _ in files}
    classifier.ngram_range_ = classifier.default_ngram_range(classes, sample, documents=len(files))
    classifier._build(classes, sample)
    client = client or _import_distributed().get_client()
    tokenizer = client.scatter(classifier._tokenizer(), broadcast=True)
    futures = client.map(_count_files, _split(files, _n_parts(client, len(files))),
                         tokenizer=tokenizer, pure=False)  # files change: never reuse a result
    results = client.gather(futures)
    _report(results, on_error)
    parts = [(counts, digests, labels) for counts, digests, labels, _ in results]
    read = {label for _, _, labels in parts for label in labels}
    missing = [label for label, _ in files if label not in read]
    if missing:
        raise DocumentError(f"no readable documents for class {missing[0]!r}")
    return _fit(classifier, parts)


def predict_log_proba_bag(classifier: TextClassifier, bag: Any, client: Any = None) -> np.ndarray:
    """log P(c|x) of a ``dask.bag`` of texts, each partition scored on a worker: ndarray of
    shape (n_documents, n_classes), rows in the bag's order, as ``classifier.predict_log_proba``."""
    from dask import delayed
    scorer = delayed(_single_process(classifier), pure=True)
    rows = _compute([delayed(_log_proba)(scorer, part) for part in bag.to_delayed()], client)
    return _rows(classifier, rows)


def classify_files(classifier: TextClassifier, paths: Sequence[str], client: Any = None,
                   on_error: ErrorHandler | None = None) -> tuple[list[str], np.ndarray]:
    """The sources of the documents under ``paths`` (files, mboxes, directories, Maildirs) and
    their log P(c|x), read and scored on the workers: the documents and rows ``read_raw`` and
    ``predict_log_proba`` give here, in the same order."""
    client = client or _import_distributed().get_client()
    units = list(_units(paths, on_error or _raise))
    scorer = client.scatter(_single_process(classifier), broadcast=True)
    futures = client.map(_classify_paths, _split(units, _n_parts(client, len(units))),
                         classifier=scorer, pure=False)
    results = client.gather(futures)
    _report(results, on_error)
    sources = [source for part_sources, _, _ in results for source in part_sources]
    return sources, _rows(classifier, [rows for _, rows, _ in results])


# -- on the workers ------------------------------------------------------------------------------

def _count_pairs(tokenizer: Tokenizer, pairs: Iterable[tuple[Any, Any]]):
    """A partition's counts, digests and labels."""
    labels: list = []

    def texts() -> Iterator[Any]:
        for text, label in pairs:
            labels.append(label)
            yield text

    counts, digests = counted_part(tokenizer, texts(), True)
    return counts, digests, labels


def _count_files(files: list[tuple[str, str]], tokenizer: Tokenizer):
    """Counts, digests and labels of the documents in ``files``, read one at a time, and the
    (source, reason) of those that could not be read."""
    skipped: list[tuple[str, str]] = []
    labels: list[str] = []

    def texts() -> Iterator[bytes]:
        for label, path in files:
            for _, raw in read_raw([path], on_error=lambda *problem: skipped.append(problem)):
                labels.append(label)
                yield raw

    counts, digests = counted_part(tokenizer, texts(), True)
    return counts, digests, labels, skipped


def _log_proba(classifier: TextClassifier, texts: list) -> np.ndarray | None:
    texts = text_list(texts)
    return classifier.predict_log_proba(texts) if texts else None


def _classify_paths(paths: list[str], classifier: TextClassifier):
    skipped: list[tuple[str, str]] = []
    read = list(read_raw(paths, on_error=lambda *problem: skipped.append(problem)))
    return [source for source, _ in read], _log_proba(classifier, [raw for _, raw in read]), skipped


# -- here ---------------------------------------------------------------------------------------

def _fit(classifier: TextClassifier, parts: list) -> TextClassifier:
    """The model of the parts' counts, stacked in order (as ``fit`` stacks its own parts)."""
    labels = [label for _, _, part_labels in parts for label in part_labels]
    check_training(labels, labels)
    return classifier._fit_counted([(counts, digests) for counts, digests, part_labels in parts
                                    if part_labels], labels)


def _single_process(classifier: TextClassifier) -> TextClassifier:
    """The fitted classifier, counting in the process it runs in: a Dask worker is the
    parallelism; joblib processes under it would only compete for its cores."""
    classifier._check_fitted()
    single = copy.copy(classifier)
    single.n_jobs = 1
    return single


def _rows(classifier: TextClassifier, parts: list) -> np.ndarray:
    rows = [part for part in parts if part is not None]
    return np.concatenate(rows) if rows else np.zeros((0, len(classifier.classes_)))


def _units(paths: Sequence[str], report: ErrorHandler) -> Iterator[str]:
    """The paths ``read_raw`` reads one by one: files, and Maildirs (read whole, so that their
    messages keep the sources and order they have when read here)."""
    for path in paths:
        if path == "-":
            raise ValueError("standard input cannot be read on a Dask worker; give file paths")
        if os.path.isdir(path):
            yield from (found for found, _ in walk(path, report))
        else:
            yield path


def _report(results: list, on_error: ErrorHandler | None) -> None:
    for problem in (problem for result in results for problem in result[-1]):
        (on_error or _raise)(*problem)


def _raise(source: str, reason: str) -> None:
    raise DocumentError(f"{source}: {reason}")


def _n_parts(client: Any, n_items: int) -> int:
    threads = sum(client.nthreads().values()) or 1
    return max(1, min(n_items, PARTS_PER_THREAD * threads))


def _split(items: list, n: int) -> list[list]:
    bounds = np.linspace(0, len(items), n + 1).astype(int).tolist()
    return [items[a:b] for a, b in zip(bounds, bounds[1:])]


def _compute(tasks: list, client: Any) -> list:
    if client is not None:
        return client.gather(client.compute(tasks))
    import dask
    return list(dask.compute(*tasks))


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise TextnbError("training on a Dask cluster needs dask.distributed: "
                          "pip install 'textnb[dask]'") from None
    return distributed
