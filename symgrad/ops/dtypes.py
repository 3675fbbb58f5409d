"""Data types, named and promoted as PyTorch names and promotes them.

A :class:`dtype` wraps the numpy dtype that stores the data; it prints as PyTorch's
(``torch.float32``) so that teaching notebooks print the same text after
``import symgrad as torch``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["dtype", "float16", "float32", "float64", "int64", "int32", "bool",
           "half", "float", "double", "long", "int",
           "get_default_dtype", "set_default_dtype", "promote_types", "from_numpy",
           "as_dtype"]


class dtype:
    """A tensor element type: ``symgrad.float32`` and friends.

    Examples
    --------
    >>> import symgrad
    >>> symgrad.float64
    torch.float64
    >>> symgrad.float32.is_floating_point
    True
    """

    __slots__ = ("name", "np", "is_floating_point", "itemsize", "_rank")

    def __init__(self, name: str, np_dtype, rank: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.itemsize = self.np.itemsize
        # Category of the type for promotion: 0 bool, 1 integer, 2 floating.
        self._rank = rank

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self):
        return self.name


float16 = half = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = double = dtype("float64", np.float64, 2)
int64 = long = dtype("int64", np.int64, 1)
int32 = dtype("int32", np.int32, 1)
bool = dtype("bool", np.bool_, 0)  # noqa: A001 - the name is PyTorch's
float = float32  # noqa: A001
int = int32  # noqa: A001

_BY_NUMPY = {d.np: d for d in (float16, float32, float64, int64, int32, bool)}
_default = [float32]


def from_numpy(np_dtype) -> dtype:
    """The symgrad dtype storing numpy's ``np_dtype`` (other integers map to int64)."""
    d = _BY_NUMPY.get(np.dtype(np_dtype))
    if d is not None:
        return d
    kind = np.dtype(np_dtype).kind
    if kind in "iu":
        return int64
    if kind == "f":
        return float64
    # PyTorch's message (it names the types PyTorch converts).
    raise TypeError(f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}"
                    ". The only supported types are: float64, float32, float16, complex64, "
                    "complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
                    "and bool.")


def get_default_dtype() -> dtype:
    """The floating dtype of new tensors made from Python floats (``float32`` at start)."""
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype, as ``torch.set_default_dtype``."""
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as "
                        "the default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def as_dtype(d, fname: str = "tensor"):
    """``d`` as a dtype: PyTorch also takes the Python types ``float``, ``int``, ``bool``.

    Examples
    --------
    >>> import builtins, symgrad
    >>> symgrad.ops.dtypes.as_dtype(builtins.float)
    torch.float64
    """
    if d is None or d.__class__ is dtype:
        return d
    py = _PYTHON_TYPES.get(d) if isinstance(d, type) else None
    if py is None:
        raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not "
                        f"{type(d).__name__}")
    return py


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to, as ``torch.promote_types``.

    Unlike numpy, a floating type absorbs any integer type: int64 with float32 is float32.

    Examples
    --------
    >>> import symgrad
    >>> symgrad.promote_types(symgrad.int64, symgrad.float32)
    torch.float32
    """
    if a is b:
        return a
    if a._rank != b._rank:
        return a if a._rank > b._rank else b
    return from_numpy(np.promote_types(a.np, b.np))


def _combine(higher, lower):
    # PyTorch's combine_categories: a lower tier only matters through its category.
    if higher is None:
        return lower
    if lower is None or higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(operands) -> dtype:
    """PyTorch's result type of an operation on tensors and Python scalars.

    Tensors with dimensions outrank zero-dimensional tensors, which outrank Python
    scalars, unless a lower tier holds a higher category (bool < integer < floating).
    """
    tiers: list = [None, None, None]  # dimensioned, zero-dim, python scalar
    for x in operands:
        cls = type(x)
        if cls is _float:
            d, tier = _default[0], 2
        elif cls is _int:
            d, tier = int64, 2
        elif cls is _bool:
            d, tier = bool, 2
        else:
            d, tier = x.dtype, (0 if x._data.ndim else 1)
        t = tiers[tier]
        tiers[tier] = d if t is None else promote_types(t, d)
    return _combine(tiers[0], _combine(tiers[1], tiers[2]))


_bool, _int, _float = type(True), type(1), type(1.0)
_PYTHON_TYPES = {_float: float64, _int: int64, _bool: bool}
