"""learn/filter races: a model file replaced while messages are scored → the count of scores that
mix two model versions (goal 0).

Each race scores one message with :class:`textnb.store.scorer.Scorer` (what ``textnb filter`` runs)
while another process keeps replacing the model file, as ``textnb learn`` does (a new file
renamed over the old one). Every score must equal, bit for bit, the score of the message under
one whole version, computed in advance; a score equal to neither, or an error, is counted as
mixed.

The command races too, as a user runs it: ``--command-races`` (default 50) fresh ``textnb
classify -m MODEL --format json -`` processes, the message on standard input, while the file is
replaced; each printed score must be the one that command prints with a whole version's file.

    python -m bench.race --races 1000

``run_races(n)`` is importable (tests/test_hostile_models.py runs a short one).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import args as options
from bench.common.corpora import ROOT
from bench.common.measure import ENV
from bench.common.systems import textnb_command

# Two versions of one model: the second has learned more (as after a `textnb learn`), so that
# its vocabulary, its weights and the places of its arrays in the file all differ.
TEXTS = ["cheap pills now", "cheap money now!!! $500", "win money, win cheap pills",
         "meeting at noon", "lunch at noon with notes", "notes from the meeting"] * 20
LABELS = ["spam", "spam", "spam", "ham", "ham", "ham"] * 20
LEARNED = [f"offer {i} cheap winner money pills prize {i * 7}" for i in range(200)]
MESSAGE = (b"Subject: cheap pills meeting\nFrom: someone@example.com\n\n"
           b"win cheap money now, notes from the meeting at noon, lunch, prize offer 3 winner 21\n")

# The replacing process: copy a version to a temporary name, rename it over the model, repeat.
_WRITER = """
import os, shutil, sys
model, versions = sys.argv[1], sys.argv[2:]
i = 0
while True:
    tmp = f"{model}.{i % 2}.race-tmp"
    shutil.copyfile(versions[i % len(versions)], tmp)
    os.replace(tmp, model)
    i += 1
"""


def run_races(n: int = 1000, seconds: float | None = None,
              directory: str | Path | None = None) -> dict:
    """Score MESSAGE n times (or until ``seconds`` have passed) while the model is replaced.

    Returns {"races", "mixed", "errors", "versions", "seconds"}: mixed counts scores equal to
    no whole version's score, errors counts scorings that raised (both should be 0).
    """
    from textnb import TextClassifier, save_model
    from textnb.documents.message import parse_message
    from textnb.store.scorer import Scorer

    with tempfile.TemporaryDirectory(prefix="bench-race-", dir=directory) as scratch:
        scratch = Path(scratch)
        first = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
        versions = [scratch / "v1.model", scratch / "v2.model"]
        save_model(first, versions[0])
        save_model(first.partial_fit(LEARNED, ["spam"] * len(LEARNED)), versions[1])
        document = parse_message(MESSAGE)
        expected = [Scorer(v).log_proba(document.text, document.fields) for v in versions]
        if expected[0] == expected[1]:
            raise RuntimeError("the two versions score the message alike: no race could show")
        model = scratch / "race.model"
        save_model(first, model)
        writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(model), *map(str, versions)])
        races = mixed = errors = 0
        start = time.perf_counter()
        try:
            time.sleep(0.2)  # the writer is replacing the file before the first race
            while races < n and (seconds is None or time.perf_counter() - start < seconds):
                races += 1
                try:
                    row = Scorer(model).log_proba(document.text, document.fields)
                except Exception:  # noqa: BLE001 — a failure to read one version is counted
                    errors += 1
                    continue
                mixed += row not in expected
        finally:
            writer.kill()
            writer.wait()
        return {"races": races, "mixed": mixed, "errors": errors, "versions": len(versions),
                "seconds": time.perf_counter() - start}


def run_command_races(n: int = 50, directory: str | Path | None = None) -> dict:
    """MESSAGE classified ``n`` times by fresh ``textnb classify --format json -`` processes
    while the model file is replaced: {"races", "mixed", "errors", "seconds"}, as run_races."""
    from textnb import TextClassifier, save_model

    env = {**ENV, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory(prefix="bench-race-", dir=directory) as scratch:
        scratch = Path(scratch)
        first = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
        versions = [scratch / "v1.model", scratch / "v2.model"]
        save_model(first, versions[0])
        save_model(first.partial_fit(LEARNED, ["spam"] * len(LEARNED)), versions[1])

        def classify(model: Path) -> subprocess.CompletedProcess:
            return subprocess.run([*textnb_command(), "classify", "-m", str(model), "--format",
                                   "json", "-"], input=MESSAGE, capture_output=True, env=env)

        def scored(done: subprocess.CompletedProcess):
            record = json.loads(done.stdout)
            return record["label"], record["log_odds"], record["probabilities"]

        expected = [scored(classify(v)) for v in versions]
        if expected[0] == expected[1]:
            raise RuntimeError("the two versions score the message alike: no race could show")
        model = scratch / "race.model"
        save_model(first, model)
        writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(model), *map(str, versions)])
        races = mixed = errors = 0
        start = time.perf_counter()
        try:
            time.sleep(0.2)
            while races < n:
                races += 1
                done = classify(model)
                if done.returncode != 0:
                    errors += 1
                    continue
                mixed += scored(done) not in expected
        finally:
            writer.kill()
            writer.wait()
        return {"races": races, "mixed": mixed, "errors": errors, "versions": len(versions),
                "seconds": time.perf_counter() - start}


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--races", type=int, default=1000, help="scorings (default 1000)")
    parser.add_argument("--seconds", type=float, help="stop after this long")
    parser.add_argument("--command-races", type=int, default=50,
                        help="textnb classify processes (default 50; 0: none)")
    args = parser.parse_args(argv)
    result = run_races(args.races, args.seconds)
    print(f"{result['races']} races in {result['seconds']:.1f} s against a model replaced "
          f"continuously ({result['versions']} versions): {result['mixed']} mixed-version "
          f"scores, {result['errors']} errors")
    failed = result["mixed"] + result["errors"]
    if args.command_races:
        command = run_command_races(args.command_races)
        print(f"the command: {command['races']} `textnb classify` processes in "
              f"{command['seconds']:.1f} s against the same replacing: {command['mixed']} "
              f"mixed-version scores, {command['errors']} errors")
        failed += command["mixed"] + command["errors"]
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
