"""textnb.workers: results in order, a bounded look-ahead, errors passed on, the pool chosen."""

import os
import signal
import threading

import joblib
import pytest

import textnb.text.tokens
import textnb.workers
from textnb.workers import WorkerDied, imap, n_workers, spawned


def test_n_workers_counts_as_joblib_does():
    cores = len(os.sched_getaffinity(0))
    assert n_workers(None) == n_workers(-1) == cores
    assert n_workers(-2) == max(cores - 1, 1)
    assert n_workers(-cores - 5) == 1
    assert n_workers(3) == 3


@pytest.mark.parametrize("pool", [spawned, imap])
def test_results_come_in_order_from_worker_processes(pool):
    jobs = [(n, 7) for n in range(50)]
    assert list(pool(divmod, jobs, 2)) == [divmod(n, 7) for n in range(50)]
    assert os.getpid() not in pool(os.getpid, [()] * 6, 2)
    assert list(pool(os.getpid, [()] * 3, 1)) == [os.getpid()] * 3  # one worker: here


def test_the_pool_is_kept_for_the_next_call_and_replaced_when_a_worker_dies():
    pools = textnb.workers._pools
    assert list(spawned(divmod, [(7, 2)] * 4, 2)) == [(3, 1)] * 4
    pool = pools[2]
    assert list(spawned(divmod, [(9, 2)] * 4, 2)) == [(4, 1)] * 4
    assert pools[2] is pool
    with pytest.raises(WorkerDied, match="exit status 1"):
        list(spawned(os._exit, [(1,)], 2))
    assert 2 not in pools
    assert all(worker.process.poll() is not None for worker in pool)
    assert list(spawned(divmod, [(7, 2)], 2)) == [(3, 1)]
    assert pools[2] is not pool


def test_a_pool_left_with_results_out_is_not_kept():
    """A caller that stops early (or a job that fails) leaves results on their way back: the
    pool is stopped, so that they never reach the next call."""
    results = spawned(divmod, [(n, 3) for n in range(10)], 2)
    assert next(results) == (0, 0)
    results.close()
    assert 2 not in textnb.workers._pools
    with pytest.raises(ZeroDivisionError):
        list(spawned(divmod, [(1, 0), (4, 2), (6, 2)], 2))
    assert 2 not in textnb.workers._pools
    assert list(spawned(divmod, [(n, 3) for n in range(4)], 2)) == [divmod(n, 3) for n in range(4)]


def test_large_jobs_and_results_pass_both_ways_at_once():
    # A job is written by a thread of its own: the caller never waits on a worker that waits
    # to send back a result larger than a pipe holds.
    jobs = [(bytes([65 + n]) * 3_000_000,) for n in range(6)]
    assert list(spawned(bytes.lower, jobs, 2)) == [job.lower() for job, in jobs]


def test_kept_pools_are_shut_down_at_exit():
    list(spawned(divmod, [(7, 2)] * 3, 2))
    pool = textnb.workers._pools[2]
    textnb.workers._shut_down()  # what atexit runs
    assert not textnb.workers._pools
    # ended and reaped: killed, as idle workers need no teardown of their own
    assert [worker.process.returncode for worker in pool] == [-signal.SIGKILL] * 2
    assert list(spawned(divmod, [(7, 2)], 2)) == [(3, 1)]  # a later call starts afresh


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_leaves_its_parents_workers_alone():
    list(spawned(divmod, [(7, 2)] * 3, 2))
    pool = textnb.workers._pools[2]
    pid = os.fork()
    if pid == 0:  # the child: no pool of its own yet, and its exit kills none of the parent's
        ok = not textnb.workers._pools and list(spawned(divmod, [(9, 4)], 2)) == [(2, 1)]
        textnb.workers._shut_down()
        os._exit(0 if ok else 1)
    assert os.waitpid(pid, 0)[1] == 0
    assert textnb.workers._pools[2] is pool
    assert all(worker.process.poll() is None for worker in pool)
    assert list(spawned(divmod, [(7, 2)], 2)) == [(3, 1)]


def test_where_no_process_starts_the_jobs_run_here(monkeypatch):
    import subprocess

    def unavailable(*args, **kwargs):  # a sandbox that forbids new processes
        raise PermissionError("Operation not permitted")

    textnb.workers._shut_down()
    monkeypatch.setattr(subprocess, "Popen", unavailable)
    assert list(spawned(os.getpid, [()] * 3, 2)) == [os.getpid()] * 3


def test_workers_leave_ctrl_c_to_the_command():
    # A terminal's Ctrl-C reaches every process of the group: only the command answers it
    # (one line), not each worker with a traceback.
    import signal
    assert set(spawned(signal.getsignal, [(signal.SIGINT,)] * 4, 2)) == {signal.SIG_IGN}


def test_jobs_are_read_a_few_ahead_of_the_results_taken():
    read = []

    def jobs():
        for n in range(10):
            read.append(n)
            yield (n, 3)

    taken = [len(read) for _ in spawned(divmod, jobs(), 2)]
    # A job for each worker and one more sent ahead, then one more for each result taken:
    # never all at once.
    assert taken == [4, 5, 6, 7, 8, 9, 10, 10, 10, 10]


