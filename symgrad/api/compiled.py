"""Which of symgrad's own Python modules run compiled here.

symgrad is complete in Python, and there is no other source: where Cython and a C
compiler are available at ``pip install`` time, ``setup.py`` compiles the modules named
in :data:`MODULES` (the engine's loop and rules, the one door ``apply``) from these very
``.py`` files, and Python imports the compiled module in place of the source.  A failed
build leaves pure Python (with a warning).  ``SYMGRAD_PURE_PYTHON=1`` makes
``import symgrad`` load the ``.py`` files even when compiled ones exist (see
:mod:`symgrad`).

Examples
--------
>>> from symgrad.api import compiled
>>> compiled.ENABLED in (True, False)
True
"""
from __future__ import annotations

import importlib
import importlib.machinery

__all__ = ["MODULES", "ENABLED", "compiled_modules"]

#: The modules ``setup.py`` compiles (it reads this tuple from this file).
MODULES = ("symgrad.ops.opcore", "symgrad.ir.cores", "symgrad.ir.backends",
           "symgrad.engine.hooks", "symgrad.engine.rules", "symgrad.engine.reverse",
           "symgrad.api.apply")
# (not api/surface: a generated method stays a Python frame of symgrad's, under which
# numpy's RuntimeWarnings of a 0-d op are held back by symgrad's warnings filter)


def compiled_modules() -> list:
    """The modules of :data:`MODULES` that were loaded from a compiled extension."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return [name for name in MODULES
            if (importlib.import_module(name).__file__ or "").endswith(suffixes)]


#: Every module of :data:`MODULES` runs compiled.
ENABLED = len(compiled_modules()) == len(MODULES)
