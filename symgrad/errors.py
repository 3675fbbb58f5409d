"""The base class of symgrad's own errors.

Errors that PyTorch raises keep PyTorch's types (``RuntimeError``, ``TypeError``, ...).
The errors symgrad raises of its own -- a parse error in expression text, a value that
cannot be evaluated, a drawing that cannot be rendered, a check that cannot run -- share
:class:`SymgradError`, so that a caller can catch them all in one ``except``.

Layer 0: imports nothing of symgrad.

Examples
--------
>>> import symgrad
>>> try:
...     symgrad.parse("x +")
... except symgrad.SymgradError as err:
...     print(type(err).__name__)
ParseError
"""
from __future__ import annotations

import pickle

__all__ = ["SymgradError", "LoadError"]


class SymgradError(Exception):
    """Base class of the errors symgrad raises of its own (not PyTorch's)."""


class LoadError(SymgradError, pickle.UnpicklingError, ValueError):
    """A file given to ``symgrad.load`` is not one ``symgrad.save`` could have written, or
    it exceeds a limit: the message names the file and the problem.

    An :class:`pickle.UnpicklingError`, as ``torch.load(weights_only=True)`` raises for a
    file it refuses, and a ``ValueError`` (what symgrad raised before it had a type).
    """
