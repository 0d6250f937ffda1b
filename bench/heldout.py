"""Held-out scores for the spam cutoff, beside the scores the trained model gives new texts.

textnb reads its spam cutoff off the training messages' held-out scores (README, Spam
decisions), which stand in for the scores the trained model will give new mail. This study
measures how well they do, for full training (``TextClassifier(spam_class=...,
training="full")``, textnb's other defaults), on the seeded stratified 70/30 splits
bench.spam draws. Three scorings of the training texts, each followed by textnb's
own rule (the suspects left out unless ``--keep-suspects``,
:func:`textnb.decision.cutoffs.choose_cutoffs`):

* ``folds``: textnb's (5 folds, copies together): a held-out text over every term of the
  training vocabulary, so that its terms no other fold holds are known to the fold's model
  without counts, each adding log((N_ham + α|V|)/(N_spam + α|V|)) times its weight;
* ``as new``: the same folds' models, each held-out text cut to the terms its fold's model has
  counts of and weighted again, as ``predict`` weighs a new text;
* ``left out``: each text, with its copies, taken out of the counts and scored as new
  (:func:`textnb.decision.cutoffs.left_out`, exact for complement or multinomial NB; textnb reports full
  training's rates off these scores).

For each: the three highest held-out ham scores beside the test ham's, the cutoff, and at it
the test ham called spam and the test spam not caught (in the inbox or unsure). Beside them,
``command``: the command at its defaults, ``textnb train spam/ ham/`` on the training part
(training "auto") and ``textnb classify`` of the test part, at the spam cutoff it learned
(``textnb info``; ``--no-command`` leaves it out).

The scorings are textnb's own: the training texts' counts (``TextClassifier.counts``), weighed
(``textnb.text.features.weigh``), and ``textnb.decision.cutoffs``' ``out_of_fold`` and
``left_out`` on the folds of ``textnb.folds.usable_folds``.

Run (from the repository root)::

    python -m bench.heldout --data corpora/full/spamassassin --seeds 0 1
    python -m bench.sms_corpus SMSSpamCollection /tmp/sms
    python -m bench.heldout --data /tmp/sms --seeds 0 1 2 3 4 5 6 7
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import list_spam, spam_dir
from bench.common.splits import stratified_split
from bench.common.systems import command_info, command_run


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.spam_data(parser)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--keep-suspects", action="store_true",
                        help="choose the cutoffs on every held-out score (textnb's "
                             "--keep-suspects), not without the suspects")
    options.no_command(parser)
    args = parser.parse_args(argv)
    return options.run("bench.heldout", lambda: run(args))


def run(args) -> None:

    from textnb import TextClassifier
    from textnb.decision import cutoffs as rules
    from textnb.folds import usable_folds
    from textnb.text.features import weigh

    paths, y = list_spam(spam_dir(args.data, args.archive))
    raws = [Path(p).read_bytes() for p in paths]
    totals: dict[str, list[float]] = {}
    print(f"{len(y)} messages; full training, textnb's defaults otherwise; seeds "
          f"{', '.join(map(str, args.seeds))}")
    print(f"{'seed':>4}  {'scoring':<9} {'held-out ham, highest':<22} {'test ham, highest':<22} "
          f"{'cutoff':>7}  {'ham called spam':>15}  {'spam not caught':>15}")
    for seed in args.seeds:
        train, test = stratified_split(y, 0.7, seed)
        training = [raws[i] for i in train]
        classifier = TextClassifier(spam_class="spam", training="full").fit(
            training, list(y[train]))
        # The training texts' counts over its vocabulary, as fit counted them.
        raw, digests = classifier.counts(training)
        labels = np.array(y[train], dtype=str)
        X = weigh(raw, classifier.model, classifier.tf, classifier.norm)
        is_spam = labels == "spam"
        first_is_spam = np.unique(labels)[0] == "spam"      # class 2 over class 1, by name
        folds, as_new = rules.out_of_fold(classifier, X, raw, labels,
                                          usable_folds(labels, classifier.cutoff_folds, digests))
        scorings = {"folds": folds, "as new": as_new,
                    "left out": rules.left_out(classifier, raw, X, labels, digests)}
        scorings = {name: -lo if first_is_spam else lo for name, lo in scorings.items()}
        log_proba = classifier.predict_log_proba([raws[i] for i in test])
        s = list(classifier.classes_).index("spam")
        test_log_odds, test_spam = log_proba[:, s] - log_proba[:, 1 - s], y[test] == "spam"
        test_top = np.sort(test_log_odds[~test_spam])[::-1][:3]
        for name, log_odds in scorings.items():
            suspect = (np.zeros(is_spam.size, dtype=bool) if args.keep_suspects
                       else rules.suspects(log_odds, is_spam))
            cutoff = rules.choose_cutoffs(log_odds[~suspect], is_spam[~suspect])["spam"]
            top = np.sort(log_odds[~is_spam & ~suspect])[::-1][:3]
            called = int((test_log_odds[~test_spam] >= cutoff).sum())
            missed = float((test_log_odds[test_spam] < cutoff).mean())
            totals.setdefault(name, [0, 0.0])
            totals[name][0] += called
            totals[name][1] += missed / len(args.seeds)
            print(f"{seed:>4}  {name:<9} {' '.join(f'{v:+6.2f}' for v in top):<22} "
                  f"{' '.join(f'{v:+6.2f}' for v in test_top):<22} {cutoff:+7.2f}  "
                  f"{called:>6} of {(~test_spam).sum():<5}  {100 * missed:>14.1f}%", flush=True)
        if args.command:
            cutoff, log_odds = command(paths, y, train, test)
            top = np.sort(log_odds[~test_spam])[::-1][:3]
            called = int((log_odds[~test_spam] >= cutoff).sum())
            missed = float((log_odds[test_spam] < cutoff).mean())
            totals.setdefault("command", [0, 0.0])
            totals["command"][0] += called
            totals["command"][1] += missed / len(args.seeds)
            print(f"{seed:>4}  {'command':<9} {'-':<22} "
                  f"{' '.join(f'{v:+6.2f}' for v in top):<22} {cutoff:+7.2f}  "
                  f"{called:>6} of {(~test_spam).sum():<5}  {100 * missed:>14.1f}%", flush=True)
    for name, (called, missed) in totals.items():
        print(f"all   {name:<9} ham called spam {called}, spam not caught {100 * missed:.2f} % "
              f"on average")


def command(paths: list[str], y: np.ndarray, train: np.ndarray,
            test: np.ndarray) -> tuple[float, np.ndarray]:
    """The command at its defaults on the training part: the spam cutoff it learned and its
    spam log-odds of the test messages."""
    with tempfile.TemporaryDirectory(prefix="heldout-") as scratch:
        run = command_run(Path(scratch), {label: [Path(paths[i]) for i in train if y[i] == label]
                                          for label in ("spam", "ham")},
                          [Path(paths[i]) for i in test])
        cutoff = command_info(run.model)["cutoffs"]["spam"]
    return cutoff, np.array([r["spam_log_odds"] for r in run.records])


if __name__ == "__main__":
    sys.exit(main())
