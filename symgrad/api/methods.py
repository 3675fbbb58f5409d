"""Tensor's operations: arithmetic and comparison operators, elementwise functions,
``add``/``sub`` with ``alpha``, ``clamp``, ``where`` and dtype conversions.

Each one only picks an op of the table (and its attributes) and calls ``apply``.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor([-1., 2.], requires_grad=True)
>>> (x.sin() * 2 + 1).grad_fn
<AddBackward0 object at ...>
>>> x.relu(), x.to(torch.float64).dtype
(tensor([0., 2.], grad_fn=<ReluBackward0>), torch.float64)
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import ops as O
from ..ops import dtypes as _dt
from ..ops.dtypes import dtype as _dtype
from ..ops.dtype_rules import c_name
from .apply import apply
from .construct import _as_tensor_arg, _number, tensor
from .core import _LEGACY_DTYPE, VMAP, Tensor
from .device import device, resolve
from .messages import _LEGACY_NAMES, _SCALAR_NAMES, _type_name
from .shapes import _broadcast_sizes
from .surface import _FAST_OPERANDS, _binary

__all__ = ["maximum", "minimum", "where", "equal", "isclose", "allclose"]

_NOT_OPERANDS = frozenset((list, tuple))  # of comparisons


def _comparand(name: str, other):
    """The other operand of ``eq``/``lt``/... as methods: a tensor or a number only."""
    if isinstance(other, Tensor):
        return other
    if isinstance(other, (builtins.int, builtins.float, np.number, np.bool_)):
        return _as_tensor_arg(other)
    got = _type_name(other)
    if isinstance(other, (list, tuple)):
        items = ", ".join(_type_name(x) for x in other)
        got += f" of [{items}]" if isinstance(other, list) else f" of ({items})"
    bad = f"      didn't match because some of the arguments have invalid types: (!{got}!)\n"
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({_type_name(other)}), but expected one of:\n * (Tensor other)\n{bad}"
                    f" * (Number other)\n{bad}")


def _tensor_operand(name: str, x, position: int):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{'input' if position == 1 else 'other'}' "
                        f"(position {position}) must be Tensor, not {type(x).__name__}")


def maximum(a: Tensor, b: Tensor) -> Tensor:
    _tensor_operand("maximum", a, 1), _tensor_operand("maximum", b, 2)
    return apply(O.MAXIMUM, (a, b))


def minimum(a: Tensor, b: Tensor) -> Tensor:
    _tensor_operand("minimum", a, 1), _tensor_operand("minimum", b, 2)
    return apply(O.MINIMUM, (a, b))


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether two tensors have the same shape and the same values (``torch.equal``).

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.equal(torch.tensor([1., 2.]), torch.tensor([1, 2]))
    True
    """
    _tensor_operand("equal", input, 1), _tensor_operand("equal", other, 2)
    if input.shape != other.shape:
        return False
    return bool(np.array_equal(input._data, other._data))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False, *, _name: str = "isclose") -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (``torch.isclose``): equal
    infinities are close, NaNs only with ``equal_nan``; both tensors have one dtype.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.isclose(torch.tensor([1., 2.]), torch.tensor([1.000001, 2.1]))
    tensor([ True, False])
    """
    _tensor_operand(_name, input, 1), _tensor_operand(_name, other, 2)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_SCALAR_NAMES[input.dtype.name]} did not match "
                           f"{_SCALAR_NAMES[other.dtype.name]}")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {v:g}")
    _broadcast_sizes(tuple(input.shape), tuple(other.shape))
    a, b = np.asarray(input._data), np.asarray(other._data)
    if input.dtype.is_floating_point:
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        close = np.abs(a.astype(float) - b) <= atol + rtol * np.abs(b.astype(float))
    return tensor(np.asarray(close), dtype=_dt.bool)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element of ``input`` is close to ``other`` (see :func:`isclose`).

    >>> import symgrad as torch
    >>> torch.allclose(torch.tensor([1., 2.]), torch.tensor([1., 2.0000001]))
    True
    """
    return bool(np.all(isclose(input, other, rtol, atol, equal_nan, _name="allclose")._data))


