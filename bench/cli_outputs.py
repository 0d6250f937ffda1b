"""Every textnb command's output on the bundled corpora, written to a directory, so that two
checkouts can be compared byte for byte (``diff -r BEFORE AFTER``).

    python -m bench.cli_outputs OUT            # with the textnb on PATH (or --textnb CMD)

Each command runs as a user types it, in a scratch directory; its exit code, standard output
and standard error go to one file a command. Paths of the scratch directory and of the
repository are written as ``$TMP`` and ``$ROOT``; timings are not printed by these commands.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from bench.common import args as options

ROOT = Path(__file__).resolve().parents[1]

SPAM, HAM = "$ROOT/corpora/spamassassin/spam", "$ROOT/corpora/spamassassin/ham"
MESSAGES = "$ROOT/corpora/messages/spam.eml $ROOT/corpora/messages/ham.eml"
TABLES = "$ROOT/corpora/tables"
ML = "$ROOT/corpora/multilabel"

# (name, command line, standard input file or None). Run in order: later ones use the models
# earlier ones wrote.
COMMANDS = [
    ("help", "textnb --help", None),
    ("version", "textnb --version", None),
    *[(f"help-{c}", f"textnb {c} --help", None) for c in (
        "train", "classify", "filter", "learn", "evaluate", "info", "explain", "dump", "load",
        "merge", "tune-cutoffs", "serve", "cluster", "table", "table train", "table classify",
        "table sample")],
    ("train", f"textnb train -q -m spam.model {SPAM} {HAM}", None),
    ("train-verbose", f"textnb train -m spam2.model {SPAM} {HAM}", None),
    ("train-full", f"textnb train -q --training full -m full.model {SPAM} {HAM}", None),
    ("train-bernoulli", f"textnb train -q --event-model bernoulli -m bern.model {SPAM} {HAM}", None),
    ("train-multinomial-ngrams", f"textnb train -q --event-model multinomial --ngrams 2 "
                                 f"--decision-threshold none -m mn.model {SPAM} {HAM}", None),
    ("info", "textnb info -m spam.model", None),
    ("info-full", "textnb info -m full.model", None),
    ("classify", f"textnb classify -m spam.model {MESSAGES}", None),
    ("classify-tsv", f"textnb classify -m spam.model --format tsv --header {MESSAGES}", None),
    ("classify-json", f"textnb classify -m spam.model --format json --explain {MESSAGES}", None),
    ("classify-exit-spam", "textnb classify -m spam.model --exit-code $ROOT/corpora/messages/spam.eml", None),
    ("classify-exit-ham", "textnb classify -m spam.model --exit-code $ROOT/corpora/messages/ham.eml", None),
    ("classify-stdin", "textnb classify -m spam.model -", "$ROOT/corpora/messages/spam.eml"),
    ("classify-dir", f"textnb classify -m bern.model {HAM}", None),
    ("filter-spam", "textnb filter -m spam.model", "$ROOT/corpora/messages/spam.eml"),
    ("filter-ham", "textnb filter -m spam.model", "$ROOT/corpora/messages/ham.eml"),
    ("filter-no-model", "textnb filter -m none.model", "$ROOT/corpora/messages/spam.eml"),
    ("explain", "textnb explain -m spam.model $ROOT/corpora/messages/spam.eml", None),
    ("evaluate", f"textnb evaluate -m spam.model {SPAM} {HAM}", None),
    ("evaluate-sweep", f"textnb evaluate -m spam.model --sweep {SPAM} {HAM}", None),
    ("evaluate-cv", f"textnb evaluate --cv 3 {SPAM} {HAM}", None),
    ("tune-cutoffs", f"textnb tune-cutoffs -m full.model {SPAM} {HAM}", None),
    ("dump", "textnb dump -m spam.model -o spam.dump", None),
    ("dump-head", "head -c 3000 spam.dump", None),
    ("load", "textnb load spam.dump -m loaded.model", None),
    ("merge", "textnb merge spam.model full.model -m merged.model", None),
    ("info-merged", "textnb info -m merged.model", None),
    ("learn", "textnb learn -m full.model --class spam $ROOT/corpora/messages/spam.eml", None),
    ("learn-again", "textnb learn -m full.model --class spam $ROOT/corpora/messages/spam.eml", None),
    ("unlearn", "textnb learn -m full.model --class spam --unlearn $ROOT/corpora/messages/spam.eml", None),
    ("learn-new", "textnb learn -m new.model --new-class --class news $ROOT/corpora/messages/ham.eml", None),
    ("cluster", f"textnb cluster -k 2 --seed 0 -m clusters.model {SPAM} {HAM}", None),
    ("multilabel-train", f"textnb train -q --labels {ML}/training.txt -m ml.model", None),
    ("multilabel-info", "textnb info -m ml.model", None),
    ("multilabel-classify", f"textnb classify -m ml.model --format json {ML}/test", None),
    ("multilabel-evaluate", f"textnb evaluate -m ml.model --labels {ML}/test.txt", None),
    ("table-train", f"textnb table train {TABLES}/playtennis.csv --target play -m tennis.model", None),
    ("table-classify", f"textnb table classify -m tennis.model {TABLES}/playtennis.csv", None),
    ("table-sample", "textnb table sample -m tennis.model -n 5 --seed 0", None),
    ("error-no-model", "textnb classify -m none.model $ROOT/corpora/messages/spam.eml", None),
    ("error-bad-option", "textnb train --alpha -1 x", None),
    ("error-no-command", "textnb nosuchcommand", None),
]


def run(out: Path, textnb: str, root: Path = ROOT) -> None:
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="cli-outputs-"))
    env = dict(os.environ, XDG_DATA_HOME=str(scratch / "data"), COLUMNS="100", TERM="dumb")
    env.pop("TEXTNB_MODEL", None)
    command = shlex.split(textnb)
    if os.sep in command[0]:  # a path: from here, not from the scratch directory
        command[0] = os.path.abspath(command[0])
    try:
        for name, line, stdin in COMMANDS:
            line = line.replace("$ROOT", str(root))
            argv = shlex.split(line)
            if argv[0] == "textnb":
                argv = command + argv[1:]
            with open(stdin.replace("$ROOT", str(root)), "rb") if stdin else open(os.devnull, "rb") as source:
                done = subprocess.run(argv, cwd=scratch, stdin=source, capture_output=True,
                                      env=env, timeout=600)
            text = (f"$ {line}\nexit {done.returncode}\n--- stdout\n".encode() + done.stdout
                    + b"--- stderr\n" + done.stderr)
            text = text.replace(str(scratch).encode(), b"$TMP").replace(str(root).encode(), b"$ROOT")
            (out / f"{name}.txt").write_bytes(text)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("out", type=Path, help="directory to write one file a command into")
    parser.add_argument("--textnb", default="textnb", help="the command to run (default: textnb)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository whose corpora/ to use")
    args = parser.parse_args(argv)
    run(args.out, args.textnb, args.root.resolve())


if __name__ == "__main__":
    main()
