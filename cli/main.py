"""The ``symgrad`` command: one click group, one module per command.

:func:`main` first makes SIGINT and SIGTERM end the command cleanly (:mod:`._signals`:
its whole process tree, exit 130 or 143, one line), then runs click without its
standalone handling, so that every message it prints -- click's own usage errors too --
goes through the terminal escaping of :mod:`._terminal`.
"""
from __future__ import annotations

import errno
import importlib
import io
import signal
import sys

import click

from . import _signals
from ._terminal import terminal_text

__all__ = ["main", "cli"]

# Each command is its module's function of the same name, loaded when it runs (or when
# --help lists it): `symgrad --version` and `symgrad ops` never load SymPy.
_COMMANDS = ("diff", "draw", "check", "trace", "ops")


class _Commands(click.Group):
    def list_commands(self, ctx: click.Context) -> list:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, name: str):
        if name not in _COMMANDS:
            return None
        return getattr(importlib.import_module(f".{name}", __package__), name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="symgrad", prog_name="symgrad")
def cli() -> None:
    """symgrad: differentiate, check and draw gradients.

    \b
    Examples:
      symgrad diff "5*x**2 + 3*sin(y)" --at x=4 --at y=0
      symgrad draw "5*x**2 + 3*sin(y)" --at x=4 --at y=0 -o graph.svg
      symgrad check "sin(dot(x,y))" --grad x="cos(dot(x,y))*y"
      symgrad ops

    Exit status: 0 done (gradient correct), 1 a check failed, 2 bad input,
    3 a check could not decide; 130 and 143 after SIGINT and SIGTERM.
    """


def _run(args, prog_name: str) -> int:
    """Run the command; the exit status.  Click's errors are shown escaped."""
    try:
        rv = cli.main(args=args, prog_name=prog_name, standalone_mode=False)
    except click.ClickException as err:
        shown = io.StringIO()
        err.show(file=shown)  # (symgrad's own errors print themselves, escaped)
        if shown.getvalue():
            sys.stderr.write(terminal_text(shown.getvalue(), newlines=True))
        return err.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return 1
    except OSError as err:
        if err.errno != errno.EPIPE:
            raise
        return 1
    return rv if isinstance(rv, int) and not isinstance(rv, bool) else 0


def main(args=None, prog_name: str = "symgrad") -> None:
    """Entry point: exit status 2 for bad input, 70 for a bug of ours (one line, never a
    traceback), 130/143 after SIGINT/SIGTERM (the whole process tree ended)."""
    _signals.install()
    try:
        code = _run(args, prog_name)
        _signals.raise_lost()  # (a signal some library swallowed still ends the command)
        sys.stdout.flush()
    except _signals.Interrupted as stop:
        _signals.finish(stop)
    except Exception as err:  # a bug of ours: say so in one line, never a traceback
        stop = _signals.behind(err)  # (or a signal in disguise: found by fuzz and load)
        if stop is not None:
            _signals.finish(stop)
        pipe = isinstance(err, OSError) and err.errno == errno.EPIPE
        code = 1 if pipe else _internal(err)
    for s in (signal.SIGINT, signal.SIGTERM):  # the work is done and written: a signal
        signal.signal(s, signal.SIG_IGN)         # now changes nothing, and is not a failure
    sys.exit(code)


def _internal(err: BaseException) -> int:
    click.echo(terminal_text(f"symgrad: internal error: {type(err).__name__}: {err}"),
               err=True)
    return 70


if __name__ == "__main__":
    main()
