"""Tensors from data: :func:`tensor`, :func:`as_tensor`, :func:`from_numpy`, the legacy
``Tensor(data)`` constructor and ``new_*`` methods, with PyTorch's dtype inference.

Examples
--------
>>> import symgrad as torch
>>> torch.tensor([[1, 2], [3, 4.5]]).dtype
torch.float32
>>> _infer_dtype([True, 2])
torch.int64
"""
from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

from .. import ops as O
from ..ops import dtypes as _dt
from ..ops.dtypes import dtype as _dtype
from .apply import apply
from .core import _LEGACY_DTYPE, Tensor, _make, _new
from .creation import empty, full, multinomial, ones, zeros
from .device import resolve
from .messages import (_SCALAR_GRAD_WARNING, _legacy_signature_error, _tensor_options,
                       _type_name, _warn_once)
from .shapes import _INT64_MAX

__all__ = ["tensor", "as_tensor", "from_numpy"]


def _as_tensor_arg(x):
    """Numbers stay Python numbers (PyTorch's wrapped scalars); numpy scalars too."""
    if isinstance(x, Tensor) or type(x) in (int, float, bool):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, numbers.Number):
        return float(x) if isinstance(x, numbers.Real) else x
    if isinstance(x, (np.ndarray, list, tuple)):
        return tensor(x)
    return NotImplemented


def _number(x):
    """A Python number for a scalar argument (``alpha=torch.tensor(2.)`` is 2.0)."""
    if isinstance(x, Tensor):
        return x.item()
    return x.item() if isinstance(x, np.generic) else x


_SEQUENCE = (list, tuple, range)
_PLAIN = frozenset((int, float, bool))


def _infer_dtype(data) -> _dtype:
    """PyTorch's dtype inference: Python numbers by their type (floats take the default
    dtype), arrays, numpy scalars and tensors by their dtype, a sequence by promoting the
    types of its elements (an empty one has the default dtype)."""
    cls = data.__class__
    if cls is float:
        return _dt.get_default_dtype()
    if cls is int:
        return _dt.int64
    if cls is bool:
        return _dt.bool
    if isinstance(data, Tensor):
        return data._dtype
    if isinstance(data, (np.ndarray, np.generic)):
        return _dt.from_numpy(data.dtype)
    if isinstance(data, _SEQUENCE):
        if not len(data):
            return _dt.get_default_dtype()
        if cls is range:
            return _dt.int64
        kinds = set(map(type, data))
        if kinds <= _PLAIN:  # the common case, without a call per element
            return (_dt.get_default_dtype() if float in kinds else
                    _dt.int64 if int in kinds else _dt.bool)
        d = None
        for x in data:
            e = _infer_dtype(x)
            d = e if d is None or d is e else _dt.promote_types(d, e)
        return d
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{cls.__name__}'")
    if isinstance(data, (int, float)):  # subclasses (numbers.Real registered ones too)
        return _infer_dtype(cls.__mro__[-2](data))
    raise RuntimeError(f"Could not infer dtype of {cls.__name__}")


def _data_sizes(data) -> list:
    """The shape of nested sequences, read along their first elements (as PyTorch)."""
    sizes = []
    x = data
    while True:
        if isinstance(x, _SEQUENCE):
            sizes.append(len(x))
            if not len(x):
                return sizes
            x = x[0]
        elif isinstance(x, np.ndarray):
            sizes.extend(x.shape)
            return sizes
        elif isinstance(x, str):
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        else:
            return sizes


def _store(x, sizes: list, dim: int, out: list) -> None:
    """Append the elements of ``x`` (at depth ``dim``) to ``out``, checking its shape."""
    if isinstance(x, np.ndarray) and dim:
        _warn_once("Creating a tensor from a list of numpy.ndarrays is extremely slow. "
                   "Please consider converting the list to a single numpy.ndarray with "
                   "numpy.array() before converting to a tensor. (Triggered internally "
                   "at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:252.)",
                   stacklevel=5)
    if isinstance(x, Tensor):
        x = x._data
    if isinstance(x, np.ndarray):
        want = tuple(sizes[dim:])
        if x.shape != want:
            for d, (a, b) in enumerate(zip(x.shape, want)):
                if a != b:
                    raise ValueError(f"expected sequence of length {b} at dim {dim + d} "
                                     f"(got {a})")
            raise TypeError("not a sequence")
        out.extend(x.ravel().tolist())
        return
    if not isinstance(x, _SEQUENCE):
        raise TypeError("not a sequence")
    if len(x) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(x)})")
    if dim + 1 == len(sizes):
        out.extend(x)
        return
    for y in x:
        _store(y, sizes, dim + 1, out)


