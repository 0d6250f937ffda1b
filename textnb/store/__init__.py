"""Model files: the container format and each kind of model's file, dumps, learning in place."""
