"""Generic machinery that several layers use: child processes that are always killed
with everything they started, a child with a time limit, work on a deep stack, and a
short temporary name.

Every child process started here is tracked and leads a process group of its own (its
children stay in it), so that :func:`stop` ends the whole subtree at once, and
:func:`stop_all` every child still running (the command line calls it on SIGINT and
SIGTERM).  The calling process's recursion limit and thread stack size are never
changed: work that needs a deeper stack than Python's default runs in a child process
(:func:`deep`), whose own limits die with it.

Layer 0: imports nothing of symgrad (only the standard library), so every layer may
import it.

Examples
--------
>>> run_with_timeout(pow, (2, 10), 10)
('ok', 1024)
>>> deep(lambda: 6 * 7)
42
"""
from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import threading
from typing import Any, Callable, Iterator

try:
    import resource
except ImportError:  # (not on Windows: there only the wall-clock limit holds)
    resource = None

__all__ = ["run_with_timeout", "deep", "start_child", "stop", "stop_all", "children",
           "signals_deferred", "raise_lost_signal", "atomic_file", "write_atomic",
           "DEFAULT_RECURSION"]

#: The recursion limit of a child that runs :func:`deep` work.
DEFAULT_RECURSION = 100_000
_live: dict = {}  # pid -> Process: the children started here and not yet stopped
_lock = threading.Lock()
_in_child = False  # (set in a child: its own children stay in its process group)


def _context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _enter(target: Callable, args: tuple) -> None:
    """The first thing a child runs: it leads a process group (once: grandchildren stay
    in their parent's), and forgets the parent's children (they are not its own)."""
    global _in_child, _lock
    _lock = threading.Lock()  # (another thread may have held the parent's at the fork)
    if not _in_child and hasattr(os, "setpgid"):
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
    _in_child = True
    _live.clear()
    for name in ("SIGINT", "SIGTERM"):  # (not the parent's handlers: a signal ends it)
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    target(*args)


def raise_lost_signal() -> None:
    """Raise again a SIGINT or SIGTERM whose exception some library swallowed (Cython's
    module set-up does): the handler in place then has a ``raise_again`` method (the
    command line's has; see ``symgrad_cli._signals``).  Called in the main thread where
    new work starts or outputs are committed, never during cleanup."""
    if threading.current_thread() is threading.main_thread():
        again = getattr(signal.getsignal(signal.SIGINT), "raise_again", None)
        if again is not None:
            again()


def start_child(target: Callable, args: tuple, daemon: bool = False):
    """Start ``target(*args)`` in a tracked child process (a ``multiprocessing``
    Process) that leads its own process group, and return it.  (Not daemonic by default:
    a child may start children of its own, which daemonic processes may not.)"""
    raise_lost_signal()
    proc = _context().Process(target=_enter, args=(target, args), daemon=daemon)
    with signals_deferred():  # (tracked from the moment it exists)
        proc.start()
        if not _in_child and hasattr(os, "setpgid"):
            try:  # (both sides set it: whichever runs first, no window without it)
                os.setpgid(proc.pid, proc.pid)
            except OSError:
                pass
        with _lock:
            _live[proc.pid] = proc
    return proc


def stop(proc, grace: float = 0.0) -> None:
    """Kill ``proc`` and every process in its group (its children), then reap it."""
    try:
        if proc.pid is not None and proc.exitcode is None:
            _kill(proc.pid)
        proc.join(grace + 1.0)
    finally:
        with _lock:
            _live.pop(proc.pid, None)


def _kill(pid: int) -> None:
    sig = getattr(signal, "SIGKILL", signal.SIGTERM)
    try:
        if hasattr(os, "killpg") and os.getpgid(pid) == pid:
            os.killpg(pid, sig)
            return
    except OSError:
        pass
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def stop_all() -> None:
    """Kill every tracked child and its group (on SIGINT/SIGTERM, and at exit)."""
    with _lock:
        procs = list(_live.values())
    for proc in procs:
        stop(proc)


