"""A TextClassifier shared between threads: reads answer from one whole version while
partial_fit and unlearn run (the short version of python -m bench.threads)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from textnb import TextClassifier

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "spamassassin"
SPAM = [f.read_bytes() for f in sorted((CORPUS / "spam").iterdir())]
HAM = [f.read_bytes() for f in sorted((CORPUS / "ham").iterdir())]


@pytest.mark.parametrize("batch", [1, 40], ids=["one-by-one", "general-path"])
def test_readers_answer_from_one_whole_version_while_a_writer_learns(batch):
    clf = TextClassifier(n_jobs=1, spam_class="spam", training="full").fit(
        SPAM[:30] + HAM[:30], ["spam"] * 30 + ["ham"] * 30)
    probes = [SPAM[100], HAM[100], b"Subject: hello\n\nmeeting at noon, cheap pills"]
    versions = [clf.predict_log_proba(probes).tobytes()]
    answers: list[bytes] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                answers.append(clf.predict_log_proba(probes).tobytes())
                clf.decision_function(probes)
                clf.predict(probes)
            except BaseException as error:  # noqa: BLE001 - every failure is counted
                errors.append(error)

    readers = [threading.Thread(target=read) for _ in range(8)]
    for thread in readers:
        thread.start()
    new = SPAM[30:90] + HAM[30:90]
    labels = ["spam"] * 60 + ["ham"] * 60
    deadline = time.monotonic() + 3.0
    i = 0
    try:
        while time.monotonic() < deadline and i + batch <= len(new):
            clf.partial_fit(new[i:i + batch], labels[i:i + batch])
            versions.append(clf.predict_log_proba(probes).tobytes())
            if i % 3 == 0:  # and take one back
                clf.unlearn(new[i:i + 1], labels[i:i + 1])
                versions.append(clf.predict_log_proba(probes).tobytes())
            i += batch
    finally:
        stop.set()
        for thread in readers:
            thread.join()
    assert not errors, repr(errors[:3])
    assert len(versions) > 2 and len(answers) > 20
    known = set(versions)
    stray = [a for a in answers if a not in known]
    assert not stray, f"{len(stray)} of {len(answers)} answers match no version of the model"
    # Each answer is a version's own numbers, not merely close to one.
    assert np.frombuffer(answers[-1]).size == 2 * len(probes)
