"""Clean exits on SIGINT and SIGTERM: the command ends with its whole process tree within
a second, exit status 130 (SIGINT) or 143 (SIGTERM), one line on standard error and no
traceback.

:func:`install` makes either signal raise :class:`Interrupted` (a ``BaseException``, so
that no ``except Exception`` of a command swallows it) in the main thread; the stack
unwinds through every ``finally`` (temporary files and directories removed, the children
of :mod:`symgrad._util` killed with their process groups, a ``dot`` subprocess killed by
:func:`subprocess.run`); :func:`finish` then kills any tracked child still running, says
what happened in one line and ends the process.  A second signal during that cleanup is
ignored.  Where a library swallows the exception, it is raised again where new work
would start or outputs be committed, and when the command is done (:func:`raise_lost`).
Where Python cannot raise the exception (the signal came while a weakref
callback, a ``__del__`` or the garbage collector ran: Python prints "Exception ignored"
and goes on), :func:`install`'s hook on unraisable exceptions delivers the signal again, so
that it is raised in the code that runs next.

Examples
--------
>>> Interrupted(2).exit_code, Interrupted(15).exit_code
(130, 143)
"""
from __future__ import annotations

import os
import signal
import sys

__all__ = ["Interrupted", "install", "behind", "raise_lost", "finish"]

_NAMES = {getattr(signal, n): n for n in ("SIGINT", "SIGTERM") if hasattr(signal, n)}


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: the command stops."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.exit_code = 128 + signum

    def line(self) -> str:
        what = "interrupted" if self.signum == signal.SIGINT else "terminated"
        return f"symgrad: {what} ({_NAMES.get(self.signum, self.signum)})"


class _Stopping:
    """The handler once a signal has come: a second signal changes nothing (the cleanup
    is not cut short), and :meth:`raise_again` raises the first one again where it was
    lost (some libraries swallow every exception: Cython's module set-up does).
    :func:`symgrad._util.raise_lost_signal` calls it where new work would start or
    outputs be committed; :func:`symgrad_cli.main.main` once the command is done."""

    def __init__(self, signum: int) -> None:
        self.signum = signum

    def __call__(self, signum: int, frame) -> None:
        pass

    def raise_again(self) -> None:
        raise Interrupted(self.signum)


def _raise(signum: int, frame) -> None:
    stopping = _Stopping(signum)
    for s in _NAMES:
        signal.signal(s, stopping)
    raise Interrupted(signum)


def raise_lost() -> None:
    """Raise again a signal that came and was lost (see :class:`_Stopping`)."""
    handler = signal.getsignal(signal.SIGINT)
    if isinstance(handler, _Stopping):
        handler.raise_again()


_hooks = [sys.unraisablehook]  # (the hook before ours: other unraisables go to it)


def _unraisable(info) -> None:
    if isinstance(info.exc_value, Interrupted) and hasattr(signal, "setitimer"):
        # lost: delivered again by a timer a millisecond later, in the code that runs
        # next (a signal raised at once would be handled here, in the hook, and lost again)
        signum = info.exc_value.signum
        install()
        signal.signal(signal.SIGALRM, lambda _s, frame: _raise(signum, frame))
        signal.setitimer(signal.ITIMER_REAL, 0.001)
    else:
        _hooks[0](info)


def install() -> None:
    """SIGINT and SIGTERM raise :class:`Interrupted` (call from the main thread), also
    when the first place they come to cannot raise it."""
    for s in _NAMES:
        signal.signal(s, _raise)
    if sys.unraisablehook is not _unraisable:
        _hooks[0] = sys.unraisablehook
        sys.unraisablehook = _unraisable


def behind(err: BaseException) -> Interrupted | None:
    """The signal an error came from, if it came from one: Python wraps an exception
    raised where it cannot pass (``__set_name__``: a RuntimeError whose ``__cause__`` it
    is), and cleanup it interrupted may fail on its own (importlib's module lock: a
    KeyError whose ``__context__`` it is)."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, Interrupted):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def finish(stop: Interrupted) -> None:
    """Kill what is left, print one line, end the process with 128 + the signal."""
    # (children exist only if symgrad._util was loaded: looked up, never imported, so
    # that this module loads nothing of symgrad and the handlers are in place at once)
    util = sys.modules.get("symgrad._util")
    if util is not None:
        util.stop_all()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        os.write(2, (stop.line() + "\n").encode())
    except OSError:
        pass
    os._exit(stop.exit_code)  # (no wait for threads or atexit joins: all is cleaned up)
