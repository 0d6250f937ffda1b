#!/usr/bin/env python3
"""CPU a document of reading and tokenizing, this tree against another version's, interleaved.

Reading (``documents.read_bytes``: MIME, HTML, header fields) and tokenizing
(``Tokenizer.document``) are most of what training, classifying and the daemon spend a document
on, in Python. For each corpus — SpamAssassin (all 6,046 messages, and its multipart ones
apart), 20 Newsgroups bydate (all 18,846 posts) — and for the HTML parts of both
(``markup.html_text``), each version runs in a process of its own (``PYTHONPATH``), the
versions taking turns ``--rounds`` times; a run keeps the least CPU time (``process_time``) of
5 passes over every document, and the table gives each version's range over the rounds, in ms
a document. Wall times on a shared machine move by 10-30 % from run to run; this least CPU time
moves by a few per cent.

Run::

    git archive OLD textnb | tar -x -C /tmp/old
    python scripts/bench_parse.py --data corpora/full --baseline /tmp/old
"""

from __future__ import annotations

import argparse
import email
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PASSES = 5


def measure(data: Path) -> dict[str, float]:
    """This process's textnb: the least CPU time of PASSES passes, ms a document, per stage."""
    import textnb
    from textnb import TextClassifier, markup
    from textnb.documents import read_bytes
    if not Path(textnb.__file__).resolve().is_relative_to(Path.cwd().resolve()):
        raise SystemExit(f"textnb came from {textnb.__file__}, not from {Path.cwd()}")
    tokenizer = TextClassifier()._tokenizer()
    corpora = {"SpamAssassin": sorted((data / "spamassassin").glob("*/*")),
               "20 Newsgroups": sorted(data.glob("20news-bydate-*/*/*"))}
    html: list[str] = []
    spy = markup.html_text

    def keep(text, tags, hosts):
        html.append(text)
        return spy(text, tags, hosts)

    result = {}
    for name, paths in corpora.items():
        raws = [p.read_bytes() for p in paths if p.name != "cmds"]
        markup.html_text = keep
        documents = [read_bytes(raw) for raw in raws]
        markup.html_text = spy
        multipart = [raw for raw in raws if email.message_from_bytes(raw).is_multipart()]
        stages = {f"{name}: read": (lambda: [read_bytes(raw) for raw in raws], len(raws)),
                  f"{name}: tokenize": (lambda: [tokenizer.document(d.text, d.fields)
                                                 for d in documents], len(documents))}
        if multipart:
            stages[f"{name} multipart ({len(multipart)}): read"] = (
                lambda: [read_bytes(raw) for raw in multipart], len(multipart))
        for stage, (run, n) in stages.items():
            result[stage] = _least(run) / n * 1e3
    result[f"HTML parts ({len(html)}): html_text"] = \
        _least(lambda: [spy(text, {}, {}) for text in html]) / len(html) * 1e3
    return result


def _least(run) -> float:
    best = float("inf")
    for _ in range(PASSES):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="directory holding spamassassin/ and 20news-bydate-*/")
    parser.add_argument("--baseline", type=Path, required=True,
                        help="a source tree of textnb (the directory holding textnb/)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.data.resolve())))
        return 0
    trees = {"this tree": ROOT, "baseline": args.baseline.resolve()}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            done = subprocess.run([sys.executable, __file__, "--measure", "--data",
                                   str(args.data.resolve()), "--baseline", str(args.baseline)],
                                  capture_output=True, text=True, cwd=tree,
                                  env={**os.environ, "PYTHONPATH": str(tree)})
            if done.returncode != 0:
                raise SystemExit(f"{name} ({tree}) failed: {done.stderr.strip()[-500:]}")
            runs[name].append(json.loads(done.stdout))
    print(f"CPU ms a document, the least of {PASSES} passes a run, the range over {args.rounds} "
          f"interleaved runs:")
    print(f"  {'stage':<44} {'this tree':>15} {'baseline':>15}")
    for stage in runs["this tree"][0]:
        cells = []
        for name in trees:
            values = [run[stage] for run in runs[name]]
            cells.append(f"{min(values):.3f}-{max(values):.3f}")
        print(f"  {stage:<44} {cells[0]:>15} {cells[1]:>15}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
