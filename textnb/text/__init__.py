"""Text features: tokens, stop words, counting, vocabularies (exact or hashed), term weights."""