def children() -> list:
    """The tracked children still running (their pids)."""
    with _lock:
        return [pid for pid, p in _live.items() if p.exitcode is None]


class signals_deferred:
    """Hold SIGINT and SIGTERM while the block runs (in this thread); they arrive when it
    ends.  A state change that must not be cut in half (a child started and tracked, a set
    of renames) runs inside one."""

    _SIGNALS = {getattr(signal, n) for n in ("SIGINT", "SIGTERM") if hasattr(signal, n)}

    def __enter__(self):
        self.old = None
        if hasattr(signal, "pthread_sigmask"):
            self.old = signal.pthread_sigmask(signal.SIG_BLOCK, self._SIGNALS)
        return self

    def pending(self) -> bool:
        """Whether a held signal is waiting."""
        return hasattr(signal, "sigpending") and bool(signal.sigpending() & self._SIGNALS)

    def __exit__(self, *exc) -> None:
        if self.old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.old)


#: The exit status of a child that used up its CPU time (:func:`_limit_cpu`).
_CPU_EXIT = 124
# (how such a child ends: its own exit, or the kernel's signals past RLIMIT_CPU)
_CPU_ENDS = {_CPU_EXIT} | {-getattr(signal, n) for n in ("SIGXCPU", "SIGKILL")
                           if hasattr(signal, n)}


def _limit_cpu(seconds: float) -> None:
    """In the child only: end it after ``seconds`` of its own CPU time (a profiling
    timer, SIGPROF: between two Python steps), and at the latest a second or two later
    (``RLIMIT_CPU`` in whole seconds: SIGXCPU, then SIGKILL, even inside a long C
    call)."""
    def end(signum, frame) -> None:
        os._exit(_CPU_EXIT)
    if hasattr(signal, "setitimer"):
        signal.signal(signal.SIGPROF, end)
        signal.setitimer(signal.ITIMER_PROF, max(seconds, 1e-3))
    if resource is None:
        return
    if hasattr(signal, "SIGXCPU"):
        signal.signal(signal.SIGXCPU, end)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + seconds)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or soft + 1 <= hard:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))


def _child(conn, fn, args, cpu: float | None = None) -> None:
    if cpu is not None:
        _limit_cpu(cpu)
    try:
        result = ("ok", fn(*args))
    except BaseException as e:  # noqa: BLE001 - report any failure to the parent
        result = ("error", f"{type(e).__name__}: {e}")
    if cpu is not None and hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_PROF, 0)  # (done: the answer goes out whole)
    try:
        try:
            conn.send(result)
        except Exception as e:  # noqa: BLE001 - an unpicklable result
            conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def run_with_timeout(fn: Callable, args: tuple, timeout: float, cpu: float | None = None
                     ) -> tuple[str, Any]:
    """Run ``fn(*args)`` in a child process; ``("timeout", None)`` after ``timeout`` s.

    The child is killed on timeout (and when the caller is interrupted), with every
    process it started, so nothing (SymPy's ``simplify`` included) can hang the caller
    or outlive it.  With ``cpu`` the child is also stopped after ``cpu`` seconds of its
    own CPU time (``("timeout", "cpu")``), whatever else runs on the machine: then the
    work done does not depend on the load, and ``timeout`` is only a safety net.

    Parameters
    ----------
    fn : callable
        A function the child can run (with the ``spawn`` start method it must be
        importable, as must its arguments and result be picklable).
    args : tuple
        Its positional arguments.
    timeout : float
        Seconds of wall time to wait for the result.
    cpu : float, optional
        Seconds of CPU time the child may use (a profiling timer ends it between two
        Python steps; ``RLIMIT_CPU`` a second later ends it even inside a long C call).

    Returns
    -------
    tuple
        ``("ok", result)``, ``("error", message)``, ``("timeout", None)`` (wall time) or
        ``("timeout", "cpu")`` (CPU time).

    Examples
    --------
    >>> run_with_timeout(divmod, (7, 2), 10)
    ('ok', (3, 1))
    >>> run_with_timeout(divmod, (7, 0), 10)
    ('error', 'ZeroDivisionError: integer division or modulo by zero')
    """
    parent, child = _context().Pipe(duplex=False)
    proc = None
    try:
        proc = start_child(_child, (child, fn, args, cpu))
        child.close()
        if parent.poll(timeout):
            try:
                return parent.recv()
            except EOFError:
                proc.join(1.0)
                if cpu is not None and proc.exitcode in _CPU_ENDS:
                    return ("timeout", "cpu")
                return ("error", "the symbolic worker stopped")
        return ("timeout", None)
    finally:
        if proc is not None:
            stop(proc)
        parent.close()
        child.close()


