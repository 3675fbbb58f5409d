"""Result-dtype rules: ``rule(operands, attrs) -> dtype``, one per op record (``Op.dtype``).

Operands are tensors (anything with a symgrad ``_dtype``) and Python numbers, as ``apply``
receives them.  A rule may raise PyTorch's error for operands it refuses (``x - True``).
Rules marked ``fast`` give the operands' dtype whenever those share one floating dtype,
which lets ``apply`` skip the rule on its fast path.

Layer 1: imports numpy and :mod:`symgrad.ops.dtypes`.

Examples
--------
>>> import symgrad
>>> from symgrad.ops import dtype_rules
>>> dtype_rules.promote((symgrad.tensor([1, 2]), 2.5), ())
torch.float32
>>> dtype_rules.promote.fast, dtype_rules.sum_dtype.fast
(True, False)
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import dtypes as _dt

__all__ = ["same", "promote", "floating", "pow_scalar", "rpow", "sum_dtype", "boolean",
           "int64", "where", "promote_strict", "attr", "last_attr", "alpha", "sub",
           "sub_alpha", "clamp", "clamp_tensor", "c_name", "SUB_BOOL", "SUB_BOOLS"]

SUB_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
SUB_BOOLS = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
             "`^` or `logical_xor()` operator instead.")


def _rule(fast: bool = False) -> Callable:
    def mark(fn: Callable) -> Callable:
        fn.fast = fast
        return fn
    return mark


def _dtype_of(a):
    """A tensor operand's dtype; None for a Python number."""
    return getattr(a, "_dtype", None)


@_rule(fast=True)
def same(args, attrs):
    for a in args:
        d = _dtype_of(a)
        if d is not None:
            return d
    raise TypeError("expected at least one tensor argument")


@_rule(fast=True)
def promote(args, attrs):
    d = None
    for a in args:
        ad = _dtype_of(a)
        if ad is not None:
            if d is None:
                d = ad
            elif ad is not d:
                return _dt.result_type(args)
    if d.is_floating_point:
        return d
    return _dt.result_type(args)


@_rule(fast=True)
def floating(args, attrs):
    d = promote(args, attrs)
    return d if d.is_floating_point else _dt.get_default_dtype()


@_rule()
def pow_scalar(args, attrs):
    return promote((args[0], attrs[0]), attrs)


@_rule()
def rpow(args, attrs):
    return promote((attrs[0], args[0]), attrs)


@_rule()
def sum_dtype(args, attrs):
    d = args[0]._dtype
    return d if d.is_floating_point else _dt.int64


@_rule()
def boolean(args, attrs):
    return _dt.bool


@_rule()
def int64(args, attrs):
    return _dt.int64


@_rule()
def where(args, attrs):
    return promote(args[1:], attrs)


def c_name(d) -> str:
    """The C++ name PyTorch's messages give a dtype (``double`` for float64)."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "int64": "long int", "int32": "int", "bool": "bool"}[d.name]


@_rule()
def promote_strict(args, attrs):
    a, b = args[-2:]  # (addmm: the two matrices after the added input)
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{c_name(a._dtype)} != {c_name(b._dtype)}")
    return a._dtype


@_rule()
def attr(args, attrs):
    return attrs[0]


@_rule()
def last_attr(args, attrs):
    return attrs[-1]


@_rule()
def alpha(args, attrs):
    """add/sub/rsub with ``alpha`` (the last attribute; the others are operands)."""
    d = promote(tuple(args) + tuple(attrs[:-1]), attrs)
    alpha = attrs[-1]
    if isinstance(alpha, (bool, np.bool_)) and d is not _dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not d.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    return d


def _is_bool(a) -> bool:
    d = _dtype_of(a)
    return d is _dt.bool if d is not None else isinstance(a, (bool, np.bool_))


def _refuse_bool_operands(operands) -> None:
    """Subtraction refuses bool operands, as PyTorch does."""
    n = sum(_is_bool(a) for a in operands)
    if n:
        raise RuntimeError(SUB_BOOLS if n == 2 else SUB_BOOL)


@_rule(fast=True)
def sub(args, attrs):
    operands = tuple(args) + tuple(attrs)
    _refuse_bool_operands(operands)
    return promote(operands, attrs)


@_rule()
def sub_alpha(args, attrs):
    _refuse_bool_operands(tuple(args) + tuple(attrs[:-1]))
    return alpha(args, attrs)


@_rule()
def clamp(args, attrs):
    return promote((args[0],) + tuple(a for a in attrs if a is not None), attrs)


@_rule()
def clamp_tensor(args, attrs):
    return promote(tuple(a for a in args if a is not None), attrs)
