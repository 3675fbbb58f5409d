"""Remainders, floor division and tests of values, as PyTorch has them: ``remainder``
(``%``), ``fmod``, ``floor_divide`` (``//``), ``true_divide``, ``nan_to_num``,
``count_nonzero``, and the ``bmm`` method.

Each front end picks the overload of the op table (:mod:`symgrad.ops.functions`) that
PyTorch's would: a number for ``other`` is ``RemainderBackward0`` (nothing saved), a tensor
``RemainderBackward1``; a number ``% tensor`` has no derivative (``NotImplemented``).

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor([-3.5, 7.25], requires_grad=True)
>>> x % 2
tensor([0.5000, 1.2500], grad_fn=<RemainderBackward0>)
"""
from __future__ import annotations

from .. import ops as O
from .apply import apply
from .construct import _as_tensor_arg, tensor
from .core import Tensor
from .linalg import bmm as _bmm

__all__ = ["remainder", "fmod", "floor_divide", "true_divide", "nan_to_num",
           "count_nonzero"]


def _pick(tensor_op, number_op, self, other):
    """(op, operands, attrs) of ``self <op> other``; None if ``other`` is no operand."""
    other = _as_tensor_arg(other)
    if other is NotImplemented:
        return None
    if isinstance(other, Tensor):
        return tensor_op, (self, other), ()
    return number_op, (self,), (other,)


class _Remainders:
    """The Tensor methods of this module (attached by :mod:`symgrad.api.tensor`)."""

    def _binary_name(self, name, other, in_place=False):
        ops = _OPS[name]
        picked = _pick(ops[0], ops[1], self, other)
        if picked is None:
            if in_place:
                raise TypeError(f"{name}_(): argument 'other' (position 1) must be Tensor, "
                                f"not {type(other).__name__}")
            return NotImplemented
        op, operands, attrs = picked
        if in_place:
            return self._in_place(op, operands[1:], attrs)
        return apply(op, operands, attrs)

    def remainder(self, other):
        """``self - other * floor(self / other)`` (``RemainderBackward0``/``1``)."""
        return self._binary_name("remainder", other)

    def remainder_(self, other):
        return self._binary_name("remainder", other, True)

    __mod__ = remainder

    def __imod__(self, other):
        return self._binary_name("remainder", other, True)

    def __rmod__(self, other):
        other = _as_tensor_arg(other)
        if other is NotImplemented:
            return NotImplemented
        return apply(O.REMAINDER_NUMBER_SELF, (self,), (other,))

    def fmod(self, other):
        """``self - other * trunc(self / other)`` (``FmodBackward0``/``1``)."""
        return self._binary_name("fmod", other)

    def fmod_(self, other):
        return self._binary_name("fmod", other, True)

    def floor_divide(self, other):
        """``floor(self / other)``; no derivative (``NotImplemented``), as PyTorch."""
        return self._binary_name("floor_divide", other)

    def floor_divide_(self, other):
        return self._binary_name("floor_divide", other, True)

    __floordiv__ = floor_divide

    def __ifloordiv__(self, other):
        return self._binary_name("floor_divide", other, True)

    def __rfloordiv__(self, other):
        other = _as_tensor_arg(other)
        if other is NotImplemented:
            return NotImplemented
        return apply(O.FLOOR_DIVIDE_NUMBER_SELF, (self,), (other,))

    def true_divide(self, other):
        """``div`` (``DivBackward0``)."""
        return self.div(other)

    def true_divide_(self, other):
        return self.div_(other)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default
        0 and the dtype's largest and smallest numbers): ``NanToNumBackward0``."""
        return apply(O.NAN_TO_NUM, (self,), (nan, posinf, neginf))

    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        return self._in_place(O.NAN_TO_NUM, (), (nan, posinf, neginf))

    def count_nonzero(self, dim=None):
        """The number of nonzero elements (along ``dim``): ``(self != 0).sum(dim)``."""
        nonzero = self != 0
        return nonzero.sum() if dim is None else nonzero.sum(dim)

    def bmm(self, mat2):
        """Batched matrix product (``BmmBackward0``)."""
        return _bmm(self, mat2)


_OPS = {"remainder": (O.REMAINDER, O.REMAINDER_SCALAR),
        "fmod": (O.FMOD, O.FMOD_SCALAR),
        "floor_divide": (O.FLOOR_DIVIDE, O.FLOOR_DIVIDE_SCALAR)}


def _reversible(name: str, number_self):
    def fn(input, other):
        if not isinstance(input, Tensor):
            if isinstance(other, Tensor) and number_self is not None:
                return apply(number_self, (other,), (_as_tensor_arg(input),))
            input = tensor(input)
        return getattr(input, name)(other)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``symgrad.{name}(input, other)`` is ``input.{name}(other)``."
    return fn


remainder = _reversible("remainder", O.REMAINDER_NUMBER_SELF)
floor_divide = _reversible("floor_divide", O.FLOOR_DIVIDE_NUMBER_SELF)
fmod = _reversible("fmod", None)
true_divide = _reversible("true_divide", None)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """``input.nan_to_num(nan, posinf, neginf)``."""
    return input.nan_to_num(nan, posinf, neginf)


def count_nonzero(input, dim=None):
    """``input.count_nonzero(dim)``."""
    return input.count_nonzero(dim)
