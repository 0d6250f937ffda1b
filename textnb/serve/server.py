"""spamc request bytes → spamd answer bytes: ``textnb serve``, the model held in memory.

SpamAssassin's daemon protocol (its spamd/PROTOCOL file, and /usr/sbin/spamd for what the
file leaves out), so that the unmodified ``spamc`` and every MTA, milter or recipe that runs it
can use textnb: a request is ``METHOD SPAMC/1.x``, header fields, a blank line and the message;
the answer is ``SPAMD/1.1 <sysexits code> <text>``, fields (``Spam: True ; 11.8 / 5.0``) and a
body. Every method: PING, CHECK, SYMBOLS, REPORT, REPORT_IFSPAM, PROCESS, HEADERS, SKIP, TELL.

Choices (their measurements: docs/design/delivery.md, ``python -m bench.serve``):

* **Processes × an event loop of callbacks.** A message costs about 1 ms of CPU, all Python,
  so threads would share one core under the GIL. ``--workers`` processes (default: one per core) are forked after the model is loaded and
  a sample message scored, so its pages and the modules parsing imports are shared; each
  runs an asyncio loop whose reader and writer callbacks drive every connection
  (:class:`_Connection`, no task or future per request), so a slow or silent client is an
  idle entry in the loop. A request is read under two deadlines (its header block within
  :data:`HEADER_TIMEOUT`, all of it within ``--timeout``); scoring runs on the loop, with
  :class:`Weights` (plain Python, no numpy call for a one-row matrix); TELL, which waits for
  the update lock and appends to the file's journal, runs on a thread, and the journal's fold
  in a process of its own (:mod:`textnb.serve.fold`).
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
import gc
import ipaddress
import math
import os
import signal
import socket
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .client import MAX_SIZE, TIMEOUT
from .model import Labels, Model, Version, decide_message, now, scored_answer, tell_job
from .protocol import (Code, MAX_FIELDS, MAX_LINE, Request, RequestError, bad_request,
                       check_length, printable, request_line, too_big)

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


# -- the model and the decision ------------------------------------------------------------


# -- TELL ------------------------------------------------------------------------------


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


class Worker:
    """One process's event loop: accepts on every listener and answers each connection.

    A connection is a :class:`_Connection` driven by the loop's reader and writer callbacks,
    not a task: a request that is there when it is accepted (as spamc's nearly always is) is
    read, answered and closed in that one turn of the loop, with no future (less CPU a request
    than a coroutine per connection: docs/design/delivery.md).

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
            self.log(f"{now()} {self.suppressed} more failed connections not logged (at most "
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
                self.log(f"{now()} exiting with {len(self.open)} connections open")

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
        self.log(f"{now()} the main process is gone: worker {os.getpid()} stops")
        self._listen(False)
        for listener in self.listeners:
            listener.close()
        self.listeners = []
        self.stop(ORPHAN_GRACE)

    def reload(self) -> None:
        try:
            self.model.load()
            self.log(f"{now()} model reloaded: {self.model.path}")
        except Exception as error:  # a bad file (or a bug loading it): the old one serves
            self.log(f"{now()} model not reloaded, the old one serves: {error}")

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
            self.warn(f"{now()} accept failed: {error}")
            self._listen(False)
            self.loop.call_later(0.1, self._listen, True)
            return
        try:
            if isinstance(address, tuple) and not _allowed(address[0], self.settings.allow):
                self.warn(f"{now()} refused a connection from {address[0]} (not in --allow)")
                connection.close()
                return
            connection.setblocking(False)
        except Exception as error:  # a bug: this connection is lost, the loop goes on
            connection.close()
            self.warn(f"{now()} connection dropped: {_exception(error)}")
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
        self.request: Request | None = None
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
            self.worker.warn(f"{now()} {self.method} connection dropped: {_exception(error)}")
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
            self._failed(bad_request("closed before the request ended"))
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
                raise bad_request(f"header line longer than {MAX_LINE} bytes")
            if not self.ended:
                return None
            end = len(self.buffer) - 1
        line = bytes(self.buffer[self.pos:end + 1])
        self.pos = end + 1
        return line

    def _parse(self) -> Request | None:
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
                self.request = request_line(line)
                self.method = self.request.method
                # PING and SKIP carry fields (an empty block) from protocol 1.5 on (spamd bug 6187).
                if self.request.method in ("PING", "SKIP") and self.request.version < (1, 5):
                    return self.request
                continue
            if not line.endswith(b"\n"):
                raise bad_request("EOF during headers")
            line = line.rstrip(b"\r\n")
            if not line:
                self.body_at = self.pos
                break
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon:
                raise bad_request("header not in 'Name: value' format")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                check_length(value, self.request.fields, max_size)
            self.request.fields[name] = value
            self.fields += 1
            if self.fields > MAX_FIELDS:
                raise bad_request("too many headers")
        request = self.request
        if request.method in ("PING", "SKIP"):
            return request
        compress = request.fields.get("compress")
        if compress is not None and compress.lower() != "zlib":
            raise bad_request(f"compression type not supported: {printable(compress.encode())}")
        length = request.fields.get("content-length")
        held = len(self.buffer) - self.body_at
        if length is not None:
            expected = int(length)  # ASCII digits, at most max_size: check_length
            if held < expected and not self.ended:
                return None
            body = bytes(self.buffer[self.body_at:self.body_at + expected])
            if len(body) != expected:
                raise bad_request(f"Content-Length mismatch: Expected {expected} bytes, "
                           f"got {len(body)} bytes")
        else:
            if held > max_size:
                raise too_big(None, max_size)
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
                raise too_big(None, max_size)
            if not inflate.eof:
                raise RequestError(Code.EX_UNAVAILABLE,
                                   "Service Unavailable: zlib: the compressed message is cut short")
        request.body = body
        return request

    # -- answering ---------------------------------------------------------------------

    def _answer(self, request: Request) -> None:
        method = request.method
        if method == "PING":
            self._send(b"SPAMD/1.5 0 PONG\r\n")
            return
        if method == "SKIP":
            self._close()
            return
        try:
            if method == "TELL":
                self._tell(request, self.worker.model.for_tell(self.worker.log))
                return
            version = self.worker.model.refresh(self.worker.log)
            answer, self.verdict = scored_answer(request, version, self.settings)
        except RequestError as error:
            self._failed(error)
            return
        except Exception as error:  # a bug: this client gets an error, the others go on
            self._internal_error(error)
            return
        self._send(answer)

    def _tell(self, request: Request, labels: Labels) -> None:
        learning = tell_job(request, labels, self.worker.model.path, self.settings)
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
        self.worker.model.fold.start(self.worker.loop, lambda why: self.worker.warn(
            f"{now()} journal not compacted: {why}"))

    def _internal_error(self, error: Exception) -> None:
        self.worker.warn(f"{now()} internal error: {_exception(error)}")
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
            line = (f"{now()} {self.method} {self.verdict} "
                    f"{(self.loop.time() - self.started) * 1e3:.1f} ms")
            if self.warning:
                self.worker.warn(line)
            else:
                self.worker.log(line)


def _exception(error: BaseException) -> str:
    """An exception in one bounded line: its type and the start of its message."""
    return f"{type(error).__name__}: {printable(str(error), 120)}"


def _allowed(host: str, allow: Sequence) -> bool:
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    if getattr(address, "ipv4_mapped", None):
        address = address.ipv4_mapped
    return any(address.version == network.version and address in network for network in allow)


# -- sockets and processes ---------------------------------------------------------------


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
                    settings.log(f"{now()} worker failed: {type(error).__name__}: {error}")
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
            settings.log(f"{now()} worker {pid} ended ({_status(status)}); starting another")
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
        decide_message(version, _WARM_UP)
    except Exception as error:  # a bug, which every message will meet: say so now
        if log:
            log(f"{now()} scoring a sample message failed: {type(error).__name__}: {error}")


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.waitstatus_to_exitcode(status)}"
