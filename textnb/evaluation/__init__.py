"""Evaluation: metrics, cross-validation, tuning by cross-validation, plots."""
