"""Spam decisions: cutoffs applied (numpy-free rules) and learned."""