def _scalar_value(v, dt: _dtype):
    """One element as a Python number, as PyTorch's ``store_scalar`` reads it."""
    if isinstance(v, Tensor):
        if v._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if v.requires_grad:
            _warn_once(_SCALAR_GRAD_WARNING, stacklevel=5)
        return v._data.reshape(()).item()
    if isinstance(v, (np.generic, builtins.int, builtins.float)):
        return v.item() if isinstance(v, np.generic) else v
    if dt.is_floating_point:
        raise TypeError(f"must be real number, not {_type_name(v)}")
    raise TypeError(f"'{_type_name(v)}' object cannot be interpreted as an integer")


def _values_array(values: list, dt: _dtype) -> np.ndarray:
    """Python numbers converted to ``dt`` as PyTorch converts them: floats truncated into
    integers (an error when they do not fit), overflow to infinity in floating types."""
    if not set(map(type, values)) <= _PLAIN:
        values = [_scalar_value(v, dt) for v in values]
    npdt = dt.np
    if npdt.kind in "iu":
        floats = [v for v in values if v.__class__ is builtins.float]
        if floats:
            f = np.array(floats)
            info = np.iinfo(npdt)
            if not (np.isfinite(f).all() and (f >= info.min).all() and (f <= info.max).all()):
                raise RuntimeError(f"value cannot be converted to type {dt.name} without "
                                   "overflow")
    try:
        with np.errstate(all="ignore"):
            return np.array(values, dtype=npdt)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None


