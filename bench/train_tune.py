"""What ``textnb train --tune`` costs against a plain ``textnb train``, and what it chooses.

On 20 Newsgroups bydate, in one run: ``textnb train 20news-bydate-train/`` and ``textnb train
--tune 20news-bydate-train/`` (each ``--repeat`` times, a fresh process each, the files in the
page cache), their wall and CPU time (user + system, worker processes included) and peak RSS,
the ratio of the two (issue #9's bound: at most 10x), the settings ``--tune`` chose with their
cross-validated accuracy (``textnb info``), and both models' accuracy on 20news-bydate-test/
(``textnb evaluate``). Both are the command as a user types it (``textnb train`` at its
defaults is the reference). scikit-learn's TF-IDF + LogisticRegression is in bench.sentiment;
the grid of settings behind the defaults is bench.tune's.

Run (from the repository root)::

    python -m bench.train_tune            # corpora/full/20news-bydate, else the shared archive
    python -m bench.train_tune --news-data corpora/full/20news-bydate --repeat 3

A run takes about a minute on 2 cores (``--repeat 1``).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import BenchError, args as options
from bench.common.measure import measure, warm
from bench.common.report import table as _table
from bench.common.systems import textnb_command
from bench.train import news_dirs

GOAL = 10.0


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--news-data", type=Path, help="the 20 Newsgroups bydate directory")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command (median)")
    args = parser.parse_args(argv)

    def work() -> None:
        with tempfile.TemporaryDirectory(prefix="bench-tune-") as scratch:
            print(report(args.news_data, Path(scratch), args.repeat), flush=True)
    return options.run("bench.train_tune", work)


def report(data: Path | None, scratch: Path, repeat: int) -> str:
    train, test = news_dirs(data)
    warm([str(p) for p in sorted(train.rglob("*")) + sorted(test.rglob("*")) if p.is_file()])
    textnb = textnb_command()
    rows, measured = [], {}
    for name, flags in (("train", []), ("train --tune", ["--tune"])):
        model = scratch / f"{name.replace(' --', '-')}.model"
        runs = [measure([*textnb, "train", "-q", "--model", str(model), *flags, str(train)])
                for _ in range(repeat)]
        wall, cpu, rss = (statistics.median(column) for column in zip(*runs))
        accuracy = _accuracy(textnb, model, test)
        measured[name] = (wall, cpu, model)
        rows.append([f"textnb {name}", f"{wall:.2f}", f"{cpu:.2f}", f"{rss:.0f}", f"{accuracy:.4f}"])
    (plain_wall, plain_cpu, _), (tune_wall, tune_cpu, tuned) = measured.values()
    info = json.loads(subprocess.run([*textnb, "info", "--format", "json", "--model", str(tuned)],
                                     capture_output=True, text=True, check=True).stdout)
    best = info.get("tuning", {}).get("best", {})
    lines = [f"20 Newsgroups bydate: train on {train.name}/, accuracy on {test.name}/ "
             f"(median of {repeat} run{'s' if repeat > 1 else ''} each):",
             _table(["command", "wall s", "CPU s", "peak RSS MiB", "test accuracy"], rows),
             f"--tune / plain: wall {tune_wall / plain_wall:.1f}x, CPU {tune_cpu / plain_cpu:.1f}x "
             f"(goal <= {GOAL:.0f}x)",
             "chosen: " + ", ".join(f"{key} {best[key]}" for key in
                                    ("model", "alpha", "ngram_range", "stop_words", "tf", "norm")
                                    if key in best)
             + (f"; CV accuracy {best['mean']:.4f} +- {best['sd']:.4f}" if "mean" in best else "")]
    return "\n".join(lines)


def _accuracy(textnb: list[str], model: Path, test: Path) -> float:
    done = subprocess.run([*textnb, "evaluate", "--format", "json", "--model", str(model),
                           str(test)], capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"textnb evaluate failed: {done.stderr.strip()[-300:]}")
    return float(json.loads(done.stdout)["accuracy"])


if __name__ == "__main__":
    sys.exit(main())
