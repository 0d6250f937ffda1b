"""spamc request bytes → spamd answer bytes: ``textnb serve``, the model held in memory.

SpamAssassin's daemon protocol (its spamd/PROTOCOL file, and /usr/sbin/spamd for what the
file leaves out), so that the unmodified ``spamc`` and every MTA, milter or recipe that runs it
can use textnb: a request is ``METHOD SPAMC/1.x``, header fields, a blank line and the message;
the answer is ``SPAMD/1.1 <sysexits code> <text>``, fields (``Spam: True ; 11.8 / 5.0``) and a
body. Every method: PING, CHECK, SYMBOLS, REPORT, REPORT_IFSPAM, PROCESS, HEADERS, SKIP, TELL.

Choices, with the measurements behind them (scripts/bench_serve.py, 2 cores):

* **Processes × an event loop of callbacks.** A message costs about 1 ms of CPU (median
  message: parse 0.3–0.4, tokenize 0.2, score 0.05, answer 0.04), all Python, so threads
  share one core under the GIL: with 8 and 32 clients, a thread per connection answered
  400–510 messages/s, one asyncio process 500–870, two 800–1 270 (three runs).
  ``--workers`` processes (default: one per core) are forked after the model is loaded and
  a sample message scored, so its pages and the modules parsing imports are shared; each
  runs an asyncio loop whose reader and writer callbacks drive every connection
  (:class:`_Connection`, no task or future per request), so a slow or silent client is an
  idle entry in the loop. A request is read under two deadlines (its header block within
  :data:`HEADER_TIMEOUT`, all of it within ``--timeout``); scoring runs on the loop, with
  :class:`Weights` (plain Python, no numpy call for a one-row matrix); TELL, which waits for
  the update lock and rewrites the file, runs on a thread.
* **Hostile clients.** Every malformed request is answered with spamd's error line, and what
  the client still sends is read until it closes, so that closing does not reset the
  connection before the answer is read. When every connection slot is held, a new connection
  is taken anyway and the one whose client sent fewest bytes a second is shed, so that
  clients dripping requests (or sending none) cannot keep spamc out. Anything a connection's
  callbacks raise closes that connection, frees its slot and logs one bounded line; error
  lines are logged at most :data:`ERROR_LINES` a second. SIGTERM gives the connections in
  hand :data:`STOP_GRACE` seconds; a worker whose main process died stops within a second.
* **One whole model version per message.** Before each request the model file is stat()ed
  (2 µs); when (device, inode, mtime, size) changed, it is loaded again, whole, before the
  message is scored. A file that fails to load leaves the old model serving.
* **Scores.** :func:`spamc_score` maps the spam log-odds onto spamc's scale: the ham cutoff
  is 0, the spam cutoff is :data:`THRESHOLD` (5.0), linearly.
"""

from __future__ import annotations

import asyncio
import enum
import gc
import ipaddress
import math
import os
import re
import signal
import socket
import stat
import sys
import time
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_not, mul
from typing import Any

import numpy as np

from ..classifier import TextClassifier
from ..store.text_model import load_model, save_model
from .client import MAX_SIZE, TIMEOUT, default_socket_path
from ..decision.rules import decide, headers, spam_cutoffs
from ..documents.message import read_bytes
from ..errors import ModelFileError, TextnbError
from ..mail.filter import add_headers
from ..store.container import locked

# spamd's default required score: recipes and MTA settings written for SpamAssassin compare
# against it, and spamc prints it after the score.
THRESHOLD = 5.0
# Scores shown are clamped here: an infinite cutoff (--spam-cutoff 1) must not print "inf".
SCORE_LIMIT = 999.9
# spamd reads at most 255 header fields; a request's lines are short (spamc's are < 100 bytes).
MAX_FIELDS = 255
MAX_LINE = 8192
# Seconds from a connection's accept to the end of its header block (at most --timeout).
# spamc writes the block at once (under 200 bytes); a client dripping it holds a connection
# slot no longer than this. The body has the rest of --timeout.
HEADER_TIMEOUT = 5.0
# Seconds the connections in hand get at SIGTERM (a request or an answer still in transit);
# the daemon then exits, whatever clients are still doing.
STOP_GRACE = 1.0
# A worker whose main process died (kill -9) closes its listeners at once, gives the
# connections in hand ORPHAN_GRACE seconds and ends by ORPHAN_EXIT, whatever it is doing.
ORPHAN_GRACE, ORPHAN_EXIT = 0.5, 0.9
# A connection is not shed in its first YOUNG seconds: spamc, descheduled on a busy machine
# between its connect and its write, had its connection shed by clients reconnecting as fast
# as they were shed (1.5–4 % of its requests against 200 dripping clients, none since). With
# every slot held by one so young, the daemon accepts no more until one is not.
YOUNG = 0.05
# Log lines of failed connections (bad requests, timeouts, shedding) a worker writes a second;
# beyond them, a count: a flood of bad requests cannot flood the log.
ERROR_LINES = 20

METHODS = frozenset({"PING", "SKIP", "CHECK", "SYMBOLS", "REPORT", "REPORT_IFSPAM", "PROCESS",
                     "HEADERS", "TELL"})
_REQUEST_LINE = re.compile(rb"([A-Z_]+) SPAMC/(\S*)\r?\n")
_VERSION = re.compile(rb"(\d{1,3})\.(\d{1,3})")
# Content-length: ASCII digits (str.isdigit takes "²", which int() refuses), at most ten.
_DIGITS = re.compile(r"[0-9]+")
MAX_DIGITS = 10


class Code(enum.IntEnum):
    """The sysexits.h codes spamd answers with (spamc exits with some of them under -x)."""

    EX_OK = 0
    EX_UNAVAILABLE = 69
    EX_PROTOCOL = 76
    EX_TIMEOUT = 79
    EX_TOOBIG = 98


class ServeError(TextnbError):
    """The daemon cannot start: a socket in use or not ours, a bad listen address."""


class RequestError(Exception):
    """A request answered with an error line, as spamd words them."""

    def __init__(self, code: Code, text: str) -> None:
        super().__init__(text)
        self.code, self.text = code, text

    def answer(self) -> bytes:
        return f"SPAMD/1.0 {int(self.code)} {self.text}\r\n".encode("latin-1", "replace")


def _bad(reason: str) -> RequestError:
    return RequestError(Code.EX_PROTOCOL, f"Bad header line: ({reason})")


# -- the model and the decision ------------------------------------------------------------

class Weights:
    """A loaded two-class TextClassifier's scores as plain Python: term → how far one unit of
    it moves the log-odds of the second class over the first, so that scoring one message is
    a dictionary look-up per distinct token and one sum.

    The classifier's decomposition (:meth:`~textnb.nb.discrete.DiscreteNB.decomposition`) is
    jll_c(x) = bias_c + Σ_k x'_k W_ck over the message's terms k, with x' its counts weighted
    as :meth:`TextClassifier.transform` weighs them (presence for Bernoulli; raw, log1p or
    binary, then unit length for ``norm="l2"``). Of two classes only the difference counts:
    d = jll_1 − jll_0 = (bias_1 − bias_0) + Σ_k x'_k (W_1k − W_0k), and
    log P(c_0|x) = −log(1 + e^d), log P(c_1|x) = d + log P(c_0|x). Equal to
    ``predict_log_proba`` to rounding, 1e-12 (tests/test_serve.py); the sums are
    math.fsum's, the same in any order. One look-up a distinct token, where a column, then
    its weight in each class's array took three, mostly cache misses in a 44,000-term
    vocabulary: scored right after its parsing and tokenizing, as in the daemon, the median
    SpamAssassin test message took 0.10–0.11 ms against 0.19–0.22 (the mean 0.16–0.17
    against 0.31; the two interleaved, 2 cores under load); ``predict_log_proba`` (a one-row
    CSR matrix, numpy calls on two numbers) took 0.44 with warm caches.
    """

    def __init__(self, classifier: TextClassifier) -> None:
        if len(classifier.classes_) != 2:
            raise ValueError(f"Weights scores two classes, not {len(classifier.classes_)}")
        bias, weights = classifier.model_.decomposition()
        self.classifier = classifier
        self.bias = float(bias[1]) - float(bias[0])
        weights = np.asarray(weights, dtype=np.float64)
        difference = weights[1] - weights[0]
        # Keyed by the vocabulary's own term strings (terms_ in column order): no copy of them.
        self.difference = dict(zip(classifier.vocabulary_.terms_, difference.tolist()))
        self.presence = classifier.model == "bernoulli" or classifier.tf == "binary"
        self.log_tf = classifier.tf == "log" and not self.presence
        self.unit = classifier.norm == "l2" and classifier.model != "bernoulli"

    def log_proba(self, tokens: Sequence[str]) -> list[float]:
        """[log P(c_0|x), log P(c_1|x)], in the classifier's class order, of a document's
        tokens (``classifier.tokenize``)."""
        counts = Counter(tokens)
        # C loops only: one look-up a distinct token, then the terms found kept (not None).
        found = list(map(self.difference.get, counts))
        known = list(map(is_not, found, repeat(None)))
        weights = list(compress(found, known))
        if self.presence:
            d, square = math.fsum(weights), float(len(weights))
        else:
            values = list(compress(counts.values(), known))
            if self.log_tf:
                values = list(map(math.log1p, values))
            d, square = math.fsum(map(mul, values, weights)), math.fsum(map(mul, values, values))
        if self.unit and weights:
            d /= math.sqrt(square)
        d += self.bias
        # −log(1 + e^d), e^±d at most 1: no overflow.
        first = -(d + math.log1p(math.exp(-d))) if d > 0 else -math.log1p(math.exp(d))
        return [first, d + first]


@dataclass(frozen=True)
class Version:
    """One whole version of the model file: what a message is scored and decided with."""

    classifier: TextClassifier
    weights: Weights
    classes: list
    cutoffs: tuple  # (spam class, spam cutoff, ham cutoff) on the log-odds

    @property
    def spam_class(self) -> str:
        return self.cutoffs[0]

    @property
    def ham_class(self) -> Any:
        return self.classes[1 - [str(c) for c in self.classes].index(self.spam_class)]


class Model:
    """The model file's current version in memory, loaded again when the file is replaced.
    A request takes ``model.version`` once and uses it throughout: a reload replaces the
    whole version, never part of one."""

    def __init__(self, path: str | os.PathLike, spam_class: str | None = None,
                 spam_cutoff: float | None = None, ham_cutoff: float | None = None) -> None:
        # The options as given (cutoffs on P(spam), None where not given): each version of the
        # file turns them into its cutoffs on the log-odds, with the ones it learned.
        self.path = os.fspath(path)
        self.options = (spam_class, spam_cutoff, ham_cutoff)
        self.signature: tuple[int, ...] | None = None
        self.load()

    def _stat(self) -> tuple[int, ...]:
        st = os.stat(self.path)
        return st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size

    def load(self) -> None:
        """Read the file now; ModelFileError (the old model kept) if it is not a spam model."""
        try:
            signature = self._stat()
        except OSError:
            signature = None  # load_model says what is wrong
        # Signature first: if the file is replaced while it loads, the next check loads again.
        classifier = load_model(self.path)
        classes = [c.item() if hasattr(c, "item") else c for c in classifier.classes_]
        try:
            cutoffs = spam_cutoffs(classes, classifier.cutoffs_, *self.options)
        except ValueError as error:
            raise ModelFileError(f"model file '{self.path}': {error}") from None
        if cutoffs is None:
            raise ModelFileError(f"model file '{self.path}' has {_classes(classes)}; textnb "
                                 f"serve needs two classes, one of them "
                                 f"'{self.options[0] or 'spam'}'")
        self.version = Version(classifier, Weights(classifier), classes, cutoffs)
        self.signature = signature

    def refresh(self, log: Callable[[str], None] | None = None) -> Version:
        """The current version, loaded again first if the file was replaced since it was read
        (a missing file keeps the model in memory serving; a bad one is reported once per
        version)."""
        try:
            signature = self._stat()
        except OSError:
            return self.version
        if signature != self.signature:
            try:
                self.load()
            except Exception as error:  # a bad file (or a bug loading it): the old one serves
                self.signature = signature
                if log:
                    log(f"{_now()} model not reloaded, the old one serves: {error}")
        return self.version


def _classes(classes: Sequence[Any], shown: int = 5) -> str:
    """A model's classes for one line: at most ``shown`` of them, each cut to 40 characters."""
    names = ", ".join(repr(str(c)[:40]) for c in classes[:shown])
    more = f", ... ({len(classes)} in all)" if len(classes) > shown else ""
    return f"{len(classes)} class{'es' if len(classes) != 1 else ''} [{names}{more}]"


def spamc_score(spam_log_odds: float, spam_cutoff: float, ham_cutoff: float) -> float:
    """The score spamc shows for a message, from its spam log-odds ln P(spam|x)/P(ham|x) and
    the cutoffs on the log-odds (spam at or above ``spam_cutoff``, ham at or below
    ``ham_cutoff``): linear, the ham cutoff at 0 and the spam cutoff at THRESHOLD, so one
    point is (spam_cutoff − ham_cutoff)/5 nats; with equal or infinite cutoffs one point is
    one nat, the spam cutoff still at THRESHOLD. Clamped to ±SCORE_LIMIT."""
    width = spam_cutoff - ham_cutoff
    nats_per_point = width / THRESHOLD if math.isfinite(width) and width > 0 else 1.0
    score = THRESHOLD + (spam_log_odds - spam_cutoff) / nats_per_point
    return max(-SCORE_LIMIT, min(SCORE_LIMIT, score)) if not math.isnan(score) else 0.0


def _verdict(version: Version, raw: bytes) -> dict[str, Any]:
    """The decision on a message, as ``textnb filter`` makes it (textnb.mail.filter), with its
    spamc ``score``: every answer's verdict comes from here."""
    tokens = version.classifier.tokenize([read_bytes(raw)])[0]
    row = version.weights.log_proba(tokens)
    _, spam_cutoff, ham_cutoff = version.cutoffs
    decision = decide(version.classes, row, "-", version.cutoffs)
    decision["score"] = spamc_score(decision["spam_log_odds"], spam_cutoff, ham_cutoff)
    return decision


def _shown_score(decision: dict[str, Any]) -> float:
    """The score as spamc shows it, agreeing with the verdict as spamd's
    get_tag_value_for_score makes it: a spam at least THRESHOLD, a non-spam below it."""
    score = round(decision["score"], 1)
    if decision["status"] == "spam":
        return max(score, THRESHOLD)
    return THRESHOLD - 0.1 if score >= THRESHOLD else score


def _spam_field(decision: dict[str, Any], method: str) -> str:
    """The ``Spam:`` field's value: ``True ; 11.8 / 5.0`` (Yes/No for REPORT_IFSPAM)."""
    yes, no = ("Yes", "No") if method == "REPORT_IFSPAM" else ("True", "False")
    spam = decision["status"] == "spam"
    return f"{yes if spam else no} ; {_shown_score(decision):.1f} / {THRESHOLD:.1f}"


def _symbol(decision: dict[str, Any]) -> str:
    return f"TEXTNB_{decision['status'].upper()}"


def _report(version: Version, raw: bytes, decision: dict[str, Any], top: int = 10) -> str:
    """REPORT's text: the verdict, the cutoffs and the terms that weighed most."""
    explanation = version.classifier.explain(read_bytes(raw), top=top)
    lines = [f"textnb: {decision['status']} (P({version.spam_class}) = "
             f"{decision['spam_probability']:.6f}, log-odds {decision['spam_log_odds']:+.2f}, "
             f"score {_shown_score(decision):.1f} / {THRESHOLD:.1f})",
             f"cutoffs: spam at log-odds >= {version.cutoffs[1]:+.3f}, "
             f"ham at log-odds <= {version.cutoffs[2]:+.3f}",
             f"why {explanation.label} over {explanation.against} (log-odds, natural logs):",
             f"  {explanation.prior_log_odds:+8.3f}  (prior)"]
    lines += [f"  {term.log_odds:+8.3f}  {term.term}" for term in explanation.terms]
    lines.append(f"  {explanation.rest:+8.3f}  (other terms)")
    return "\n".join(lines) + "\n"


_SA_FIELD = re.compile(rb"X-Spam-(?:Flag|Status):", re.IGNORECASE)


def _spamassassin_fields(message: bytes, decision: dict[str, Any]) -> bytes:
    """message (with a header block, as textnb.mail.filter.add_headers leaves it) with
    X-Spam-Status, and X-Spam-Flag: YES for spam, first in its header block, and its own
    X-Spam-Flag and X-Spam-Status fields (with their continuation lines) removed: a sender
    cannot forge the verdict that a recipe written for SpamAssassin tests."""
    spam = decision["status"] == "spam"
    lines = message.splitlines(keepends=True)
    eol = b"\r\n" if lines and lines[0].endswith(b"\r\n") else b"\n"
    start = 1 if message.startswith(b"From ") else 0
    ours = [b"X-Spam-Flag: YES" + eol] if spam else []
    ours.append(f"X-Spam-Status: {'Yes' if spam else 'No'}, score={_shown_score(decision):.1f} "
                f"required={THRESHOLD:.1f} tests={_symbol(decision)}".encode() + eol)
    kept, dropping, end = [], False, start
    while end < len(lines) and lines[end].strip(b"\r\n"):
        line = lines[end]
        if line[:1] not in (b" ", b"\t"):
            dropping = _SA_FIELD.match(line) is not None
        if not dropping:
            kept.append(line)
        end += 1
    return b"".join(lines[:start] + ours + kept + lines[end:])


def _header_block(message: bytes) -> bytes:
    """The message up to and including the blank line after its header fields (HEADERS)."""
    ends = [at + len(sep) for sep in (b"\n\n", b"\n\r\n") if (at := message.find(sep)) >= 0]
    return message[:min(ends)] if ends else message


# -- TELL ------------------------------------------------------------------------------

def learn(path: str | os.PathLike, raw: bytes, label: Any, other: Any) -> bool:
    """Learn ``raw`` as ``label`` under the update lock (the one ``textnb learn`` takes) and
    replace the model file atomically; a message learned as ``other`` moves to ``label``.
    False, the file untouched, when it was learned as ``label`` already. ModelFileError when
    the file is missing: a model of one message, one class, would decide nothing."""
    _must_exist(path)
    with locked(path):
        classifier = load_model(path)
        if _unlearned(classifier, raw, label):
            return False  # it was learned: the copy with it removed is thrown away
        _unlearned(classifier, raw, other)
        classifier.partial_fit([raw], [label])
        save_model(classifier, path)
    return True


def forget(path: str | os.PathLike, raw: bytes, labels: Sequence[Any]) -> bool:
    """Unlearn ``raw`` from whichever of ``labels`` it was learned as, under the update lock;
    False, the file untouched, when it was never learned; ModelFileError when the file is
    missing."""
    _must_exist(path)
    with locked(path):
        classifier = load_model(path)
        if not any(_unlearned(classifier, raw, label) for label in labels):
            return False
        save_model(classifier, path)
    return True


def _must_exist(path: str | os.PathLike) -> None:
    # Before the lock, which would leave a lock file beside a model that is not there.
    if not os.path.exists(path):
        raise ModelFileError(f"model file '{os.fspath(path)}' does not exist: TELL learns "
                             f"only into a model that does (textnb train, or textnb learn "
                             f"--new-class)")


def _unlearned(classifier: TextClassifier, raw: bytes, label: Any) -> bool:
    # TextClassifier.unlearn recognises a learned document by its digest and raises,
    # unchanged, for one it never learned as that label.
    try:
        classifier.unlearn([raw], [label])
    except ValueError:
        return False
    return True


# -- the daemon --------------------------------------------------------------------------

@dataclass
class Settings:
    """What a worker needs besides the model: limits (bytes, seconds, connections), the TCP
    clients allowed (ipaddress networks), what it may do, and where its log lines go."""

    max_connections: int
    allow: list
    max_size: int = MAX_SIZE
    timeout: float = TIMEOUT
    allow_tell: bool = False
    spamassassin_headers: bool = False
    log: Callable[[str], None] | None = None
    header_timeout: float = HEADER_TIMEOUT


@dataclass
class _Request:
    method: str
    version: tuple[int, int]
    fields: dict[str, str]
    body: bytes = b""


class Worker:
    """One process's event loop: accepts on every listener and answers each connection.

    A connection is a :class:`_Connection` driven by the loop's reader and writer callbacks,
    not a task: a request that is there when it is accepted (as spamc's nearly always is) is
    read, answered and closed in that one turn of the loop, with no future. Measured with
    PING, which scores nothing, from a client sending one after another (machine loaded):
    0.23 ms of server CPU a request with a coroutine and asyncio's sock_* calls per
    connection, 0.14–0.19 with callbacks, 0.05–0.08 for a blocking loop that answers at once.

    ``connections`` is this worker's share of --max-connections. When all are held, a new
    connection is still taken: if its request is not answered at once, the connection whose
    client made least progress is shed (:meth:`_Connection.shed_order`). ``watch`` is the
    read end of a pipe whose write end only the main process holds: its end of file says
    that process died.
    """

    def __init__(self, model: Model, listeners: Sequence[socket.socket], settings: Settings,
                 connections: int, watch: int | None = None) -> None:
        self.model, self.listeners, self.settings = model, list(listeners), settings
        self.connections, self.watch = connections, watch
        self.open: set[_Connection] = set()
        self.listening = self.stopping = False
        self.drained: asyncio.Future | None = None
        self.grace, self.stop_by = STOP_GRACE, math.inf
        self.resume: asyncio.TimerHandle | None = None  # accepting again, once one may be shed
        self.warned = self.suppressed = 0
        self.warn_window = -math.inf

    def log(self, line: str) -> None:
        if self.settings.log:
            try:
                self.settings.log(line)
            except Exception:  # stderr gone (a closed pipe): serving goes on unlogged
                pass

    def warn(self, line: str) -> None:
        """Log a line about a failed connection: at most ERROR_LINES a second, then a count."""
        now = self.loop.time()
        if now - self.warn_window >= 1.0:
            self._flush_warnings()
            self.warn_window = now
        if self.warned < ERROR_LINES:
            self.warned += 1
            self.log(line)
            return
        if not self.suppressed:
            self.loop.call_at(self.warn_window + 1.0, self._flush_warnings, self.warn_window)
        self.suppressed += 1

    def _flush_warnings(self, window: float | None = None) -> None:
        if window is not None and window != self.warn_window:
            return  # that second's count was written when the next began
        if self.suppressed:
            self.log(f"{_now()} {self.suppressed} more failed connections not logged (at most "
                     f"{ERROR_LINES} lines a second)")
        self.warned = self.suppressed = 0

    async def run(self) -> None:
        loop = self.loop = asyncio.get_running_loop()
        self.stop_asked = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, self.stop)
        loop.add_signal_handler(signal.SIGHUP, self.reload)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)  # blocked while forked
        for listener in self.listeners:
            listener.setblocking(False)
        if self.watch is not None:
            loop.add_reader(self.watch, self._orphaned)
        self._listen(True)
        await self.stop_asked.wait()
        # Drain: accept no more; the connections in hand get the grace, then the process ends.
        self.stopping = True
        self._listen(False)
        self._hurry()
        if self.open:
            self.drained = loop.create_future()
            try:
                await asyncio.wait_for(self.drained, self.grace + 1.0)
            except asyncio.TimeoutError:  # a TELL still at work: its thread ends it
                self.log(f"{_now()} exiting with {len(self.open)} connections open")

    def stop(self, grace: float = STOP_GRACE) -> None:
        """Stop accepting; the connections in hand end within ``grace`` seconds."""
        self.grace = min(self.grace, grace)
        self.stop_asked.set()
        if self.stopping:  # a shorter grace during a drain
            self._hurry()

    def _hurry(self) -> None:
        self.stop_by = min(self.stop_by, self.loop.time() + self.grace)
        for connection in list(self.open):
            connection._guarded(connection.hurry, self.stop_by)

    def _orphaned(self) -> None:
        """The main process died: no one restarts this worker or removes the socket, and a new
        daemon cannot listen while this one holds it. It stops now."""
        self.loop.remove_reader(self.watch)
        # SIGALRM's default action ends the process: a deadline nothing in it can hold up.
        signal.setitimer(signal.ITIMER_REAL, ORPHAN_EXIT)
        self.log(f"{_now()} the main process is gone: worker {os.getpid()} stops")
        self._listen(False)
        for listener in self.listeners:
            listener.close()
        self.listeners = []
        self.stop(ORPHAN_GRACE)

    def reload(self) -> None:
        try:
            self.model.load()
            self.log(f"{_now()} model reloaded: {self.model.path}")
        except Exception as error:  # a bad file (or a bug loading it): the old one serves
            self.log(f"{_now()} model not reloaded, the old one serves: {error}")

    def _listen(self, on: bool) -> None:
        """Accept, or stop accepting (stopping, or no connection that may be shed)."""
        on = on and not self.stopping
        if on != self.listening:
            for listener in self.listeners:
                if on:
                    self.loop.add_reader(listener.fileno(), self._accept, listener)
                else:
                    self.loop.remove_reader(listener.fileno())
            self.listening = on

    def _accept(self, listener: socket.socket) -> None:
        # One connection a turn of the loop: the others' requests are read between accepts,
        # and another worker woken for the same connections takes its share.
        try:
            connection, address = listener.accept()
        except (BlockingIOError, InterruptedError):
            return  # another worker took it
        except OSError as error:
            # EMFILE and the like: wait instead of spinning on a listener that is ready.
            self.warn(f"{_now()} accept failed: {error}")
            self._listen(False)
            self.loop.call_later(0.1, self._listen, True)
            return
        try:
            if isinstance(address, tuple) and not _allowed(address[0], self.settings.allow):
                self.warn(f"{_now()} refused a connection from {address[0]} (not in --allow)")
                connection.close()
                return
            connection.setblocking(False)
        except Exception as error:  # a bug: this connection is lost, the loop goes on
            connection.close()
            self.warn(f"{_now()} connection dropped: {_exception(error)}")
            return
        _Connection(self, connection)  # answers, or fails, on its own
        if len(self.open) > self.connections:
            self._shed()

    def _shed(self) -> bool:
        """More connections than slots: close those whose clients made least progress
        (:meth:`_Connection.shed_order`) until they fit; if none may be shed (all younger
        than YOUNG, or being answered), accept no more until one may be, or one ends. Whether
        they fit."""
        now = self.loop.time()
        while len(self.open) > self.connections:
            victims = [(key, c) for c in self.open
                       if (key := c.shed_order(now)) is not None]
            if not victims:
                self._listen(False)
                young = [c.started for c in self.open if now - c.started < YOUNG]
                if young and self.resume is None:
                    self.resume = self.loop.call_at(min(young) + YOUNG, self._resume)
                return False
            victim = min(victims, key=lambda pair: pair[0])[1]
            victim._guarded(victim.shed)
        return True

    def _resume(self) -> None:
        self.resume = None
        if self._shed():
            self._listen(True)

    def closed(self, connection: "_Connection") -> None:
        self.open.discard(connection)
        if self.stopping:
            if not self.open and self.drained is not None and not self.drained.done():
                self.drained.set_result(None)
        elif not self.listening:
            self._listen(True)


class _Connection:
    """One client: its request read as it arrives (its header block within the header
    deadline, all of it within --timeout), answered, and closed. Each step is a callback of
    the loop; scoring runs on the loop, TELL (which waits for the update lock and rewrites the
    file) on a thread. Whatever a step raises closes the connection (:meth:`_abort`)."""

    # Defaults as class attributes: __init__, run for every request, sets none of them.
    finished = False  # closed, its slot freed
    heading = False  # the deadline set is the header block's
    warning = False  # the answer was an error: its log line is one of Worker.warn's
    expire: Callable[[], None] | None = None  # what the deadline's timer calls

    def __init__(self, worker: Worker, connection: socket.socket) -> None:
        self.worker, self.connection, self.loop = worker, connection, worker.loop
        self.settings = worker.settings
        # last: when the client last sent or took bytes (for shedding); after this, set only
        # by the loop's callbacks, never for a request that arrives whole.
        self.started = self.last = self.loop.time()
        self.fd = connection.fileno()
        self.buffer, self.pos, self.ended = bytearray(), 0, False
        self.request: _Request | None = None
        self.fields = 0  # header fields read, once the request line is
        # Where the body starts in the buffer; -1: fields still to read; -2: the answer sent,
        # reading what the client still sends until it closes.
        self.body_at = -1
        self.method, self.verdict = "-", None
        self.out = memoryview(b"")
        self.then: Callable[[], None] = self._close
        self.reading = self.writing = False
        worker.open.add(self)  # first: the request may be answered before this returns
        # The deadline's timer is set only when the request is not all there at once: made
        # and cancelled for every request, it cost 0.02–0.05 ms of CPU (a CHECK, its scoring
        # left out, took 0.19–0.23 ms of the server's CPU, without the timer 0.16–0.18).
        self.timer: asyncio.TimerHandle | None = None
        # Read at once: the request is usually there, and then the loop never watches this
        # socket (two epoll_ctl calls and the selector's bookkeeping saved).
        try:
            self._readable()
        except Exception as error:
            self._abort(error)

    # -- the loop's calls: whatever they raise ends this connection alone -------------------

    def _guarded(self, step: Callable[..., None], *args: Any) -> None:
        try:
            step(*args)
        except Exception as error:
            self._abort(error)

    def _event(self, step: Callable[[], None]) -> None:
        """The loop's reader or writer callback: the client sent or took bytes now."""
        self.last = self.loop.time()
        self._guarded(step)

    def _abort(self, error: Exception) -> None:
        """The last resort for a bug on this connection's path: closed, its slot freed, one
        bounded line logged."""
        self.verdict = None
        try:
            self.worker.warn(f"{_now()} {self.method} connection dropped: {_exception(error)}")
        finally:
            self._close()

    def _deadline(self, when: float, expire: Callable[[], None]) -> None:
        """``expire`` at loop time ``when`` (when stopping, at the drain's end at the latest)."""
        self._cancel_timer()
        self.expire = expire
        self.timer = self.loop.call_at(min(when, self.worker.stop_by), self._guarded, expire)

    def _cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer, self.heading = None, False

    def shed_order(self, now: float) -> tuple[int, float, float] | None:
        """Which connection to shed first, the smallest first: (0, its client's bytes a
        second since the accept, the accept) while it reads the request, or what the client
        still sends after an error answer, so that a client dripping bytes or sending none
        goes before spamc, whose message follows its header block by milliseconds, and of
        those sending none the oldest first; (1, when the client last took bytes, …) while
        an answer waits to be taken (the request was whole). None, not to be shed, in its
        first YOUNG seconds and while it is being answered (a TELL at work)."""
        age = now - self.started
        if self.finished or age < YOUNG:
            return None
        if self.reading:
            got = self.drained if self.body_at == -2 else len(self.buffer)
            return 0, got / age, self.started
        if self.writing:
            return 1, self.last, self.started
        return None

    def shed(self) -> None:
        """Closed for a newer connection: one still sending its request is told so."""
        if self.body_at != -2 or self.writing:  # not one answered, only read till it closes
            self.verdict = (f"shed after {self.loop.time() - self.started:.1f} s, "
                            f"{len(self.buffer)} bytes (every connection slot held)")
            self.warning = True
        if self.reading and self.body_at != -2:
            try:
                self.connection.send(b"SPAMD/1.0 69 Service Unavailable: too many connections, "
                                     b"this one the slowest\r\n")
            except OSError:
                pass
        self._close()

    def hurry(self, stop_by: float) -> None:
        """The daemon is stopping: end by ``stop_by`` (loop time); one already answered, now."""
        if self.body_at == -2 and not self.writing:
            self._close()
        elif self.timer is not None and self.timer.when() > stop_by:
            self._deadline(stop_by, self.expire)

    # -- reading -----------------------------------------------------------------------

    def _readable(self) -> None:
        try:
            data = self.connection.recv(65536)
        except (BlockingIOError, InterruptedError):
            self._wait_for_input()
            return
        except OSError:
            data = b""  # reset by the client: the end of its input
        if self.body_at == -2:
            if not data:
                self._close()
            self.drained += len(data)
            return
        if data:
            self.buffer += data
        else:
            self.ended = True
        try:
            request = self._parse()
        except RequestError as error:
            self._stop_reading()
            self._failed(error)
            return
        if request is not None:
            self._stop_reading()
            self._answer(request)
        elif self.ended:  # _parse raises for every request cut short; kept as a guard
            self._stop_reading()
            self._failed(_bad("closed before the request ended"))
        else:
            self._wait_for_input()

    def _wait_for_input(self) -> None:
        if not self.reading:
            self.loop.add_reader(self.fd, self._event, self._readable)
            self.reading = True
        if self.timer is None or (self.heading and self.body_at != -1):
            # The header block within the header deadline of the connection, all of the
            # request within --timeout of it.
            heading = self.body_at == -1
            limit = self._header_timeout() if heading else self.settings.timeout
            self._deadline(self.started + limit, self._timed_out)
            self.heading = heading

    def _header_timeout(self) -> float:
        return min(self.settings.header_timeout, self.settings.timeout)

    def _stop_reading(self) -> None:
        if self.reading:
            self.loop.remove_reader(self.fd)
            self.reading = False
        self._cancel_timer()

    def _timed_out(self) -> None:
        self._stop_reading()
        if self.worker.stopping:
            self._failed(RequestError(Code.EX_UNAVAILABLE, "Service Unavailable: the daemon "
                                                           "is stopping"))
            return
        limit = self._header_timeout() if self.body_at == -1 else self.settings.timeout
        self._failed(RequestError(Code.EX_TIMEOUT, f"Timeout: ({limit:g} second timeout "
                                                   f"reading from client)"))

    def _line(self) -> bytes | None:
        """The next line with its line feed (without one at the end of input), or None
        until it has arrived."""
        end = self.buffer.find(b"\n", self.pos)
        if end < 0:
            if len(self.buffer) - self.pos > MAX_LINE:  # no spamc writes that
                raise _bad(f"header line longer than {MAX_LINE} bytes")
            if not self.ended:
                return None
            end = len(self.buffer) - 1
        line = bytes(self.buffer[self.pos:end + 1])
        self.pos = end + 1
        return line

    def _parse(self) -> _Request | None:
        """The request once it is all here (None until then): its line, its fields, and its
        body (Content-length bytes, or up to the end of input without one, as spamd reads),
        uncompressed. Each line is looked at once, however slowly it arrives; a bad one is
        answered as soon as it is read."""
        max_size = self.settings.max_size
        while self.body_at == -1:
            line = self._line()
            if line is None:
                return None
            if self.request is None:
                self.request = _request_line(line)
                self.method = self.request.method
                # PING and SKIP carry fields (an empty block) from protocol 1.5 on (spamd bug 6187).
                if self.request.method in ("PING", "SKIP") and self.request.version < (1, 5):
                    return self.request
                continue
            if not line.endswith(b"\n"):
                raise _bad("EOF during headers")
            line = line.rstrip(b"\r\n")
            if not line:
                self.body_at = self.pos
                break
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon:
                raise _bad("header not in 'Name: value' format")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                _check_length(value, self.request.fields, max_size)
            self.request.fields[name] = value
            self.fields += 1
            if self.fields > MAX_FIELDS:
                raise _bad("too many headers")
        request = self.request
        if request.method in ("PING", "SKIP"):
            return request
        compress = request.fields.get("compress")
        if compress is not None and compress.lower() != "zlib":
            raise _bad(f"compression type not supported: {_printable(compress.encode())}")
        length = request.fields.get("content-length")
        held = len(self.buffer) - self.body_at
        if length is not None:
            expected = int(length)  # ASCII digits, at most max_size: _check_length
            if held < expected and not self.ended:
                return None
            body = bytes(self.buffer[self.body_at:self.body_at + expected])
            if len(body) != expected:
                raise _bad(f"Content-Length mismatch: Expected {expected} bytes, "
                           f"got {len(body)} bytes")
        else:
            if held > max_size:
                raise _too_big(None, max_size)
            if not self.ended:
                return None
            body = bytes(self.buffer[self.body_at:])
        self.buffer = bytearray()
        if compress is not None:
            inflate = zlib.decompressobj()
            try:
                body = inflate.decompress(body, max_size + 1)
            except zlib.error as error:
                raise RequestError(Code.EX_UNAVAILABLE, f"Service Unavailable: zlib: {error}") from None
            if len(body) > max_size:
                raise _too_big(None, max_size)
            if not inflate.eof:
                raise RequestError(Code.EX_UNAVAILABLE,
                                   "Service Unavailable: zlib: the compressed message is cut short")
        request.body = body
        return request

    # -- answering ---------------------------------------------------------------------

    def _answer(self, request: _Request) -> None:
        method = request.method
        if method == "PING":
            self._send(b"SPAMD/1.5 0 PONG\r\n")
            return
        if method == "SKIP":
            self._close()
            return
        try:
            version = self.worker.model.refresh(self.worker.log)
            if method == "TELL":
                self._tell(request, version)
                return
            answer, self.verdict = _scored_answer(request, version, self.settings)
        except RequestError as error:
            self._failed(error)
            return
        except Exception as error:  # a bug: this client gets an error, the others go on
            self._internal_error(error)
            return
        self._send(answer)

    def _tell(self, request: _Request, version: Version) -> None:
        learning = _tell_job(request, version, self.worker.model.path, self.settings)
        future = self.loop.run_in_executor(None, learning)
        future.add_done_callback(lambda done: self._guarded(self._told, done))

    def _told(self, future: asyncio.Future) -> None:
        if self.finished:
            return
        try:
            answer, self.verdict = future.result()
        except RequestError as error:
            self._failed(error)
            return
        except Exception as error:
            self._internal_error(error)
            return
        self._send(answer)

    def _internal_error(self, error: Exception) -> None:
        self.worker.warn(f"{_now()} internal error: {_exception(error)}")
        self._failed(RequestError(Code.EX_UNAVAILABLE, "Service Unavailable: internal error"))

    def _failed(self, error: RequestError) -> None:
        self.verdict = f"error {int(error.code)} {error.text}"
        self.warning = True
        # Then read what the client still sends, so that closing does not reset the
        # connection before the client has read the answer.
        self._send(error.answer(), then=self._discard)

    def _discard(self) -> None:
        if self.ended:
            self._close()
            return
        try:
            self.connection.shutdown(socket.SHUT_WR)  # the answer is whole
        except OSError:
            pass
        self.body_at, self.drained, self.buffer = -2, len(self.buffer), bytearray()
        self._deadline(self.loop.time() + self.settings.timeout, self._close)
        self._wait_for_input()

    def _send(self, data: bytes, then: Callable[[], None] | None = None) -> None:
        """Send ``data`` (within --timeout if the client reads slowly), then ``then``
        (default: close)."""
        self.out, self.then = memoryview(data), then or self._close
        self._writable()

    def _writable(self) -> None:
        try:
            while self.out:
                self.out = self.out[self.connection.send(self.out):]
        except (BlockingIOError, InterruptedError):
            if not self.writing:
                self.loop.add_writer(self.fd, self._event, self._writable)
                self.writing = True
                self._deadline(self.loop.time() + self.settings.timeout, self._close)
            return
        except OSError:
            self._close()  # the client went away: nothing more to do for it
            return
        if self.writing:
            self.loop.remove_writer(self.fd)
            self.writing = False
            self._cancel_timer()
        self.then()

    def _close(self) -> None:
        if self.finished:
            return
        self.finished = True
        try:
            self._cancel_timer()
            if self.reading:
                self.reading = False
                self.loop.remove_reader(self.fd)
            if self.writing:
                self.writing = False
                self.loop.remove_writer(self.fd)
        finally:  # whatever failed above, the socket is closed and the slot freed
            try:
                self.connection.close()
            finally:
                self.worker.closed(self)
        if self.verdict is not None:
            line = (f"{_now()} {self.method} {self.verdict} "
                    f"{(self.loop.time() - self.started) * 1e3:.1f} ms")
            if self.warning:
                self.worker.warn(line)
            else:
                self.worker.log(line)


