"""textnb.evaluation.plots and the curves and summaries of textnb.evaluation.metrics it draws (evaluate --plot)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from textnb.evaluation import metrics
from textnb.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
SPAM_DIR = ROOT / "corpora" / "spamassassin" / "spam"
HAM_DIR = ROOT / "corpora" / "spamassassin" / "ham"
PLOTS = ["confusion", "precision-recall", "roc", "scores"]


def scored(seed: int = 0, n: int = 300):
    """Labels and scores with ties (rounded to 0.1), as log-odds of many short documents are."""
    rng = np.random.default_rng(seed)
    positive = rng.random(n) < 0.4
    return positive, np.round(rng.normal(size=n) + 1.5 * positive, 1)


# -- the curves, against scikit-learn's ------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_roc_and_precision_recall_curves_are_scikit_learns(seed):
    sk = pytest.importorskip("sklearn.metrics")
    positive, scores = scored(seed)
    fpr, tpr, thresholds = metrics.roc_curve(positive, scores)
    sk_fpr, sk_tpr, sk_thresholds = sk.roc_curve(positive, scores, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr)
    np.testing.assert_allclose(tpr, sk_tpr)
    np.testing.assert_allclose(thresholds[1:], sk_thresholds[1:])
    precision, recall, thresholds = metrics.precision_recall_curve(positive, scores)
    sk_precision, sk_recall, sk_thresholds = sk.precision_recall_curve(positive, scores)
    np.testing.assert_allclose(precision, sk_precision)
    np.testing.assert_allclose(recall, sk_recall)
    np.testing.assert_allclose(thresholds, sk_thresholds)
    assert metrics.average_precision(positive, scores) == pytest.approx(
        sk.average_precision_score(positive, scores), abs=1e-12)
    # The area under the ROC points is the rank statistic roc_auc computes.
    assert np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2) == pytest.approx(metrics.roc_auc(positive, scores), abs=1e-12)


def test_a_curve_needs_positive_and_negative_documents():
    with pytest.raises(ValueError, match="positive and negative"):
        metrics.roc_curve([True, True], [0.1, 0.2])


def test_one_vs_rest_log_odds_is_the_logit_of_each_probability():
    rng = np.random.default_rng(3)
    proba = rng.dirichlet([1, 1, 1, 1], size=50)
    log_odds = metrics.one_vs_rest_log_odds(np.log(proba))
    np.testing.assert_allclose(log_odds, np.log(proba / (1 - proba)), rtol=1e-9, atol=1e-9)
    # Two classes: the columns are the log-odds of each class over the other, finite even
    # where the probabilities round to 1 and 0.
    log_proba = np.array([[0.0, -800.0], [-3.0, np.log1p(-np.exp(-3.0))]])
    np.testing.assert_allclose(metrics.one_vs_rest_log_odds(log_proba)[:, 0],
                               log_proba[:, 0] - log_proba[:, 1])


def test_summary_averages_are_scikit_learns_classification_report():
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(4)
    classes = np.array(["a", "b", "c"])
    y = rng.choice(classes, size=200, p=[0.6, 0.3, 0.1])
    log_proba = np.log(rng.dirichlet([1, 1, 1], size=200))
    report = metrics.summary(y, log_proba, classes)
    expected = sk.classification_report(y, classes[log_proba.argmax(axis=1)], output_dict=True,
                                        zero_division=0)
    assert report["support"] == [int(expected[c]["support"]) for c in classes]
    for kind, name in (("macro", "macro avg"), ("weighted", "weighted avg")):
        for key, sk_key in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")):
            assert report[kind][key] == pytest.approx(expected[name][sk_key], abs=1e-12)


def test_sweep_cutoffs_are_round_and_cover_the_scores():
    grid = metrics.sweep_cutoffs([-37.2, 0.3, 812.0], also=[4.2])
    assert grid.tolist() == [-50, -20, -10, -5, -2, -1, -0.5, 0, 0.5, 1, 2, 4.2, 5, 10, 20, 50,
                             100, 200, 500, 1000]
    assert metrics.sweep_cutoffs([0.1, 0.3]).tolist() == [0.0, 0.5]


def test_mean_sd_is_the_sample_standard_deviation():
    assert metrics.mean_sd([0.9, 1.0, 0.95]) == pytest.approx((0.95, 0.05))
    assert metrics.mean_sd([0.7]) == (0.7, 0.0)


# -- the figures -----------------------------------------------------------------------------

def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_write_plots_for_two_and_for_many_classes(tmp_path):
    pytest.importorskip("matplotlib")
    from textnb.evaluation.plots import write_plots

    positive, scores = scored()
    y = np.where(positive, "spam", "ham")
    log_odds = np.column_stack([-scores, scores])
    confusion = np.array([[150, 30], [20, 100]])
    written = write_plots(tmp_path / "two", ["ham", "spam"], y, log_odds, confusion, "spam",
                          (1.0, -0.5), np.array([[97, 23, 30], [12, 8, 130]]))
    assert sorted(p.name for p in written) == sorted(f"{n}.{e}" for n in PLOTS + ["decisions"]
                                                     for e in ("png", "svg"))
    decided = (tmp_path / "two" / "decisions.svg").read_text()
    assert "Decisions at the cutoffs" in decided and "unsure" in decided
    assert all(f"<!-- {n} -->" in decided for n in (97, 23, 30, 12, 8, 130))
    for path in written:
        if path.suffix == ".png":
            width, height = png_size(path)
            assert 400 < width < 2000 and 300 < height < 2000
        else:
            svg = path.read_text()
            assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    svg = (tmp_path / "two" / "scores.svg").read_text()
    assert "spam cutoff +1.00" in svg and "ham cutoff -0.50" in svg
    assert "AUC 0." in (tmp_path / "two" / "roc.svg").read_text()

    rng = np.random.default_rng(5)
    classes = [f"class.{i}" for i in range(6)]
    y = rng.choice(classes, size=120)
    log_proba = np.log(rng.dirichlet([1] * 6, size=120))
    confusion = np.array(metrics.summary(y, log_proba, classes)["confusion"])
    written = write_plots(tmp_path / "six", classes, y, metrics.one_vs_rest_log_odds(log_proba),
                          confusion)
    assert len(written) == 8
    roc = (tmp_path / "six" / "roc.svg").read_text()
    assert all(f"{name} (AUC" in roc for name in classes)


def test_evaluate_plot_writes_the_figures(tmp_path):
    pytest.importorskip("matplotlib")
    model = tmp_path / "m"
    runner = CliRunner()
    assert runner.invoke(main, ["train", "-q", "-m", str(model), str(SPAM_DIR), str(HAM_DIR)]).exit_code == 0
    result = runner.invoke(main, ["evaluate", "-q", "-m", str(model), "--plot", str(tmp_path / "p"),
                                  "--format", "json", str(SPAM_DIR), str(HAM_DIR)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    written = report["plots"]
    # A mail model: the decisions at its cutoffs too, the counts of the report's rates.
    assert sorted(Path(p).name for p in written) == sorted(f"{n}.{e}" for n in PLOTS + ["decisions"]
                                                           for e in ("png", "svg"))
    decided = (tmp_path / "p" / "decisions.svg").read_text()
    at = report["at_cutoffs"]
    spam_row = [round(150 * (1 - at["fnr"] - at["spam_unsure"])), round(150 * at["spam_unsure"]),
                round(150 * at["fnr"])]
    assert all(f"<!-- {n} -->" in decided for n in spam_row)
    assert all(Path(p).stat().st_size > 5000 for p in written)


def test_the_library_does_not_import_matplotlib():
    code = ("import sys, textnb, textnb.cli.app, textnb.evaluation.metrics, textnb.evaluation.plots; "
            "print('matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr
