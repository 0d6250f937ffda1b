"""A TextClassifier shared between threads: 8 reader threads call predict_log_proba, predict
and decision_function while a writer learns (partial_fit, one message at a time and in
batches) and unlearns, for --seconds → exceptions and answers matching no version (goal 0, 0).

Every version the writer makes is scored on the probe messages by the writer itself; each
reader's answer must equal one of them bit for bit. The messages are SpamAssassin's (the
bundled sample by default).

    python -m bench.threads --seconds 60
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from bench.common import args as options
from bench.common.corpora import list_spam, spam_dir
from textnb import TextClassifier


def run(seconds: float, data: Path, readers: int = 8) -> dict:
    """{"versions", "answers", "exceptions", "stray"} of ``seconds`` of readers and a writer."""
    paths, labels = list_spam(data)
    raws = [Path(p).read_bytes() for p in paths]
    labels = labels.tolist()
    spam = [i for i, label in enumerate(labels) if label == "spam"]
    ham = [i for i, label in enumerate(labels) if label != "spam"]
    order = [i for pair in zip(spam, ham) for i in pair]  # the two classes in turn
    raws, labels = [raws[i] for i in order], [labels[i] for i in order]
    start = 60
    clf = TextClassifier(n_jobs=1, spam_class="spam", training="full").fit(raws[:start],
                                                                          labels[:start])
    probes = raws[start:start + 5]
    versions = {clf.predict_log_proba(probes).tobytes()}
    answers, exceptions = [], []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                answers.append(clf.predict_log_proba(probes).tobytes())
                clf.predict(probes)
                clf.decision_function(probes)
            except Exception as error:  # noqa: BLE001 - every failure is counted
                exceptions.append(repr(error))

    threads = [threading.Thread(target=read) for _ in range(readers)]
    for thread in threads:
        thread.start()
    deadline, i, step = time.monotonic() + seconds, start + 5, 0
    try:
        while time.monotonic() < deadline:
            batch = 1 if step % 4 else 20  # the row path, and now and then the general one
            if i + batch > len(raws):  # round again: the messages are learned once more
                i = start + 5
            texts, y = raws[i:i + batch], labels[i:i + batch]
            try:
                clf.partial_fit(texts, y)
            except ValueError:
                pass
            versions.add(clf.predict_log_proba(probes).tobytes())
            if step % 3 == 0:
                try:
                    clf.unlearn(texts[:1], y[:1])
                    versions.add(clf.predict_log_proba(probes).tobytes())
                except ValueError:
                    pass
            i += batch
            step += 1
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    stray = sum(a not in versions for a in answers)
    return {"versions": len(versions), "answers": len(answers), "exceptions": len(exceptions),
            "stray": stray, "first_exceptions": exceptions[:3]}


def main() -> int:
    parser = options.parser(__name__, __doc__)
    options.spam_data(parser)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--readers", type=int, default=8)
    args = parser.parse_args()

    def work() -> int:
        data = args.data or Path(__file__).resolve().parents[1] / "corpora" / "spamassassin"
        found = run(args.seconds, spam_dir(data, args.archive), args.readers)
        print(f"{args.readers} readers and a writer for {args.seconds:.0f} s: "
              f"{found['versions']} versions, {found['answers']} answers, "
              f"{found['exceptions']} exceptions, {found['stray']} answers matching no version")
        for error in found["first_exceptions"]:
            print(f"  {error}")
        return 0 if not found["exceptions"] and not found["stray"] else 1

    return options.run("bench.threads", work)


if __name__ == "__main__":
    raise SystemExit(main())