def _check_length(value: str, fields: dict[str, str], max_size: int) -> None:
    """RequestError unless ``value`` is a request's one Content-length: ASCII digits, at
    most MAX_DIGITS of them, a number up to ``max_size``."""
    if "content-length" in fields:
        raise _bad("more than one Content-Length")
    if not _DIGITS.fullmatch(value):
        raise _bad("Content-Length contains non-numeric bytes")
    if len(value) > MAX_DIGITS:
        raise _bad(f"Content-Length of more than {MAX_DIGITS} digits")
    if (size := int(value)) > max_size:
        raise _too_big(size, max_size)


def _request_line(line: bytes) -> _Request:
    """The request of a ``METHOD SPAMC/1.x`` line; RequestError for anything else."""
    if not line:
        raise _bad("closed before headers")
    match = _REQUEST_LINE.fullmatch(line)
    if match is None:
        raise _bad(f"not a spamc request: {_printable(line)}")
    method = match[1].decode()
    version = _VERSION.fullmatch(match[2])
    if version is None or version[1] != b"1":
        raise _bad(f"unsupported protocol version SPAMC/{_printable(match[2])}; this is 1.x")
    if method not in METHODS:
        raise _bad(f"unknown method {_printable(method)}")
    return _Request(method, (int(version[1]), int(version[2])), {})


