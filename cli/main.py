"""The ``symgrad`` command: one click group, one module per command."""
from __future__ import annotations

import importlib
import sys

import click

from symgrad import __version__

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
