"""The ``symgrad`` command: one click group, one module per command."""
from __future__ import annotations

import sys

import click

from symgrad import __version__

from .check import check
from .diff import diff
from .draw import draw
from .ops import ops
from .trace import trace

__all__ = ["main", "cli"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="symgrad")
def cli() -> None:
    """symgrad: differentiate, check and draw gradients.

    \b
    Examples:
      symgrad diff "5*x**2 + 3*sin(y)" --at x=4 --at y=0
      symgrad draw "5*x**2 + 3*sin(y)" --at x=4 --at y=0 -o graph.svg
      symgrad check "sin(dot(x,y))" --grad x="cos(dot(x,y))*y"
      symgrad ops

    Exit status: 0 done (gradient correct), 1 a check failed, 2 bad input,
    3 a check could not decide.
    """


cli.add_command(diff)
cli.add_command(draw)
cli.add_command(ops)
cli.add_command(trace)
cli.add_command(check)


def main(args=None, prog_name: str = "symgrad") -> None:
    """Entry point: click's errors keep exit status 2; nothing else shows a traceback."""
    try:
        cli.main(args=args, prog_name=prog_name, standalone_mode=True)
    except SystemExit:
        raise
    except Exception as err:  # a bug of ours: say so in one line, never a traceback
        click.echo(f"symgrad: internal error: {type(err).__name__}: {err}", err=True)
        sys.exit(70)


if __name__ == "__main__":
    main()
