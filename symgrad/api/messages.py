"""PyTorch's names of dtypes and the texts of its messages, shared by the tensor API.

PyTorch's errors and warnings name types in several ways (``Float``, ``FloatTensor``, the
C++ ``float``); tests compare the messages character for character.

Examples
--------
>>> _LEGACY_NAMES["float32"], _c_name(type("d", (), {"name": "int64"}))
('FloatTensor', 'long int')
"""
from __future__ import annotations

import warnings

from ..ops.dtype_rules import c_name as _c_name

__all__: list = []

_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                 "int32": "Int", "bool": "Bool"}
_LEGACY_NAMES = {k: v + "Tensor" for k, v in _SCALAR_NAMES.items()}


_WARNED_ONCE: set = set()
_SCALAR_GRAD_WARNING = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
    "behavior.\nConsider using tensor.detach() first. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)")


def _all_any_error(name: str, args, kwargs) -> TypeError:
    got = ", ".join([_type_name(a) for a in args]
                    + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but expected "
        f"one of:\n * ()\n      didn't match because some of the arguments have invalid "
        f"types: (!{got}!)\n * (tuple of ints dim = None, bool keepdim = False)\n"
        " * (int dim, bool keepdim = False)\n")


def _format_order(ord) -> str:
    return ("" if ord > 0 else "-") + "inf"


def _type_name(x) -> str:
    """A type's name as PyTorch's argument errors print it (``numpy.ndarray``)."""
    t = type(x)
    return ("numpy." if t.__module__ == "numpy" else "") + t.__name__


def _warn_once(message: str, stacklevel: int = 2) -> None:
    """Warn the first time only in this process, as PyTorch's ``TORCH_WARN_ONCE`` does."""
    if message not in _WARNED_ONCE:
        _WARNED_ONCE.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def _tensor_options(d) -> str:
    return (f"TensorOptions(dtype={_c_name(d).replace('long int', 'long')}, device=cpu, "
            "layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def _legacy_signature_error(args, kwargs) -> str:
    got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}"
                                              for k, v in kwargs.items()]
    return ("new() received an invalid combination of arguments - got "
            f"({', '.join(got)}), but expected one of:\n"
            " * (*, torch.device device = None)\n"
            "      didn't match because some of the keywords were incorrect: "
            f"{', '.join(kwargs)}\n"
            " * (torch.Storage storage)\n"
            " * (Tensor other)\n"
            " * (tuple of ints size, *, torch.device device = None)\n"
            " * (object data, *, torch.device device = None)\n")
