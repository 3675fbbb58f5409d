"""The ``symgrad`` command: one click group, one module per command."""
from __future__ import annotations

import click

from symgrad import __version__

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="symgrad")
def main() -> None:
    """symgrad: differentiate, check and draw gradients.

    \b
    Example:
      symgrad --version
    """


if __name__ == "__main__":
    main()
