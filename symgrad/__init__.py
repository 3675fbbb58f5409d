"""symgrad: gradients you can see and check.

A small autograd engine with PyTorch's API (``import symgrad as torch``), one graph IR
with a SymPy bridge for symbolic gradients, and drawings of forward and backward graphs.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(4.0, requires_grad=True)
>>> y = torch.tensor(0.0, requires_grad=True)
>>> f = 5 * x ** 2 + 3 * torch.sin(y)
>>> f.backward()
>>> x.grad, y.grad
(tensor(40.), tensor(3.))
"""
from __future__ import annotations

import importlib as _importlib
import os as _os
import sys as _sys
import warnings as _warnings
from importlib.machinery import SOURCE_SUFFIXES as _SOURCE, FileFinder as _FileFinder
from importlib.machinery import SourceFileLoader as _SourceFileLoader


class _SourceFirst:
    """``SYMGRAD_PURE_PYTHON=1``: symgrad's modules are loaded from their ``.py`` source
    even where ``pip install`` compiled them (:mod:`symgrad.api.compiled`)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if not name.startswith(__name__ + ".") or not path:
            return None
        for entry in path:
            spec = _FileFinder(entry, (_SourceFileLoader, _SOURCE)).find_spec(name)
            if spec is not None and spec.loader is not None:
                return spec
        return None


if _os.environ.get("SYMGRAD_PURE_PYTHON", "") not in ("", "0") and \
        not any(isinstance(f, _SourceFirst) for f in _sys.meta_path):
    _sys.meta_path.insert(0, _SourceFirst())

# PyTorch computes 1/0 = inf and log(-1) = nan silently; numpy would warn from our frames.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"symgrad(\.|$)")

from . import ops  # noqa: E402
from .errors import SymgradError
from .api.tensor import Size, Tensor, as_tensor, from_numpy, tensor
from .api.printing import get_printoptions, set_printoptions
from .api.creation import (Generator, arange, default_generator, empty, empty_like, eye, full,
                       full_like, initial_seed,
                       linspace, manual_seed, multinomial, ones, ones_like, rand, rand_like,
                       randint, randn,
                       randn_like, seed, zeros, zeros_like)
from .api.permutation import randperm
from .ops.dtypes import (bool, double, dtype, float, float16, float32, float64, get_default_dtype,
                     half, int, int32, int64, long, promote_types, set_default_dtype)
from .api.functional import *  # noqa: F401,F403
from .api.functional import __all__ as _functional_all
from . import accelerator, autograd, backends, cuda, linalg  # noqa: E402
from .api.device import device, get_default_device, set_default_device  # noqa: E402
from .autograd import (enable_grad, inference_mode, is_grad_enabled,
                       is_inference_mode_enabled, no_grad,
                       set_grad_enabled)
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled, is_anomaly_enabled,
                                    set_anomaly_enabled)
from .api.tensor import _LEGACY_DTYPE, _LegacyMeta


def _legacy(name: str, d) -> type:
    cls = _LegacyMeta(name, (Tensor,), {"__slots__": (), "__module__": "symgrad",
                                        "_torch_name": "torch." + name})
    _LEGACY_DTYPE[cls] = d
    return cls


FloatTensor = _legacy("FloatTensor", float32)
DoubleTensor = _legacy("DoubleTensor", float64)
HalfTensor = _legacy("HalfTensor", float16)
LongTensor = _legacy("LongTensor", int64)
BoolTensor = _legacy("BoolTensor", bool)

# The symbolic layers load SymPy, which tensor code never needs: their names are loaded
# the first time they are asked for (PEP 562), so ``import symgrad`` stays as quick as
# ``import numpy``.
# Likewise the layers above the tensor (nn, optim, save/load), which scripts that only
# differentiate never touch.
_LAZY = {"Expression": "symbolic.expression", "parse": "symbolic.expression",
         "gradient_program": "symbolic.bridge", "to_sympy": "symbolic.bridge",
         "tangent_program": "symbolic.tangents",
         "Report": "checking", "check": "checking", "verify": "checking",
         "draw": "drawing", "draw_steps": "drawing", "make_dot": "drawing",
         "nn": "", "optim": "", "func": "", "vmap": "func", "utils": "", "multiprocessing": "",
         "save": "serialization", "load": "serialization",
         "selu": "nn.functional", "celu": "nn.functional"}


def __getattr__(name: str):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'symgrad' has no attribute '{name}'")
    module = _importlib.import_module("." + (where or name), __name__)
    value = module if not where else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))

__version__ = "0.1.0"

__all__ = ["Tensor", "Size", "tensor", "as_tensor", "from_numpy", "FloatTensor",
           "DoubleTensor", "HalfTensor", "LongTensor", "BoolTensor", "ones", "zeros", "full",
           "empty", "eye", "arange", "linspace", "ones_like", "zeros_like", "full_like",
           "empty_like", "rand", "randn", "randint", "multinomial", "rand_like", "randn_like", "randperm", "manual_seed",
           "seed", "initial_seed", "Generator", "default_generator", "dtype", "float16", "float32", "float64", "int64", "int32",
           "bool", "half", "float", "double", "long", "int", "get_default_dtype",
           "set_default_dtype", "promote_types", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled", "autograd", "nn", "ops", "device", "get_default_device",
           "set_default_device", "cuda", "backends", "accelerator", "optim", "func", "vmap", "utils",
           "multiprocessing", "save", "load", "linalg", "selu", "celu",
           "set_printoptions", "get_printoptions", "parse", "Expression", "to_sympy",
           "gradient_program", "check", "verify", "Report", "draw", "draw_steps",
           "make_dot", "tangent_program", "SymgradError"] + list(_functional_all)

# Functions of ops registered from now on (``symgrad.ops.Op(...)``) appear here too.
from .api.functional import FUNCTIONS as _FUNCTIONS  # noqa: E402
_FUNCTIONS.export_to(globals())
