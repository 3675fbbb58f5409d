"""Creation functions: ``ones``, ``zeros``, ``arange``, ``randn``, ... as in PyTorch.

Random draws come from numpy's generator (seeded by :func:`manual_seed`); they do not
reproduce PyTorch's numbers, only its shapes, dtypes and ranges.
"""
from __future__ import annotations

import builtins

import numpy as np

from . import dtypes as _dt
from .tensor import Tensor, _make

__all__ = ["ones", "zeros", "full", "empty", "eye", "arange", "linspace", "ones_like",
           "zeros_like", "full_like", "empty_like", "rand", "randn", "randint", "rand_like",
           "randn_like", "manual_seed", "seed", "initial_seed"]

_state = {"rng": np.random.default_rng(), "seed": None}


def _rng() -> np.random.Generator:
    return _state["rng"]


def manual_seed(seed: int):
    """Seed symgrad's random generator (draws differ from PyTorch's, shapes do not)."""
    _state["rng"] = np.random.default_rng(int(seed))
    _state["seed"] = int(seed)
    return _state["rng"]


def seed() -> int:
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(s)
    return s


def initial_seed() -> int:
    return _state["seed"] if _state["seed"] is not None else 0


def _size(size) -> tuple:
    if len(size) == 1 and not isinstance(size[0], int):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _finish(data: np.ndarray, dt, requires_grad: bool) -> Tensor:
    t = _make(data, dt)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _float_dtype(dtype):
    return dtype or _dt.get_default_dtype()


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones (default dtype float32).

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.ones(2, 2, requires_grad=True)
    tensor([[1., 1.],
            [1., 1.]], requires_grad=True)
    """
    dt = _float_dtype(dtype)
    return _finish(np.ones(_size(size), dt.np), dt, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dt = _float_dtype(dtype)
    return _finish(np.zeros(_size(size), dt.np), dt, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return zeros(*size, dtype=dtype, requires_grad=requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    if dtype is None:
        dtype = (_dt.bool if isinstance(fill_value, builtins.bool) else
                 _dt.int64 if isinstance(fill_value, int) else _dt.get_default_dtype())
    return _finish(np.full(_size((size,)), fill_value, dtype.np), dtype, requires_grad)


def eye(n: int, m: int | None = None, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    dt = _float_dtype(dtype)
    return _finish(np.eye(n, m, dtype=dt.np), dt, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive); int64 unless a bound is a float."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = (_dt.get_default_dtype() if any(isinstance(v, float) for v in
                                                (start, end, step)) else _dt.int64)
    return _finish(np.arange(start, end, step).astype(dtype.np), dtype, requires_grad)


def linspace(start, end, steps: int, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    dt = _float_dtype(dtype)
    return _finish(np.linspace(start, end, steps).astype(dt.np), dt, requires_grad)


def _like(t: Tensor, fill, dtype, requires_grad):
    dt = dtype or t.dtype
    return _finish(np.full(t._data.shape, fill, dt.np), dt, requires_grad)


def ones_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like(input, 1, dtype, requires_grad)


def zeros_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like(input, 0, dtype, requires_grad)


def empty_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like(input, 0, dtype, requires_grad)


def full_like(input: Tensor, fill_value, dtype=None, device=None,
              requires_grad: bool = False) -> Tensor:
    return _like(input, fill_value, dtype, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad: bool = False,
         generator=None) -> Tensor:
    dt = _float_dtype(dtype)
    return _finish(_rng().random(_size(size)).astype(dt.np), dt, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad: bool = False,
          generator=None) -> Tensor:
    dt = _float_dtype(dtype)
    return _finish(_rng().standard_normal(_size(size)).astype(dt.np), dt, requires_grad)


def rand_like(input: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return rand(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return randn(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None,
            requires_grad: bool = False, generator=None) -> Tensor:
    """Random integers in ``[low, high)``; ``randint(high, size)`` starts at 0."""
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    dt = dtype or _dt.int64
    data = _rng().integers(low, high, size=tuple(size)).astype(dt.np)
    return _finish(data, dt, requires_grad)
