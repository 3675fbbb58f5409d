"""``torch.utils``: helpers above the tensor API (``data``: datasets and loaders;
``benchmark``: ``Timer``).

Each submodule is loaded the first time it is asked for (``symgrad.utils.data``), as the
layers above the tensor are in :mod:`symgrad`; it may import anything from the tensor API
(``symgrad.api``, ``symgrad.nn``) down, never the symbolic layers, drawings or the CLI.
"""
from __future__ import annotations

import importlib as _importlib
import importlib.util as _importlib_util

__all__ = ["data", "benchmark"]


def __getattr__(name: str):
    if name.startswith("_") or _importlib_util.find_spec(f"{__name__}.{name}") is None:
        raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
    module = _importlib.import_module(f"{__name__}.{name}")
    globals()[name] = module
    return module
