"""Generic machinery that several layers use: a child process with a time limit, and a
thread with a deep stack.

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

import multiprocessing
import sys
import threading
from typing import Any, Callable

__all__ = ["run_with_timeout", "deep"]


def _child(conn, fn, args) -> None:
    try:
        conn.send(("ok", fn(*args)))
    except BaseException as e:  # noqa: BLE001 - report any failure to the parent
        conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def run_with_timeout(fn: Callable, args: tuple, timeout: float) -> tuple[str, Any]:
    """Run ``fn(*args)`` in a child process; ``("timeout", None)`` after ``timeout`` s.

    The child is killed on timeout, so nothing (SymPy's ``simplify`` included) can
    hang the caller.

    Parameters
    ----------
    fn : callable
        A function the child can run (with the ``spawn`` start method it must be
        importable, as must its arguments and result be picklable).
    args : tuple
        Its positional arguments.
    timeout : float
        Seconds to wait for the result.

    Returns
    -------
    tuple
        ``("ok", result)``, ``("error", message)`` or ``("timeout", None)``.

    Examples
    --------
    >>> run_with_timeout(divmod, (7, 2), 10)
    ('ok', (3, 1))
    >>> run_with_timeout(divmod, (7, 0), 10)
    ('error', 'ZeroDivisionError: integer division or modulo by zero')
    """
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args), daemon=True)
    proc.start()
    child.close()
    try:
        if parent.poll(timeout):
            try:
                return parent.recv()
            except EOFError:
                return ("error", "the symbolic worker stopped")
        return ("timeout", None)
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(1)
        parent.close()


def deep(fn: Callable[[], Any], limit: int = 100_000, stack_mb: int = 512) -> Any:
    """Run ``fn()`` on a thread with a large stack and a high recursion limit.

    SymPy recurses through expression trees; graphs hundreds of nodes deep exceed
    Python's default limit.  An exception of ``fn`` is raised again in the caller.

    Examples
    --------
    >>> def depth(n):
    ...     return 0 if n == 0 else 1 + depth(n - 1)
    >>> deep(lambda: depth(5000))
    5000
    """
    out: dict = {}

    def run() -> None:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, limit))
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            out["error"] = e
        finally:
            sys.setrecursionlimit(old)

    size = threading.stack_size(stack_mb * 1024 * 1024)
    try:
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    finally:
        threading.stack_size(size)
    if "error" in out:
        raise out["error"]
    return out["value"]
