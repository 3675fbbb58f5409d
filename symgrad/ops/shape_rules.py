"""Work rules: the result's shape of an op of the expression language from its operands'
shapes, with the operations each element needs (``symgrad.symbolic.budget`` estimates
an expression's work with them before doing any).  Each is registered beside its op in
:data:`~symgrad.ops.tables.WORK`; an op with none is elementwise (one operation per
element of the broadcast shape).

Examples
--------
>>> matmul((3, 4), (4,))
((3,), 4, 0)
>>> elimination_scalar((5, 5))
((), 3000, 5)
"""
from __future__ import annotations

import math

from .tables import ShapeMismatch

__all__ = ["reduce_all", "last_axis", "logsumexp", "dot", "outer", "matmul", "kron",
           "diag", "trace", "elimination_scalar", "elimination_same", "solve"]

# Each returns (shape, operations per element, the size of the square matrix a symbolic
# elimination works on, else 0), or raises ShapeMismatch.


def reduce_all(a: tuple, *rest) -> tuple:
    """A reduction of every element (sum, mean, norm): one number from all of them."""
    return (), max(math.prod(a), 1), 0


def last_axis(a: tuple, *rest) -> tuple:
    """Along the last axis, keeping the shape (softmax, cumsum)."""
    return a, a[-1] if a else 1, 0


def logsumexp(a: tuple, *rest) -> tuple:
    return a[:-1], a[-1] if a else 1, 0


def dot(a: tuple, b: tuple) -> tuple:
    if len(a) != 1 or len(b) != 1 or a != b:
        raise ShapeMismatch
    return (), a[0], 0


def outer(a: tuple, b: tuple) -> tuple:
    if len(a) != 1 or len(b) != 1:
        raise ShapeMismatch
    return (a[0], b[0]), 1, 0


def matmul(a: tuple, b: tuple) -> tuple:
    """``a @ b`` of vectors and matrices: its inner size per element."""
    if not a or not b or len(a) > 2 or len(b) > 2 or a[-1] != b[0]:
        raise ShapeMismatch
    return a[:-1] + b[1:], a[-1], 0


def kron(a: tuple, b: tuple) -> tuple:
    r = max(len(a), len(b))
    a, b = (1,) * (r - len(a)) + a, (1,) * (r - len(b)) + b
    return tuple(x * y for x, y in zip(a, b)), 1, 0


def diag(a: tuple) -> tuple:
    if len(a) == 1:
        return (a[0], a[0]), 1, 0
    if len(a) == 2:
        return (min(a),), 1, 0
    raise ShapeMismatch


def trace(a: tuple) -> tuple:
    if len(a) != 2:
        raise ShapeMismatch
    return (), min(a), 0


def _square(a: tuple) -> int:
    if len(a) != 2 or a[0] != a[1]:
        raise ShapeMismatch
    return a[0]


def _eliminations(size: int) -> int:
    # (SymPy's elimination on symbols: a 4x4 determinant in 2 s, 5x5 in 13 s, 6x6 in more
    # than 100 s; each element of the result has about n! terms)
    return math.factorial(min(size, 20))


def elimination_scalar(a: tuple) -> tuple:
    """A number from a square matrix by elimination (det, logdet): n!·n² operations."""
    size = _square(a)
    return (), _eliminations(size) * size ** 2, size


def elimination_same(a: tuple) -> tuple:
    """A square matrix of its shape by elimination (inverse): n! per element."""
    size = _square(a)
    return a, _eliminations(size), size


def solve(a: tuple, b: tuple) -> tuple:
    size = _square(a)
    if not 1 <= len(b) <= 2 or b[0] != size:
        raise ShapeMismatch
    return b, _eliminations(size), size
