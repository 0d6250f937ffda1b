"""Naive Bayes on count matrices: the discrete models, EM, training on error, explanations."""
