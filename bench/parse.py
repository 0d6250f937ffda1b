"""CPU a document of reading and tokenizing, this tree against another version's, interleaved.

Reading (``documents.read_bytes``: MIME, HTML, header fields) and tokenizing
(``Tokenizer.document``) are most of what training, classifying and the daemon spend a document
on, in Python. For each corpus — SpamAssassin (all 6,046 messages, and its multipart ones
apart), 20 Newsgroups bydate (all 18,846 posts) — and for the HTML parts of both
(``markup.html_text``), each version runs in a process of its own (``PYTHONPATH``), the
versions taking turns ``--rounds`` times; a run keeps the least CPU time (``process_time``) of
5 passes over every document, and the table gives each version's range over the rounds, in ms
a document. Wall times on a shared machine move by 10-30 % from run to run; this least CPU time
moves by a few per cent. Tokenizing is ``TextClassifier().tokenize`` of the read documents.

Beside the stages, the command they make up, at its defaults: ``textnb train`` of each corpus
(SpamAssassin's parts as spam and ham, 20news-bydate-train/), each version's in a fresh process,
its CPU time (worker processes included) in ms a document (``--no-command`` leaves it out).

A baseline tree without its own compiled modules (textnb/_*.so) runs this tree's where textnb
is installed in editable mode (setuptools' finder supplies them): compare trees whose C code is
the same, or build the baseline's modules in place first.

Run (from the repository root)::

    git archive OLD textnb | tar -x -C /tmp/old
    python -m bench.parse --baseline /tmp/old          # corpora/full, else the shared archives
    python -m bench.parse --data corpora/full --baseline /tmp/old
"""

from __future__ import annotations

import argparse
import email
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import BenchError, args as options
from bench.common.corpora import ROOT, SPAM_PARTS, list_spam, news_dir, news_files, spam_dir
from bench.common.measure import ENV, measure
from bench.common.systems import textnb_command

PASSES = 5


def measure_stages(spam: Path, news: Path) -> dict[str, float]:
    """This process's textnb: the least CPU time of PASSES passes, ms a document, per stage."""
    import textnb
    from textnb import TextClassifier
    from textnb.documents import html as markup
    from textnb.documents.message import read_bytes
    if not Path(textnb.__file__).resolve().is_relative_to(Path.cwd().resolve()):
        raise SystemExit(f"textnb came from {textnb.__file__}, not from {Path.cwd()}")
    classifier = TextClassifier()
    corpora = {"SpamAssassin": [Path(p) for p in list_spam(spam)[0]],
               "20 Newsgroups": [p for split in ("20news-bydate-train", "20news-bydate-test")
                                 for p in news_files(news / split)[0]]}
    html: list[str] = []
    spy = markup.html_text

    def keep(text, tags, hosts):
        html.append(text)
        return spy(text, tags, hosts)

    result = {}
    for name, paths in corpora.items():
        raws = [p.read_bytes() for p in paths]
        markup.html_text = keep
        documents = [read_bytes(raw) for raw in raws]
        markup.html_text = spy
        multipart = [raw for raw in raws if email.message_from_bytes(raw).is_multipart()]
        stages = {f"{name}: read": (lambda: [read_bytes(raw) for raw in raws], len(raws)),
                  f"{name}: tokenize": (lambda: classifier.tokenize(documents), len(documents))}
        if multipart:
            stages[f"{name} multipart ({len(multipart)}): read"] = (
                lambda: [read_bytes(raw) for raw in multipart], len(multipart))
        for stage, (run, n) in stages.items():
            result[stage] = _least(run) / n * 1e3
    result[f"HTML parts ({len(html)}): html_text"] = \
        _least(lambda: [spy(text, {}, {}) for text in html]) / max(len(html), 1) * 1e3
    return result


def command_cpu(spam: Path, news: Path, tree: Path) -> dict[str, float]:
    """CPU ms a document of ``textnb train`` (defaults) of each corpus, ``tree``'s textnb."""
    found = {}
    with tempfile.TemporaryDirectory(prefix="parse-") as scratch:
        model = Path(scratch) / "textnb.model"
        for name, sources, n in (
                ("SpamAssassin", [f"--label={label}={spam / part}" for part, label in
                                  SPAM_PARTS.items() if (spam / part).is_dir()],
                 len(list_spam(spam)[0])),
                ("20 Newsgroups", [str(news / "20news-bydate-train")],
                 len(news_files(news / "20news-bydate-train")[0]))):
            usage = measure([*textnb_command(), "train", "-q", "-m", str(model), *sources], tree)
            found[f"{name}: textnb train (command), CPU"] = usage.cpu / n * 1e3
    return found


def _least(run) -> float:
    best = float("inf")
    for _ in range(PASSES):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--data", type=Path,
                        help="directory holding spamassassin/ and 20news-bydate-*/ (default: "
                             "the corpora located as every study locates them)")
    parser.add_argument("--spam-data", type=Path, help=argparse.SUPPRESS)  # for --measure
    parser.add_argument("--baseline", type=Path, required=True,
                        help="a source tree of textnb (the directory holding textnb/)")
    parser.add_argument("--rounds", type=int, default=2)
    options.no_command(parser)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure_stages(args.spam_data, args.data)))
        return 0
    return options.run("bench.parse", lambda: run(args))


def run(args) -> None:
    spam = spam_dir(args.data / "spamassassin" if args.data else None)
    news = news_dir(args.data)
    trees = {"this tree": ROOT, "baseline": args.baseline.resolve()}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            # The working directory and first on the path: the tree's textnb; then this
            # tree's bench, which a baseline may not have.
            done = subprocess.run([sys.executable, "-m", "bench.parse", "--measure",
                                   "--spam-data", str(spam), "--data", str(news),
                                   "--baseline", str(args.baseline)],
                                  capture_output=True, text=True, cwd=tree,
                                  env={**ENV, "PYTHONPATH": os.pathsep.join([str(tree), str(ROOT)])})
            if done.returncode != 0:
                raise BenchError(f"{name} ({tree}) failed: {done.stderr.strip()[-500:]}")
            found = json.loads(done.stdout)
            if args.command:
                found.update(command_cpu(spam, news, tree))
            runs[name].append(found)
    print(f"CPU ms a document, the least of {PASSES} passes a run, the range over {args.rounds} "
          f"interleaved runs:")
    print(f"  {'stage':<44} {'this tree':>15} {'baseline':>15}")
    for stage in runs["this tree"][0]:
        cells = []
        for name in trees:
            values = [run[stage] for run in runs[name]]
            cells.append(f"{min(values):.3f}-{max(values):.3f}")
        print(f"  {stage:<44} {cells[0]:>15} {cells[1]:>15}")


if __name__ == "__main__":
    sys.exit(main())