def _from_data(data, dt: _dtype | None = None) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested sequences of numbers, tensors, numpy
    arrays or scalars) in ``dt``, or in the dtype PyTorch infers."""
    cls = data.__class__
    if cls is builtins.float and dt is None:  # the common case: a Python float
        dt = _dt.get_default_dtype()
        if dt is _dt.float64 or (dt is _dt.float32 and -3e38 < data < 3e38):  # no overflow
            return _make(np.array(data, dt.np), dt)
    if cls is list and dt is None:
        kinds = set(map(type, data))
        if kinds and kinds <= _PLAIN:  # a flat list of Python numbers
            dt = (_dt.get_default_dtype() if float in kinds else
                  _dt.int64 if int in kinds else _dt.bool)
            if dt is _dt.float64 or (dt is _dt.float32 and -3e38 < builtins.min(data)
                                     and builtins.max(data) < 3e38) or (
                                         not dt.is_floating_point and -_INT64_MAX - 1
                                         <= builtins.min(data) <= builtins.max(data)
                                         <= _INT64_MAX):
                return _make(np.array(data, dt.np), dt)
            return _make(_values_array(data, dt), dt)
    if isinstance(data, Tensor):
        data = data._data
    if isinstance(data, np.ndarray):
        d = dt or _dt.from_numpy(data.dtype)
        with np.errstate(all="ignore"):
            return _make(np.array(data, dtype=d.np), d)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{cls.__name__}'")
    sizes = _data_sizes(data)
    if dt is None:
        dt = _infer_dtype(data)
    if not sizes:
        values = [data]
    else:
        values = []
        _store(data, sizes, 0, values)
    return _make(_values_array(values, dt).reshape(sizes), dt)


def _warn_copy_construct(call: str) -> None:
    """PyTorch's warning for ``call(sourceTensor)`` (``torch.tensor``), at the caller's
    caller."""
    warnings.warn(
        "To copy construct from a tensor, it is recommended to use sourceTensor.detach()"
        ".clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
        f"{call}(sourceTensor).", UserWarning, stacklevel=3)


def tensor(data, dtype: _dtype | None = None, device=None, requires_grad: bool = False,
           name: str | None = None) -> Tensor:
    """A new leaf tensor holding a copy of ``data``; the dtype is inferred as PyTorch does.

    ``name`` is symgrad's own: it names the leaf in symbolic output and drawings.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.tensor([1, 2.5])
    tensor([1.0000, 2.5000])
    >>> torch.tensor(3., requires_grad=True)
    tensor(3., requires_grad=True)
    """
    resolve(device)
    if isinstance(data, Tensor):
        _warn_copy_construct("torch.tensor")
    dt = _dt.as_dtype(dtype, "tensor")
    t = _from_data(data, dt)
    dt = t._dtype
    if requires_grad:
        if not dt.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    t._name = name
    return t


def as_tensor(data, dtype: _dtype | None = None, device=None) -> Tensor:
    """``data`` as a tensor, sharing memory with a tensor or numpy array where it can."""
    resolve(device)
    dtype = _dt.as_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        return data if dtype is None or dtype is data.dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype):
        return _make(data, _dt.from_numpy(data.dtype))
    return tensor(data, dtype)


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor sharing memory with the numpy array ``a``."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    return _make(a, _dt.from_numpy(a.dtype))


class _Construction:
    """Tensor's legacy constructor and ``new_*`` methods (attached by ``api.tensor``)."""

    def _legacy_new(cls, *args, **kwargs):  # (Tensor's metaclass calls it: Tensor(...))
        # PyTorch's legacy constructor: Tensor(data), Tensor(*sizes), Tensor(other).  The
        # typed ones (FloatTensor, ...) return plain tensors of their dtype.
        legacy = _LEGACY_DTYPE.get(cls)
        dt = legacy or _dt.get_default_dtype()
        resolve(kwargs.pop("device", None))
        if kwargs:
            raise TypeError(_legacy_signature_error(args, kwargs))
        if len(args) == 1 and isinstance(args[0], Tensor):
            other = args[0]
            if legacy is not None and other.dtype is not legacy:
                raise TypeError(f"expected {_tensor_options(legacy)} (got "
                                f"{_tensor_options(other.dtype)})")
            t = apply(O.ALIAS, (other,))
        elif len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, (str, bytes)):
                raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
            if not isinstance(data, (list, tuple, range, np.ndarray)):
                raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
            t = _from_data(data, dt)
        else:
            for i, a in enumerate(args):
                if not isinstance(a, int):
                    raise TypeError(f"new(): argument 'size' failed to unpack the object at "
                                    f"pos {i + 1} with error \"type must be tuple of ints,but "
                                    f"got {type(a).__name__}\"")
            if builtins.any(a < 0 for a in args):
                raise RuntimeError(f"Trying to create tensor with negative dimension "
                                   f"{builtins.min(args)}: {list(args)}")
            t = _make(np.zeros(args if args else (0,), dt.np), dt)
        if cls is Tensor or legacy is not None:
            return t
        sub = _new(cls)  # a user's subclass of Tensor
        for s in ("_data", "_dtype", "grad_fn", "_requires_grad", "_vc"):
            setattr(sub, s, getattr(t, s))
        return sub

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None):
        return multinomial(self, num_samples, replacement, generator=generator)

    def new_tensor(self, data, dtype=None, device=None, requires_grad: bool = False):
        """A new leaf holding ``data``, of this tensor's dtype unless ``dtype`` is given."""
        resolve(device)
        if isinstance(data, Tensor):
            _warn_copy_construct("tensor.new_tensor")
        t = _from_data(data, _dt.as_dtype(dtype, "new_tensor") or self._dtype)
        return t.requires_grad_(requires_grad) if requires_grad else t

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False):
        resolve(device)
        return zeros(*size, dtype=dtype or self._dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False):
        resolve(device)
        return ones(*size, dtype=dtype or self._dtype, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False):
        resolve(device)
        return empty(*size, dtype=dtype or self._dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None,
                 requires_grad: bool = False):
        resolve(device)
        return full(size, fill_value, dtype=dtype or self._dtype,
                    requires_grad=requires_grad)
