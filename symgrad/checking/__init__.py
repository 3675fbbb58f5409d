"""Layer 6, the gradient checker: is a hand-derived gradient right?

:func:`check` compares a claimed gradient with the true one symbolically
(:mod:`.decision`), numerically at points (:mod:`.sampling`) and explains a difference
(:mod:`.diagnosis`); :func:`verify` checks reverse mode on a traced tensor against
``sympy.diff``.  Both return a :class:`Report` (:mod:`.report`); the entry points are in
:mod:`.checker`.  May import: every layer below, up to ``symgrad.symbolic``, and
``symgrad._util``.
"""
from __future__ import annotations

from .checker import check, verify
from .report import CORRECT, UNDECIDED, WRONG, CheckError, CheckTypeError, Report

__all__ = ["check", "verify", "Report", "CORRECT", "WRONG", "UNDECIDED", "CheckError",
           "CheckTypeError"]
