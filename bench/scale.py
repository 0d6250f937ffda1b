"""textnb train on 10k, 100k and 1M documents sampled from a model of 20 Newsgroups: time, memory.

The documents are drawn from a multinomial Naive Bayes model trained on the real
20news-bydate-train posts, the way a trained generative model samples new data (Mitchell's
Machine Learning, on Naive Bayes as a model of how documents are generated): choose the class by the prior P(c), a length (uniformly 50 to 100 words
by default: short posts, so that a million fit on a disk), then each word from P(w|c) — with a
small α (0.01 by default, so the words are the class's own rather than smoothing noise), over
the terms of the body (header-field tokens, "subject:...", are left out). A share of the words
(``--novel``, 1 % by default) is replaced by a word never used before, as misspellings, names
and numbers keep real vocabularies growing with the corpus (Heaps' law); without them the
vocabulary could never pass the source model's.

Each size is written as one mbox file per class (``<group>.mbox``: 20 files, not a million
inodes) and trained on with the command at its defaults, in its own process::

    textnb train -q -m MODEL DIR/*.mbox [--hash-bits N]

(many classes and no spam class: ``--training auto``, the default, learns every document, as the
``--training full`` these runs once passed does)

timed, with the peak RSS of the ``textnb`` process (its ``ru_maxrss``, as GNU time reports it:
a process forked from this one, which holds the source model, would inherit this one's peak at
exec) and the peak of the sum over it and its worker processes (sampled from /proc every
0.2 s), and the model file's size. Linear time means the 100k and 1M times are 10× and 100× the 10k one.

With ``--mail DIR`` (the SpamAssassin parts), the documents are drawn from a model of its spam
and ham instead and written to ``spam.mbox`` and ``ham.mbox``, and trained on with the defaults:
two-class mail, whose cutoffs are cross-validated, over every message
at once up to ``CUTOFFS_MAX_BYTES`` of files and on a sample of them beyond. ``--attach KB``
gives each message an attachment of that many kB (random bytes, base64), as office mail has:
what training holds at once must not grow with the messages' size.

Run (from the repository root)::

    python -m bench.scale                          # 10k, 100k, 1M; exact and --hash-bits 20
    python -m bench.scale --sizes 10000 100000 --hash-bits 18 --keep /tmp/scale
    python -m bench.scale --mail corpora/full/spamassassin --hash-bits
    python -m bench.scale --mail corpora/full/spamassassin --sizes 2400 --attach 400 --hash-bits
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import BenchError, args as options
from bench.common.corpora import ROOT, list_spam, news_dir, news_files
from bench.common.measure import ENV, tree_rss_kib
from bench.common.report import table
from bench.common.systems import textnb_command

SIZES = [10_000, 100_000, 1_000_000]
MBOX_FROM = b"From generated@example.com Sat Jan  1 00:00:00 2000\n"
# A relay, as full mail has (so two-class mail counts words, not word pairs, by default).
MAIL_HEADER = b"Received: from relay.example.com ([192.0.2.1]) by mx.example.org\n"
# --attach: the words as a text part, then the attachment.
MULTIPART = b'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="part"\n'
ATTACHED = (b"--part\nContent-Type: text/plain\n\n%s--part\nContent-Type: application/octet-stream"
            b"\nContent-Transfer-Encoding: base64\n"
            b'Content-Disposition: attachment; filename="data.bin"\n\n%s')


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.news_data(parser)
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES, metavar="N")
    parser.add_argument("--hash-bits", type=int, nargs="*", default=[20], metavar="N",
                        help="also train with these --hash-bits (none: exact only)")
    parser.add_argument("--no-exact", action="store_true", help="only the hashed runs")
    parser.add_argument("--words", type=int, nargs=2, default=[50, 100], metavar=("MIN", "MAX"))
    parser.add_argument("--novel", type=float, default=0.01, help="share of never-seen words")
    parser.add_argument("--alpha", type=float, default=0.01, help="α of the source model")
    parser.add_argument("--jobs", type=int, help="textnb train -j (default: textnb's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-rss", type=float, default=12.0, metavar="GB",
                        help="stop a training whose processes pass this much memory together "
                             "(default 12; the machine is not this script's alone)")
    parser.add_argument("--mail", type=Path, metavar="DIR",
                        help="sample two-class mail from the SpamAssassin parts in DIR "
                             "(spam/, spam_2/, easy_ham/, ...) and train with the defaults")
    parser.add_argument("--attach", type=int, default=0, metavar="KB",
                        help="with --mail: an attachment of KB kB in each message (default none)")
    parser.add_argument("--keep", type=Path, help="write the documents here and keep them "
                                                  "(reused if already there)")
    parser.add_argument("--json", type=Path, help="also write the measurements to this file")
    args = parser.parse_args(argv)
    return options.run("bench.scale", lambda: run(args))


def run(args) -> None:
    with tempfile.TemporaryDirectory(prefix="benchscale-") as scratch:
        scratch = Path(scratch)
        work = args.keep or scratch
        work.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(work).free
        # Bytes a document of ≤ 100 words takes, From_ line included, and its attachment.
        need = sum(args.sizes) * (700 + 1400 * args.attach)
        if free < need:
            raise BenchError(f"{need / 1e9:.1f} GB needed in {work}, {free / 1e9:.1f} GB free")
        source = None
        results = []
        for size in args.sizes:
            corpus = work / (f"{'mail' if args.mail else 'docs'}-{size}"
                             + (f"-attach{args.attach}" if args.mail and args.attach else ""))
            if not (corpus / "done").exists():
                if source is None and args.mail:
                    print(f"source model: SpamAssassin from {args.mail}, α = {args.alpha}",
                          flush=True)
                    paths, labels = list_spam(args.mail)
                    source = source_model([Path(p) for p in paths], list(labels), args.alpha)
                elif source is None:
                    data = news_dir(args.data, args.archive)
                    print(f"source model: 20news-bydate-train from {data}, α = {args.alpha}",
                          flush=True)
                    source = source_model(*news_files(data / "20news-bydate-train"), args.alpha)
                t0 = time.perf_counter()
                written = generate(source, corpus, size, args.words, args.novel,
                                   args.seed + size, header=MAIL_HEADER if args.mail else b"",
                                   attach=args.attach if args.mail else 0)
                print(f"  generated {size:,} documents ({written / 1e6:.0f} MB) in "
                      f"{time.perf_counter() - t0:.0f} s", flush=True)
            runs = ([] if args.no_exact else [None]) + list(args.hash_bits)
            for bits in runs:
                r = train(corpus, work / "model", bits, args.jobs, int(args.max_rss * 2**20))
                r.update(documents=size, hash_bits=bits)
                results.append(r)
                print(f"  train {size:>9,} {_name(bits):>8}: {r['seconds']:7.1f} s (CPU {r['cpu_seconds']:.0f} s), "
                      f"peak RSS {r['rss_kib'] / 1024:6.0f} MiB (with workers "
                      f"{r['tree_kib'] / 1024:6.0f}), model {r['model_bytes'] / 1e6:.1f} MB"
                      + ("" if r["ok"] else f"  FAILED: {r['error']}"), flush=True)
    print()
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


def _name(bits: int | None) -> str:
    return "exact" if bits is None else f"hash {bits}"



def source_model(paths: list[Path], labels: list[str], alpha: float):
    """(terms, prior, cdf) of a multinomial model of the documents' body terms: cdf[c] is the
    cumulative P(w|c) = (n_wc + α) / (n_c + α|V|) over the terms."""
    import numpy as np
    from textnb import TextClassifier

    clf = TextClassifier(model="multinomial", alpha=alpha, fit_prior=True, norm=None,
                         stop_words="none").fit([p.read_bytes() for p in paths], labels)
    body = np.array([":" not in t for t in clf.vocabulary_.terms_])
    terms = np.array(clf.vocabulary_.terms_, dtype=object)[body]
    counts = clf.model_.feature_count_[:, body] + alpha
    cdf = np.cumsum(counts / counts.sum(axis=1, keepdims=True), axis=1)
    prior = clf.model_.class_count_ / clf.model_.class_count_.sum()
    return terms, clf.classes_.tolist(), prior, cdf


def generate(source, directory: Path, size: int, words: list[int], novel: float,
             seed: int, chunk: int = 20_000, header: bytes = b"", attach: int = 0) -> int:
    """Write ``size`` sampled documents as one mbox per class, each with ``header`` (fields)
    above its words, and with ``attach`` kB of random bytes as a base64 attachment if given;
    the bytes written."""
    import base64

    import numpy as np

    terms, classes, prior, cdf = source
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    files = {c: open(directory / f"{c}.mbox", "wb") for c in classes}
    fresh, written = 0, 0
    try:
        for start in range(0, size, chunk):
            n = min(chunk, size - start)
            label = rng.choice(len(classes), size=n, p=prior)
            length = rng.integers(words[0], words[1] + 1, size=n)
            ends = np.cumsum(length)
            owner = np.repeat(label, length)
            ids = np.empty(ends[-1], dtype=np.int64)
            for c in np.unique(label):
                at = np.flatnonzero(owner == c)
                ids[at] = np.minimum(np.searchsorted(cdf[c], rng.random(at.size)),
                                     len(terms) - 1)
            words_ = terms[ids]
            new = np.flatnonzero(rng.random(ids.size) < novel)
            words_[new] = [_novel_word(fresh + i) for i in range(new.size)]
            fresh += new.size
            for c, a, b in zip(label.tolist(), (ends - length).tolist(), ends.tolist()):
                body = " ".join(words_[a:b]).encode() + b"\n"
                if attach:
                    data = base64.encodebytes(rng.bytes(attach * 768))  # 4/3 of it: attach kB
                    body = (ATTACHED % (body, data)) + b"--part--\n"
                    text = MBOX_FROM + header + MULTIPART + b"\n" + body + b"\n"
                else:
                    text = MBOX_FROM + header + b"\n" + body + b"\n"
                files[classes[c]].write(text)
                written += len(text)
    finally:
        for f in files.values():
            f.close()
    (directory / "done").write_text(f"{size}\n")
    return written


def _novel_word(i: int) -> str:
    """A word no source term is: "qz" and i in base 26 letters (the tokenizer keeps letters)."""
    letters = []
    while True:
        i, r = divmod(i, 26)
        letters.append(chr(97 + r))
        if not i:
            return "qz" + "".join(reversed(letters))


def train(corpus: Path, model: Path, bits: int | None, jobs: int | None, max_kib: int) -> dict:
    """``textnb train -q`` of the mboxes at its defaults (``--hash-bits``, ``-j`` if given):
    wall and CPU time, peak RSS of the textnb process and of it with its workers, model size."""
    command = [*textnb_command(), "train", "-q",
               "-m", str(model), *sorted(str(p) for p in corpus.glob("*.mbox"))]
    if bits is not None:
        command += ["--hash-bits", str(bits)]
    if jobs is not None:
        command += ["-j", str(jobs)]
    env = {**ENV, "PYTHONPATH": str(ROOT)}
    if model.exists():
        model.unlink()
    gnu_time = Path("/usr/bin/time")
    report = model.with_suffix(".rss")
    if gnu_time.exists():
        command = [str(gnu_time), "-f", "%U %S %M", "-o", str(report)] + command
    t0 = time.perf_counter()
    # A session of its own: --max-rss stops time, textnb and its workers together.
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            peak[0] = max(peak[0], tree_rss_kib(process.pid))
            if peak[0] > max_kib:
                os.killpg(process.pid, signal.SIGKILL)
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - t0
    stop.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    lines = stderr.decode(errors="replace").strip().splitlines()
    if peak[0] > max_kib:
        lines.append(f"stopped at {peak[0] / 2**20:.1f} GB (--max-rss)")
    if gnu_time.exists() and report.exists():  # time's own last line (after any warning)
        user, system, rss = report.read_text().split()[-3:]
        cpu, rss = float(user) + float(system), int(rss)
    else:
        cpu, rss = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
    return {"ok": process.returncode == 0, "error": lines[-1] if lines else "",
            "seconds": seconds, "cpu_seconds": cpu, "rss_kib": rss, "tree_kib": max(peak[0], rss),
            "model_bytes": model.stat().st_size if model.exists() else 0}



def report(results: list[dict]) -> str:
    rows, first = [], {}
    for r in results:
        base = first.setdefault(r["hash_bits"], r)
        scale = r["documents"] / base["documents"]
        rows.append([f"{r['documents']:,}", _name(r["hash_bits"]),
                     f"{r['seconds']:.1f}" if r["ok"] else "failed",
                     f"{r['seconds'] / base['seconds'] / scale:.2f}",
                     f"{r.get('cpu_seconds', 0):.1f}",
                     f"{r.get('cpu_seconds', 0) / max(base.get('cpu_seconds', 0), 1e-9) / scale:.2f}",
                     f"{r['documents'] / r['seconds']:,.0f}",
                     f"{r['rss_kib'] / 1024:.0f}", f"{r['tree_kib'] / 1024:.0f}",
                     f"{r['model_bytes'] / 1e6:.1f}"])
    return "\n".join([
        table(["documents", "vocabulary", "train s", "s/doc ÷ smallest's",
                           "CPU s", "CPU/doc ÷ smallest's",
                           "doc/s", "peak RSS MiB", "with workers MiB", "model MB"], rows),
        "\ntrain s: `textnb train -q` (the defaults) wall time, "
        "reading the mboxes included; "
        "s/doc ÷ smallest's: 1.00 is linear time. CPU s: user + system time of the textnb "
        "process and of the worker processes that tokenize, which it waits for: less "
        "sensitive to a busy machine than wall time. Peak RSS: the textnb process's ru_maxrss; "
        "with workers: the peak sum over it and its worker processes, sampled every 0.2 s."])


if __name__ == "__main__":
    sys.exit(main())
