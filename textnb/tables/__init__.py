"""Naive Bayes on tables: CSV reading, per-column likelihoods, the model."""