def _deep_child(conn, fn, limit: int, stack_mb: int) -> None:
    """In the child only: a thread with a large stack and a high recursion limit (the
    child's own, gone when it exits)."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = ("ok", fn())
        except BaseException as e:  # noqa: BLE001 - re-raised in the parent
            out["value"] = ("raise", e)

    sys.setrecursionlimit(limit)
    threading.stack_size(stack_mb * 1024 * 1024)
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    status, value = out["value"]
    try:
        payload = pickle.dumps((status, value))
    except Exception as e:  # noqa: BLE001 - an unpicklable result or exception
        payload = pickle.dumps(("raise", RuntimeError(f"{type(value).__name__}: {value}"
                                                      if status == "raise" else
                                                      f"unpicklable result: {e}")))
    conn.send_bytes(payload)
    conn.close()


def deep(fn: Callable[[], Any], limit: int = DEFAULT_RECURSION, stack_mb: int = 512) -> Any:
    """``fn()`` with a deep stack: SymPy recurses through expression trees, and graphs
    hundreds of nodes deep exceed Python's default recursion limit.

    ``fn`` runs in a tracked child process (forked: it sees the caller's objects) on a
    thread with a large stack; its result, or its exception, comes back by pickle, so it
    must be picklable and only as deep as the default limit allows unpickling (return
    text rather than a deep SymPy expression).  Where ``fork`` is not available ``fn``
    runs here, with the default limit.  The calling process's recursion limit and thread
    stack size are never changed.

    Examples
    --------
    >>> def depth(n):
    ...     return 0 if n == 0 else 1 + depth(n - 1)
    >>> deep(lambda: depth(5000))
    5000
    """
    if "fork" not in multiprocessing.get_all_start_methods():
        return fn()
    parent, child = _context().Pipe(duplex=False)
    proc = None
    try:
        proc = start_child(_deep_child, (child, fn, limit, stack_mb))
        child.close()
        try:
            status, value = pickle.loads(parent.recv_bytes())
        except EOFError:
            raise RuntimeError("the process working on a deep expression stopped "
                               f"(exit status {proc.exitcode})") from None
    finally:
        if proc is not None:
            stop(proc)
        parent.close()
        child.close()
    if status == "raise":
        raise value
    return value


@contextlib.contextmanager
def atomic_file(path, mode: str = "wb", **open_args) -> Iterator:
    """A file opened in ``mode`` that becomes ``path`` whole when the block ends without
    an error, and is removed otherwise: a temporary file beside ``path``, renamed.

    The temporary name is short (``.sg`` and eight characters), so it fits wherever
    ``path``'s own name fits; the file gets the usual permissions (umask), not
    ``mkstemp``'s private ones.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_file(p, "w") as f:
    ...     _ = f.write("whole")
    >>> p.read_text()
    'whole'
    """
    path = os.fspath(path)
    raise_lost_signal()
    with signals_deferred():  # (made and known together: an interruption removes it)
        fd, tmp = tempfile.mkstemp(prefix=".sg", suffix=".tmp",
                                   dir=os.path.dirname(os.path.abspath(path)))
    try:
        with open(fd, mode, **open_args) as f:
            yield f
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        raise_lost_signal()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (:func:`atomic_file`)."""
    with atomic_file(path) as f:
        f.write(data)