def _scored_answer(request: _Request, version: Version, settings: Settings) -> tuple[bytes, str]:
    """(the answer to a request that scores its message, what the log line says of it)."""
    method = request.method
    decision = _verdict(version, request.body)
    spam = decision["status"] == "spam"
    spam_field = _spam_field(decision, method)
    verdict = (f"{decision['status']} {_shown_score(decision):.1f}/{THRESHOLD:.1f} "
               f"{len(request.body)} bytes")
    if method == "CHECK":
        return f"SPAMD/1.1 0 EX_OK\r\nSpam: {spam_field}\r\n\r\n".encode(), verdict
    if method in ("PROCESS", "HEADERS"):
        body = add_headers(request.body, headers(decision))
        if settings.spamassassin_headers:
            body = _spamassassin_fields(body, decision)
        if method == "HEADERS":
            body = _header_block(body)
    elif method == "SYMBOLS":
        body = _symbol(decision).encode()
    elif method == "REPORT" or (method == "REPORT_IFSPAM" and spam):
        body = _report(version, request.body, decision).encode("utf-8", "replace")
    else:
        body = b""
    head = f"SPAMD/1.1 0 EX_OK\r\nContent-length: {len(body)}\r\nSpam: {spam_field}\r\n\r\n"
    return head.encode() + body, verdict


def _tell_job(request: _Request, version: Version, path: str,
              settings: Settings) -> Callable[[], tuple[bytes, str]]:
    """TELL's work, checked here and done by the function returned (on a thread): (the
    answer, what the log line says of it)."""
    if not settings.allow_tell:
        raise RequestError(Code.EX_UNAVAILABLE, "Service Unavailable: TELL commands are "
                           "not enabled, set the --allow-tell switch.")
    set_local = "local" in request.fields.get("set", "").lower()
    remove_local = "local" in request.fields.get("remove", "").lower()
    if set_local and remove_local:
        raise _bad("Unable to set local and remove local in the same operation.")
    kind = request.fields.get("message-class", "").lower()
    if set_local and kind not in ("spam", "ham"):
        raise _bad(f"Message-class must be spam or ham, not '{_printable(kind)}'")

    def job() -> tuple[bytes, str]:
        did = ""
        try:
            if set_local:
                label, other = ((version.spam_class, version.ham_class) if kind == "spam"
                                else (version.ham_class, version.spam_class))
                if learn(path, request.body, label, other):
                    did = "DidSet: local\r\n"
            elif remove_local:
                if forget(path, request.body, version.classes):
                    did = "DidRemove: local\r\n"
        except (TextnbError, OSError) as error:  # a bad model file: the client learns nothing
            raise RequestError(Code.EX_UNAVAILABLE, f"Service Unavailable: {error}") from None
        what = ("learned " + kind if did.startswith("DidSet") else "forgot" if did
                else "nothing to do")
        return f"SPAMD/1.1 0 EX_OK\r\n{did}\r\n".encode(), f"{what} {len(request.body)} bytes"

    return job


def _too_big(size: int | None, limit: int) -> RequestError:
    said = f"{size} bytes" if size is not None else f"more than {limit} bytes"
    return RequestError(Code.EX_TOOBIG, f"Message too big: {said}, the limit is {limit}")


def _printable(data: bytes | str, limit: int = 60) -> str:
    """At most ``limit`` characters of untrusted bytes or text, fit for one log or answer
    line."""
    text = data.decode("latin-1") if isinstance(data, bytes) else data
    return "".join(c if " " <= c <= "~" else "?" for c in text[:limit])


def _exception(error: BaseException) -> str:
    """An exception in one bounded line: its type and the start of its message."""
    return f"{type(error).__name__}: {_printable(str(error), 120)}"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def _allowed(host: str, allow: Sequence) -> bool:
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    if getattr(address, "ipv4_mapped", None):
        address = address.ipv4_mapped
    return any(address.version == network.version and address in network for network in allow)


# -- sockets and processes ---------------------------------------------------------------

def bind_unix(path: str | os.PathLike | None = None) -> socket.socket:
    """A listening Unix socket at ``path`` (default: :func:`textnb.serve.client.default_socket_path`),
    mode 0600. A stale socket file (nobody listening) is replaced; a live one or any other
    file is an error. The default's /tmp fallback directory is made private (0700)."""
    default = path is None
    path = os.fspath(default_socket_path() if default else path)
    directory = os.path.dirname(path) or "."
    if default and not os.path.isdir(directory):
        os.makedirs(directory, mode=0o700, exist_ok=True)
    if default:
        st = os.lstat(directory)
        if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077 or not stat.S_ISDIR(st.st_mode):
            raise ServeError(f"socket directory '{directory}' is not a private directory of "
                             f"this user; give --socket PATH")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISSOCK(st.st_mode):
            raise ServeError(f"'{path}' exists and is not a socket; give another --socket")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(2.0)  # a live daemon's full listen queue makes connect wait
        try:
            probe.connect(path)
        except ConnectionRefusedError:
            os.unlink(path)  # stale: no process listens on it (left by a daemon that died)
        except FileNotFoundError:
            pass
        except TimeoutError:
            raise ServeError(f"'{path}' is in use: another daemon listens on it") from None
        except OSError as error:
            raise ServeError(f"cannot use '{path}': {error.strerror or error}") from None
        else:
            raise ServeError(f"'{path}' is in use: another daemon listens on it")
        finally:
            probe.close()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)  # the socket is born 0600: no moment when others may connect
    try:
        listener.bind(path)
    except OSError as error:
        listener.close()
        raise ServeError(f"cannot listen on '{path}': {error.strerror}") from None
    finally:
        os.umask(mask)
    listener.listen(socket.SOMAXCONN)
    return listener


