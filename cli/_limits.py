"""The options that raise the limits on a command's work (:mod:`symgrad.symbolic.budget`):
``--max-elements``, ``--max-terms``, ``--max-hessian``, defined once.

A command declares the ones that apply to it with :func:`limit_options` and runs its work
inside :func:`symgrad.symbolic.budget.limits` with the values given.
"""
from __future__ import annotations

import click

from symgrad.symbolic import budget

__all__ = ["limit_options"]

_HELP = {"elements": ("MAX_ELEMENTS", "The most elements any intermediate value may have "
                      "(a Kronecker or outer product's, a large --shape's)."),
         "terms": ("MAX_TERMS", "The most symbolic terms (elements x operations) the "
                   "chain rule may build; large vectors and matrices need more (and time)."),
         "hessian": ("MAX_HESSIAN", "The most entries of a Hessian (n² for n elements).")}


def limit_options(*names: str):
    """Add ``--max-NAME`` for each of ``names`` (``elements``, ``terms``, ``hessian``);
    the command receives them as ``max_NAME``."""
    def add(command):
        for name in reversed(names):
            const, text = _HELP[name]
            command = click.option(f"--max-{name}", f"max_{name}", type=click.IntRange(1),
                                   default=getattr(budget, const), show_default=True,
                                   metavar="N", help=text)(command)
        return command
    return add
