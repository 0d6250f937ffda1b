#!/usr/bin/env python3
"""Held-out scores for the spam cutoff, beside the scores the trained model gives new texts.

textnb reads its spam cutoff off the training messages' held-out scores (README, Spam
decisions), which stand in for the scores the trained model will give new mail. This script
measures how well they do, for full training (``TextClassifier(spam_class=...,
training="full")``, textnb's other defaults), on the seeded stratified 70/30 splits
scripts/bench_spam.py draws. Three scorings of the training texts, each followed by textnb's
own rule (the suspects left out unless ``--keep-suspects``,
:func:`textnb.cutoffs.choose_cutoffs`):

* ``folds``: textnb's (5 folds, copies together): a held-out text over every term of the
  training vocabulary, so that its terms no other fold holds are known to the fold's model
  without counts, each adding log((N_ham + α|V|)/(N_spam + α|V|)) times its weight;
* ``as new``: the same folds' models, each held-out text cut to the terms its fold's model has
  counts of and weighted again, as ``predict`` weighs a new text;
* ``left out``: each text, with its copies, taken out of the counts and scored as new
  (``TextClassifier._left_out``, exact for complement or multinomial NB; textnb reports full
  training's rates off these scores).

For each: the three highest held-out ham scores beside the test ham's, the cutoff, and at it
the test ham called spam and the test spam not caught (in the inbox or unsure). Run::

    python scripts/bench_heldout.py --data corpora/full/spamassassin --seeds 0 1
    python scripts/sms_corpus.py SMSSpamCollection /tmp/sms
    python scripts/bench_heldout.py --data /tmp/sms --seeds 0 1 2 3 4 5 6 7
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_spam import list_corpus  # noqa: E402
from tune import stratified_split  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="a SpamAssassin-layout corpus (spam/, easy_ham/, ...)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--keep-suspects", action="store_true",
                        help="choose the cutoffs on every held-out score (textnb's "
                             "--keep-suspects), not without the suspects")
    args = parser.parse_args(argv)

    from textnb import TextClassifier
    from textnb import cutoffs as rules
    from textnb.classifier import _folds

    paths, y = list_corpus(args.data)
    raws = [Path(p).read_bytes() for p in paths]
    totals: dict[str, list[float]] = {}
    print(f"{len(y)} messages; full training, textnb's defaults otherwise; seeds "
          f"{', '.join(map(str, args.seeds))}")
    print(f"{'seed':>4}  {'scoring':<9} {'held-out ham, highest':<22} {'test ham, highest':<22} "
          f"{'cutoff':>7}  {'ham called spam':>15}  {'spam not caught':>15}")
    for seed in args.seeds:
        train, test = stratified_split(y, 0.7, seed)
        kept: dict = {}
        fit = TextClassifier._fit_vocabulary

        def keep(self, vocabulary, X, labels, digests, *rest, **options):
            kept.update(raw=X, labels=labels, digests=digests)
            return fit(self, vocabulary, X, labels, digests, *rest, **options)

        TextClassifier._fit_vocabulary = keep
        try:
            classifier = TextClassifier(spam_class="spam", training="full").fit(
                [raws[i] for i in train], list(y[train]))
        finally:
            TextClassifier._fit_vocabulary = fit
        raw, labels = kept["raw"], np.array(kept["labels"], dtype=str)
        X = classifier._weigh(raw)
        is_spam = labels == "spam"
        first_is_spam = np.unique(labels)[0] == "spam"      # class 2 over class 1, by name
        folds, as_new = classifier._out_of_fold(X, raw, labels,
                                                _folds(labels, classifier.cutoff_folds,
                                                       kept["digests"]))
        scorings = {"folds": folds, "as new": as_new,
                    "left out": classifier._left_out(raw, X, labels, kept["digests"])}
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
    for name, (called, missed) in totals.items():
        print(f"all   {name:<9} ham called spam {called}, spam not caught {100 * missed:.2f} % "
              f"on average")
    return 0


if __name__ == "__main__":
    sys.exit(main())