def where(condition: Tensor, input=None, other=None) -> Tensor:
    """``input`` where ``condition`` holds, else ``other`` (``WhereBackward0``)."""
    if input is None and other is None:
        if VMAP.running:  # (its shape depends on the values: PyTorch's vmap refuses it)
            VMAP.guard("where", condition)
        return tuple(tensor(ix) for ix in np.nonzero(np.atleast_1d(condition._data)))
    if condition.dtype.name != "bool":
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_SCALAR_NAMES[condition.dtype.name]}")
    input, other = _as_tensor_arg(input), _as_tensor_arg(other)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # Two numbers: PyTorch's result type of the pair (floats: the default dtype).
        input, other = tensor(input), tensor(other)
    return apply(O.WHERE, (condition, input, other))


class _Operations:
    """Tensor's operators and elementwise methods (attached by ``api.tensor``)."""

    # -- arithmetic (the operators that are exactly one op are generated: surface) --------
    def __rsub__(self, other):
        other = _as_tensor_arg(other)
        if isinstance(other, Tensor):
            return apply(O.SUB, (other, self))
        return apply(O.RSUB, (self,), (other, 1))

    def __rtruediv__(self, other):
        other = _as_tensor_arg(other)
        if isinstance(other, Tensor):
            return apply(O.DIV, (other, self))
        return apply(O.MUL, (apply(O.RECIPROCAL, (self,)), other))

    def __pow__(self, exponent):
        exponent = _as_tensor_arg(exponent)
        if isinstance(exponent, Tensor):
            return apply(O.POW_TENSOR, (self, exponent))
        return apply(O.POW, (self,), (exponent,))

    def __rpow__(self, base):
        base = _as_tensor_arg(base)
        if isinstance(base, Tensor):
            return apply(O.POW_TENSOR, (base, self))
        return apply(O.RPOW, (self,), (base,))

    def __pos__(self):
        return self

    # Comparisons with a list or tuple are not PyTorch's: == is then False, < a TypeError.
    def __eq__(self, other):  # type: ignore[override]
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["eq"], self, other)

    def __ne__(self, other):  # type: ignore[override]
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["ne"], self, other)

    def __lt__(self, other):
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["lt"], self, other)

    def __le__(self, other):
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["le"], self, other)

    def __gt__(self, other):
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["gt"], self, other)

    def __ge__(self, other):
        if other.__class__ in _NOT_OPERANDS:
            return NotImplemented
        return _binary(O.OPS["ge"], self, other)




    # -- named operations ------------------------------------------------------------------
    def add(self, other, *, alpha=1):
        if alpha.__class__ is int and alpha == 1:
            return self + other
        return apply(O.ADD_ALPHA, (self, _as_tensor_arg(other)), (_number(alpha),))

    def sub(self, other, *, alpha=1):
        if alpha.__class__ is int and alpha == 1:
            return self - other
        return apply(O.SUB_ALPHA, (self, _as_tensor_arg(other)), (_number(alpha),))

    def pow(self, exponent):
        return self ** exponent

    def eq(self, other):
        return _binary(O.OPS["eq"], self, _comparand("eq", other))

    def ne(self, other):
        return _binary(O.OPS["ne"], self, _comparand("ne", other))

    def lt(self, other):
        return _binary(O.OPS["lt"], self, _comparand("lt", other))

    def le(self, other):
        return _binary(O.OPS["le"], self, _comparand("le", other))

    def gt(self, other):
        return _binary(O.OPS["gt"], self, _comparand("gt", other))

    def ge(self, other):
        return _binary(O.OPS["ge"], self, _comparand("ge", other))

    def clamp(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            return apply(O.CLAMP_TENSOR, (self, min, max))
        return apply(O.CLAMP, (self,), (min, max))

    clip = clamp

    # -- ops whose node depends on which operands are numbers (PyTorch's overloads) -------
    def xlogy(self, other):
        other = _as_tensor_arg(other)
        if isinstance(other, Tensor):
            return apply(O.XLOGY, (self, other))
        return apply(O.XLOGY_OTHER_NUMBER, (self,), (other,))

    def xlogy_(self, other):
        other = _as_tensor_arg(other)
        if isinstance(other, Tensor):
            return self._in_place(O.XLOGY, (other,))
        return self._in_place(O.XLOGY_OTHER_NUMBER, (), (other,))

    def lerp(self, end, weight):
        self._lerp_check(end, weight)
        if isinstance(weight, Tensor):
            return apply(O.LERP_TENSOR, (self, end, weight))
        return apply(O.LERP, (self, end), (weight,))

    def _lerp_check(self, end, weight):
        for name, t in (("end", end), ("weight", weight)):
            if isinstance(t, Tensor) and t.dtype is not self.dtype:
                raise RuntimeError(f"expected dtype {c_name(self.dtype)} for `{name}` but got "
                                   f"dtype {c_name(t.dtype)}")

    def lerp_(self, end, weight):
        self._lerp_check(end, weight)
        if isinstance(weight, Tensor):
            return self._in_place(O.LERP_TENSOR, (end, weight))
        return self._in_place(O.LERP, (end,), (weight,))

    def round(self, *, decimals: int = 0):
        if decimals:
            return apply(O.ROUND_DECIMALS, (self,), (decimals,))
        return apply(O.ROUND, (self,))

    def round_(self, *, decimals: int = 0):
        if decimals:
            return self._in_place(O.ROUND_DECIMALS, (), (decimals,))
        return self._in_place(O.ROUND, ())

    def masked_fill(self, mask, value):
        """``value`` where the bool tensor ``mask`` is True (``MaskedFillBackward0``; a
        0-d tensor value: ``MaskedFillBackward1``)."""
        op, operands, attrs = self._masked_fill_args(mask, value)
        return apply(op, (self,) + operands, attrs)

    def masked_fill_(self, mask, value):
        op, operands, attrs = self._masked_fill_args(mask, value)
        if VMAP.running:  # (the mask is an attribute: vmap's check sees it here)
            VMAP.guard("in_place", self, op, (mask,) + operands)
        return self._in_place(op, operands, attrs)

    def _masked_fill_args(self, mask, value):
        if not isinstance(mask, Tensor) or mask.dtype.name != "bool":
            got = mask.dtype.name if isinstance(mask, Tensor) else type(mask).__name__
            raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                               f"dtype {_SCALAR_NAMES.get(got, got)}")
        m = np.broadcast_to(mask._data, self.shape) if mask.ndim <= self.ndim else mask._data
        if isinstance(value, Tensor):
            return O.MASKED_FILL, (value,), (m,)
        return O.MASKED_FILL_SCALAR, (), (m, value)

    def square(self):
        return self.pow(2)

    def square_(self):
        return self.pow_(2)

    def maximum(self, other):
        return maximum(self, other)

    def equal(self, other) -> bool:
        return equal(self, other)

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False):
        return isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        return allclose(self, other, rtol, atol, equal_nan)

    def minimum(self, other):
        return minimum(self, other)

    def where(self, condition, other):
        return where(condition, self, other)

    # -- dtype conversions ---------------------------------------------------------------
    def float(self) -> "Tensor":
        return self.to(_dt.float32)

    def double(self) -> "Tensor":
        return self.to(_dt.float64)

    def half(self) -> "Tensor":
        return self.to(_dt.float16)

    def long(self) -> "Tensor":
        return self.to(_dt.int64)

    def int(self) -> "Tensor":
        return self.to(_dt.int32)

    def bool(self) -> "Tensor":
        return self.to(_dt.bool)

    def to(self, *args, **kwargs) -> "Tensor":
        """``to(device=None, dtype=None, non_blocking=False, copy=False)``, ``to(dtype)``
        or ``to(other)``: the CPU is the only device a tensor can go to."""
        where, d = kwargs.get("device"), kwargs.get("dtype")
        copy = kwargs.get("copy", False)
        rest = list(args)
        if rest and isinstance(rest[0], Tensor):
            d = rest.pop(0).dtype
        elif rest and not isinstance(rest[0], (_dtype, builtins.bool)):
            where = rest.pop(0)
        if rest and isinstance(rest[0], _dtype):
            d = rest.pop(0)
        if rest[1:]:
            copy = rest[1]
        if (rest and not isinstance(rest[0], builtins.bool)) or (
                where is not None and not isinstance(where, (str, builtins.int, device))):
            got = ", ".join(_type_name(a) for a in args)
            raise TypeError(f"to() received an invalid combination of arguments - got ({got})")
        resolve(where)
        if (d is None or d is self._dtype) and not copy:
            return self
        return apply(O.TO_COPY, (self,), (self._dtype if d is None else d,))

    def type(self, dtype=None):
        if dtype is None:
            return "torch." + _LEGACY_NAMES[self._dtype.name]
        if isinstance(dtype, str):  # 'torch.DoubleTensor'
            name = dtype[6:] if dtype.startswith("torch.") else None
            found = [k for k, v in _LEGACY_NAMES.items() if v == name]
            if not found:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = getattr(_dt, found[0])
        elif isinstance(dtype, type):
            if dtype not in _LEGACY_DTYPE:
                raise ValueError(f"invalid type: '{dtype.__name__}'")
            dtype = _LEGACY_DTYPE[dtype]
        return self.to(dtype)


