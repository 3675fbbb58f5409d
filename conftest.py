"""pytest's doctest collection of symgrad's modules that run compiled.

``pip install`` may compile some of symgrad's modules from their own ``.py`` source
(:mod:`symgrad.api.compiled`): Python then imports the compiled module, whose
``__file__`` is not the ``.py`` file pytest collects, and pytest's import check would
refuse it.  Their doctests run against the module Python imports, compiled or not.
"""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule

ROOT = Path(__file__).resolve().parent


class _ImportedDoctests(DoctestModule):
    """The doctests of the module as ``import`` finds it (compiled or source)."""

    def _getobj(self):
        rel = self.path.resolve().relative_to(ROOT).with_suffix("")
        return importlib.import_module(".".join(rel.parts))


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path, parent):
    collected = yield
    if file_path.suffix != ".py":
        return collected
    from symgrad.api import compiled  # why: only once a module of symgrad is collected
    name = ".".join(file_path.resolve().relative_to(ROOT).with_suffix("").parts) \
        if file_path.resolve().is_relative_to(ROOT) else None
    if name not in compiled.compiled_modules():
        return collected
    return [_ImportedDoctests.from_parent(parent, path=file_path)
            if type(c) is DoctestModule else c for c in collected]