@pytest.mark.parametrize("pool", [spawned, imap])
def test_an_error_in_a_worker_reaches_the_caller(pool):
    with pytest.raises(ZeroDivisionError):
        list(pool(divmod, [(1, 1), (1, 0), (2, 1)], 2))


def test_every_caller_uses_the_workers_unless_it_chose_a_joblib_backend(monkeypatch):
    calls = []
    monkeypatch.setattr(textnb.workers, "spawned", lambda *args: calls.append("spawned") or [])
    monkeypatch.setattr(textnb.workers, "_joblib", lambda *args: calls.append("joblib") or [])
    list(imap(divmod, [(1, 1)], 2))
    assert calls.pop() == "spawned"
    with joblib.parallel_backend("threading"):  # a backend the caller chose wins
        list(imap(divmod, [(1, 1)], 2))
    assert calls.pop() == "joblib"


def test_a_script_not_guarded_by_main_trains_in_workers(tmp_path):
    """The workers never run the caller's main module: a script without ``if __name__ ==
    "__main__"`` trains on 2,200 documents (counted in worker processes) once, without joblib."""
    import subprocess
    import sys
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import random, sys\n"
        "from textnb import TextClassifier\n"
        "print('script ran', flush=True)\n"
        "rng = random.Random(3)\n"
        "texts = [' '.join(rng.choices([f'{c}{k}' for k in range(50)], k=12))\n"
        "         for c in ('a', 'b') for _ in range(1100)]\n"
        "labels = ['a'] * 1100 + ['b'] * 1100\n"
        "model = TextClassifier(n_jobs=2).fit(texts, labels)\n"
        "print(model.score(texts, labels), 'joblib' in sys.modules)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["script ran", "1.0 False"]


def test_a_joblib_backend_the_caller_chose_does_the_work():
    threads = []

    def where(n):  # a local function: only a thread backend can run it
        threads.append(threading.current_thread().name)
        return n * n

    with joblib.parallel_backend("threading", n_jobs=2):
        assert list(imap(where, [(n,) for n in range(20)], None)) == [n * n for n in range(20)]
    assert len(threads) == 20 and threading.current_thread().name not in threads


def test_the_command_counts_in_spawned_workers_without_joblib(tmp_path):
    import random
    import subprocess
    import sys

    import numpy as np

    from textnb.store.text_model import load_model

    rng = random.Random(3)
    for label in ("sport", "tech"):
        (tmp_path / label).mkdir()
        for i in range(1100):  # 2,200 documents: counted in worker processes from 2,000 on
            words = rng.choices([f"{label}{k}" for k in range(300)] + ["common"] * 50, k=12)
            (tmp_path / label / f"{i}.txt").write_text(" ".join(words))
    # As the console script runs it (textnb.__main__ as __main__), telling what it imported.
    probe = ("import atexit, runpy, sys\n"
             "atexit.register(lambda: print('joblib' in sys.modules, file=sys.stderr))\n"
             "sys.argv = ['textnb', *sys.argv[1:]]\n"
             "runpy.run_module('textnb', run_name='__main__', alter_sys=True)\n")
    models = {}
    for jobs in ("1", "2"):
        models[jobs] = tmp_path / f"jobs{jobs}.model"
        done = subprocess.run([sys.executable, "-c", probe, "train", "-q", "--jobs", jobs, "-m",
                               str(models[jobs]), str(tmp_path / "sport"), str(tmp_path / "tech")],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stderr.strip() == "False"
    serial, parallel = (load_model(models[jobs]) for jobs in ("1", "2"))
    assert parallel.vocabulary_.terms_ == serial.vocabulary_.terms_
    np.testing.assert_array_equal(parallel.model_.feature_count_, serial.model_.feature_count_)
    np.testing.assert_array_equal(parallel.digests_, serial.digests_)


@pytest.mark.skipif(textnb.text.tokens._fast is None, reason="textnb's C part was not built: "
                    "counting then falls back to numpy")
def test_workers_count_documents_without_importing_numpy():
    """A worker that counted documents has not imported numpy (0.2 s of a worker's start):
    a pool of new workers, each given a part to count, then asked what it imported."""
    from textnb.text.counting import count_part
    from textnb.text.tokens import Tokenizer
    textnb.workers._shut_down()
    part = [b"Subject: cheap pills\n\nBuy cheap pills now", "a plain text"] * 3
    counted = list(spawned(count_part, [(Tokenizer(), part, True)] * 2, 2))
    assert counted[0].terms == ["buy", "cheap", "now", "pills", "plain",
                                "subject:cheap", "subject:pills", "text"]
    assert len(counted[0].digests) == 6 * 8
    imported = "'numpy' in __import__('sys').modules"
    assert list(spawned(eval, [(imported,)] * 2, 2)) == [False, False]


def test_a_job_sent_is_not_held_once_its_result_is_back():
    """The thread that writes jobs to a worker lets each go once written: a tuning's counts
    sent to a worker are freed when the tuning lets them go (45 MB of 20 Newsgroups')."""
    import time
    import weakref
    import numpy as np
    counts = np.arange(1000.0)
    sent = weakref.ref(counts)
    assert list(imap(len, [(counts,)], 2)) == [1000]
    del counts
    for _ in range(100):   # the writer's next statement after the worker has read the job
        if sent() is None:
            break
        time.sleep(0.01)
    assert sent() is None