def bind_tcp(address: str) -> socket.socket:
    """A listening TCP socket at ``HOST:PORT`` (``[::1]:783`` for IPv6)."""
    host, colon, port = address.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ServeError(f"--listen wants HOST:PORT, got {address!r}")
    try:
        family, kind, proto, _, where = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)[0]
        listener = socket.socket(family, kind, proto)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(where)
    except OSError as error:
        raise ServeError(f"cannot listen on {address}: {error.strerror or error}") from None
    listener.listen(socket.SOMAXCONN)
    return listener


class PidFile:
    """``--pidfile``: this process's id in a file, locked (fcntl.lockf) while it lives.

    A file that a live process holds locked is refused; any other (a stale one, left by a
    daemon killed) is replaced. The id is written to a new file (O_EXCL, O_NOFOLLOW: never
    through a symbolic link or into another file) renamed over the path, so a symbolic link
    there is replaced, not followed. The lock is a POSIX record lock: forked workers do not
    inherit it, so it ends with this process, even killed.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        import fcntl
        import tempfile
        self.path = os.fspath(path)
        holder = _locked_by(self.path)
        if holder is not None:
            raise ServeError(f"'{self.path}' is the pidfile of a running daemon (pid "
                             f"{holder or '?'}); give another --pidfile")
        directory, name = os.path.split(self.path)
        try:
            fd, staged = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory or ".")
        except OSError as error:
            raise ServeError(f"cannot write --pidfile '{self.path}': {error.strerror}") from None
        try:
            os.fchmod(fd, 0o644)
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, f"{os.getpid()}\n".encode())
            os.replace(staged, self.path)
        except BaseException as error:
            os.close(fd)
            os.unlink(staged)
            if isinstance(error, OSError):
                raise ServeError(f"cannot write --pidfile '{self.path}': "
                                 f"{error.strerror}") from None
            raise
        self.fd = fd
        st = os.fstat(fd)
        self.identity = st.st_dev, st.st_ino

    def remove(self) -> None:
        """Remove the file if it is still this one (not one another daemon wrote since)."""
        try:
            st = os.lstat(self.path)
            if (st.st_dev, st.st_ino) == self.identity:
                os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)


def _locked_by(path: str) -> str | None:
    """The id in pidfile ``path`` if a live process holds it locked ("" if it says none),
    else None (no file, a stale one, a symbolic link or something not a file)."""
    import fcntl
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return os.read(fd, 20).decode("ascii", "replace").strip()
        return None
    finally:
        os.close(fd)  # and with it this process's test lock


def systemd_listeners() -> list[socket.socket]:
    """The sockets systemd passed (socket activation: $LISTEN_PID is us, $LISTEN_FDS of them
    from fd 3), else none."""
    if os.environ.get("LISTEN_PID") != str(os.getpid()):
        return []
    count = int(os.environ.get("LISTEN_FDS", "0") or 0)
    for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        os.environ.pop(name, None)
    return [socket.socket(fileno=3 + i) for i in range(count)]


def run(model: Model, listeners: Sequence[socket.socket], settings: Settings,
        workers: int = 1) -> None:
    """Serve until SIGTERM (or SIGINT): ``workers`` processes forked from this one, which
    restarts any that dies and passes SIGHUP (reload) on; with one worker, this process
    serves. Returns once the connections in hand have ended (answered, or cut STOP_GRACE
    seconds after SIGTERM)."""
    _warm_up(model.version, settings.log)
    if workers <= 1:
        signal.signal(signal.SIGINT, lambda *_: os.kill(os.getpid(), signal.SIGTERM))
        asyncio.run(Worker(model, listeners, settings, settings.max_connections).run())
        return
    per_worker = max(1, -(-settings.max_connections // workers))
    # Loaded pages stay shared with the workers: no collection rewrites their object headers.
    gc.collect()
    gc.freeze()
    children: dict[int, float] = {}
    stopping = False
    # Only this process holds the pipe's write end: when it dies, even killed, the workers
    # read the end of file, and stop (Worker._orphaned).
    watch, alive = os.pipe()

    def start() -> None:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(alive)
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent turns ^C into SIGTERM
                for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGALRM):
                    signal.signal(sig, signal.SIG_DFL)
                asyncio.run(Worker(model, listeners, settings, per_worker, watch).run())
                code = 0
            except BaseException as error:  # a bug: say so; the parent starts another worker
                if settings.log:
                    settings.log(f"{_now()} worker failed: {type(error).__name__}: {error}")
            finally:
                os._exit(code)  # never the parent's clean-up: the socket file stays
        children[pid] = time.monotonic()

    def stop(*_: Any) -> None:
        nonlocal stopping
        stopping = True
        for pid in children:
            _signal(pid, signal.SIGTERM)

    def pass_on(signum: int, _: Any) -> None:
        for pid in children:
            _signal(pid, signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGHUP, pass_on)
    for _ in range(workers):
        # Signals wait while a worker is forked, so none reaches it before its own handlers.
        signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            start()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        born = children.pop(pid, None)
        if born is None or stopping:
            continue
        if settings.log:
            settings.log(f"{_now()} worker {pid} ended ({_status(status)}); starting another")
        if time.monotonic() - born < 1.0:
            time.sleep(1.0)  # a worker that dies at once must not make a fork loop
        signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            if not stopping:
                start()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    os.close(watch)
    os.close(alive)


_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}

# A message that takes the paths parsing and tokenizing import lazily (the email package, the
# HTML parser, the commonest legacy codecs), scored once before serving. Without it each
# worker imported them on its first message: 40–55 ms for it (spamc's first messages, 2
# workers), not shared between the workers.
_WARM_UP = (b"From: A <a@example.com>\r\nSubject: =?iso-8859-1?q?caf=E9?=\r\nMIME-Version: 1.0\r\n"
            b"Content-Type: multipart/alternative; boundary=\"b\"\r\n\r\n--b\r\n"
            b"Content-Type: text/plain; charset=windows-1252\r\n"
            b"Content-Transfer-Encoding: quoted-printable\r\n\r\ncaf=E9 http://example.com/\r\n"
            b"--b\r\nContent-Type: text/html; charset=iso-8859-15\r\n"
            b"Content-Transfer-Encoding: base64\r\n\r\n"
            b"PGh0bWw+PGJvZHk+PHA+Q2Fm6SA8YSBocmVmPSJodHRwOi8vZXhhbXBsZS5jb20vYT9iPWMiPm9mZmVy\r\n"
            b"PC9hPiAmYW1wOyA8aW1nIHNyYz0iY2lkOngiPjwvcD48L2JvZHk+PC9odG1sPg==\r\n--b--\r\n")


def _warm_up(version: Version, log: Callable[[str], None] | None) -> None:
    """Score _WARM_UP once; a failure is logged, and serving goes on."""
    try:
        _verdict(version, _WARM_UP)
    except Exception as error:  # a bug, which every message will meet: say so now
        if log:
            log(f"{_now()} scoring a sample message failed: {type(error).__name__}: {error}")


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.waitstatus_to_exitcode(status)}"
