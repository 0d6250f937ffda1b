"""The textnb command line: the only package that prints, reads argv or chooses exit codes."""
