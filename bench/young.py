"""Young models: what a model of 30 spam and 30 ham does with the mail that comes next.

A user's first folders are small. ``textnb train`` on them (``TextClassifier(spam_class=
"spam")`` at its defaults, as the command makes it) extrapolates the spam cutoff far above its
few ham and keeps an unsure band (textnb.decision.cutoffs.young_band), so that the spam it
misses lands in the unsure pile the user trains on, not in the inbox: bogofilter's workflow.
The goal (issue #41): no ham called spam, at least 90 % of the new spam in spam or unsure, at
most 25 % of the new ham unsure, on every draw.

On SpamAssassin (``--data`` with spam/ spam_2/ easy_ham/ easy_ham_2/): each draw trains on
``--size`` spam of spam/ and as many ham of easy_ham/ — the first by name, then ``--draws``
random draws (``numpy.random.default_rng(seed)``, seeds 1, 2, ...) — and classifies every
message of the newer spam_2/ and easy_ham_2/. On a directory of spam/ and ham/ alone (the
bundled sample, corpora/spamassassin) each draw trains on that many of each and classifies
the rest.

Per draw, for textnb and for bogofilter trained on the same messages (when on PATH; its
Spam/Unsure/Ham at cutoffs 0.99 / 0.45): the ham called spam, the share of the new spam in
spam or unsure ("flagged"), of it called spam, of the new ham unsure; textnb's cutoffs; and
what any ham cutoff allows on that draw's own test scores, chosen in hindsight ("hindsight":
the most spam flagged with at most 25 % of the ham above the ham cutoff, and the least ham
above it with at least 90 % of the spam): a draw whose ranking allows no cutoff meeting both
cannot meet the goal by cutoffs alone.

Run (from the repository root)::

    python -m bench.young                  # the shared archive unpacked into the cache
    python -m bench.young --draws 15
    python -m bench.young --data corpora/spamassassin --size 30 --draws 3   # seconds
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from bench.common import BenchError
from bench.common import args as options
from bench.common.corpora import spam_dir
from bench.common.report import table
from bench.common.systems import (bogofilter_classify, bogofilter_path, bogofilter_register,
                                  documents)

# The goal: at least this share of the new spam flagged (spam or unsure), at most this share of
# the new ham unsure.
FLAGGED = 0.90
HAM_UNSURE = 0.25


def files(directory: Path) -> list[str]:
    return sorted(str(p) for p in directory.iterdir() if p.is_file() and p.name != "cmds")


def parts(data: Path) -> tuple[list[str], list[str], list[str] | None, list[str] | None]:
    """(training spam, training ham, newer spam, newer ham): spam/ easy_ham/ spam_2/
    easy_ham_2/, or spam/ ham/ and None (the rest of them is tested)."""
    if all((data / p).is_dir() for p in ("spam", "easy_ham", "spam_2", "easy_ham_2")):
        return (files(data / "spam"), files(data / "easy_ham"), files(data / "spam_2"),
                files(data / "easy_ham_2"))
    if (data / "spam").is_dir() and (data / "ham").is_dir():
        return files(data / "spam"), files(data / "ham"), None, None
    raise BenchError(f"'{data}' holds neither spam/ easy_ham/ spam_2/ easy_ham_2/ nor spam/ ham/")


def draw(spam: list[str], ham: list[str], size: int, seed: int | None) -> tuple[list, list]:
    """``size`` of each: the first by name (seed None), else drawn by the seed."""
    if size > min(len(spam), len(ham)):
        raise BenchError(f"--size {size} is more than the {min(len(spam), len(ham))} messages "
                         f"of a class")
    if seed is None:
        return spam[:size], ham[:size]
    rng = np.random.default_rng(seed)
    return ([spam[i] for i in sorted(rng.choice(len(spam), size, replace=False))],
            [ham[i] for i in sorted(rng.choice(len(ham), size, replace=False))])


def hindsight(score: np.ndarray, is_spam: np.ndarray) -> tuple[float, float]:
    """(the most spam flagged with at most HAM_UNSURE of the ham above the ham cutoff, the
    least ham above it with at least FLAGGED of the spam), any cutoff, chosen on ``score``."""
    ham, spam = score[~is_spam], score[is_spam]
    at_ham = np.quantile(ham, 1 - HAM_UNSURE, method="higher")   # ≤ 25 % of the ham above
    at_spam = np.quantile(spam, 1 - FLAGGED, method="lower")     # ≥ 90 % of the spam at/above
    return float(np.mean(spam > at_ham)), float(np.mean(ham >= at_spam))


def shares(status: np.ndarray, is_spam: np.ndarray) -> dict:
    return {"ham_spam": int(np.sum(status[~is_spam] == "spam")),
            "flagged": float(np.mean(status[is_spam] != "ham")),
            "spam": float(np.mean(status[is_spam] == "spam")),
            "ham_unsure": float(np.mean(status[~is_spam] == "unsure"))}


def run_draw(train_spam: list[str], train_ham: list[str], test: list[str], is_spam: np.ndarray,
             bogofilter: str | None) -> dict:
    """textnb's (and bogofilter's) figures for one draw."""
    from textnb import TextClassifier
    size = len(train_spam)
    clf = TextClassifier(spam_class="spam").fit(documents(train_spam + train_ham),
                                                ["spam"] * size + ["ham"] * len(train_ham))
    test_docs = documents(test)
    log_proba = clf.predict_log_proba(test_docs)
    s = list(clf.classes_).index("spam")
    score = log_proba[:, s] - log_proba[:, 1 - s]
    cut = clf.cutoffs_
    status = np.where(score >= cut["spam"], "spam", np.where(score <= cut["ham"], "ham", "unsure"))
    row = {"textnb": {**shares(status, is_spam), "cutoffs": (cut["spam"], cut["ham"]),
                      "training": cut.get("training"), "hindsight": hindsight(score, is_spam)}}
    if bogofilter:
        with tempfile.TemporaryDirectory(prefix="bench-young-") as db:
            bogofilter_register(bogofilter, Path(db), train_spam, train_ham)
            spamicity, verdict = bogofilter_classify(bogofilter, Path(db), test)
        row["bogofilter"] = {**shares(verdict, is_spam), "hindsight": hindsight(spamicity, is_spam)}
    return row


def report(rows: list[tuple[str, dict]]) -> str:
    def pct(x: float) -> str:
        return f"{x:.1%}"

    lines = []
    for system in ("textnb", "bogofilter"):
        mine = [(name, row[system]) for name, row in rows if system in row]
        if not mine:
            continue
        body = []
        for name, r in mine:
            met = (r["ham_spam"] == 0 and r["flagged"] >= FLAGGED and r["ham_unsure"] <= HAM_UNSURE)
            body.append([name, str(r["ham_spam"]), pct(r["flagged"]), pct(r["spam"]),
                         pct(r["ham_unsure"]), "yes" if met else "no",
                         f"{pct(r['hindsight'][0])} / {pct(r['hindsight'][1])}"]
                        + ([f"{r['cutoffs'][0]:+.2f} / {r['cutoffs'][1]:+.2f}, {r['training']}"]
                           if "cutoffs" in r else []))
        met = sum(b[5] == "yes" for b in body)
        body.append(["all", str(sum(r["ham_spam"] for _, r in mine)),
                     pct(min(r["flagged"] for _, r in mine)) + " (least)",
                     pct(float(np.mean([r["spam"] for _, r in mine]))) + " (mean)",
                     pct(max(r["ham_unsure"] for _, r in mine)) + " (most)",
                     f"{met} of {len(mine)}", ""] + ([""] if system == "textnb" else []))
        header = ["draw", "ham called spam", "spam flagged", "spam called spam", "ham unsure",
                  "goal met", "hindsight: flagged at 25 % / ham at 90 %"] + (
                      ["cutoffs spam / ham, training"] if system == "textnb" else [])
        lines += [f"{system}:", table(header, body), ""]
    return "\n".join(lines)


def run(args) -> None:
    data = spam_dir(args.data, args.archive)
    spam, ham, new_spam, new_ham = parts(data)
    bogofilter = None if args.no_bogofilter else bogofilter_path(args.bogofilter)
    seeds = ([None] if args.first_seed == 1 else []) + list(
        range(args.first_seed, args.first_seed + args.draws))
    where = ("spam/ + easy_ham/, tested on spam_2/ + easy_ham_2/" if new_spam is not None
             else "spam/ + ham/, tested on the rest")
    print(f"{args.size} + {args.size} training messages of {where}; textnb at its defaults"
          + (", bogofilter beside" if bogofilter else ""), flush=True)
    rows = []
    for seed in seeds:
        train_spam, train_ham = draw(spam, ham, args.size, seed)
        if new_spam is not None:
            test_spam, test_ham = new_spam, new_ham
        else:
            taken = set(train_spam) | set(train_ham)
            test_spam = [p for p in spam if p not in taken]
            test_ham = [p for p in ham if p not in taken]
        is_spam = np.array([True] * len(test_spam) + [False] * len(test_ham))
        name = "first by name" if seed is None else f"seed {seed}"
        rows.append((name, run_draw(train_spam, train_ham, test_spam + test_ham, is_spam,
                                    bogofilter)))
        print(f"  {name}: done", flush=True)
    print(f"{int(is_spam.sum())} spam and {int((~is_spam).sum())} ham tested a draw\n")
    print(report(rows))


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.spam_data(parser)
    parser.add_argument("--size", type=int, default=30, help="spam and ham a draw (default 30)")
    parser.add_argument("--draws", type=int, default=5,
                        help="random draws beside the first by name (default 5)")
    parser.add_argument("--first-seed", type=int, default=1, metavar="N",
                        help="random draws from seed N on (default 1, after the first-by-name "
                             "draw; a later N draws afresh, without it)")
    parser.add_argument("--bogofilter", metavar="PATH", help="bogofilter binary (default: on PATH)")
    parser.add_argument("--no-bogofilter", action="store_true")
    args = parser.parse_args(argv)
    if args.size < 1 or args.draws < 0:
        parser.error("--size must be at least 1 and --draws at least 0")
    return options.run("bench.young", lambda: run(args))


if __name__ == "__main__":
    raise SystemExit(main())
