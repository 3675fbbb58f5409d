"""Matrix expressions of symbolic size: the algebra that vector forms of gradients live in.

A :class:`Mx` is an immutable expression over named vectors and matrices whose sizes are
:class:`Dim` symbols (``n``, ``m``), not numbers: ``A.T @ (A @ x - b)`` means the same for
every size.  Its vocabulary is the expression language's own — ``+ - * / **`` elementwise
with broadcasting, ``@`` with numpy's rules for vectors, ``.T``, and the grammar's
functions (``sin``, ``sum``, ``trace``, ``det``, ``inverse``, ``outer``, ...) — so every
expression prints as text that :func:`symgrad.parse` reads back.

The constructors simplify as they build (numbers folded, like terms collected, scalars
pulled out of products, transposes pushed to the leaves, ``I @ X = X``, the row and column
views of a vector turned back into vector products), which is what makes a gradient come
out as a textbook writes it; :mod:`~symgrad.symbolic.matrix_forms` prints, factors and
compares them.

The gradient rules that produce these expressions are the op table's own, run on this
algebra by :mod:`symgrad.symbolic.matrix_backend`.
"""
from __future__ import annotations

import contextlib
import threading
from fractions import Fraction
from itertools import count

import numpy as np

from ..ops import OPS
from .parser import FUNCTION_OPS
from ..ops import tables as T


__all__ = ["Dim", "Mx", "NoVectorForm", "sym", "num", "fn", "add", "mul", "power", "mm",
           "transpose", "outer", "unsqueeze", "squeeze", "uniform", "eye", "reshape",
           "sum_to", "elementwise", "op_of", "name_of", "is_op"]


class NoVectorForm(ValueError):
    """The gradient has no vector form in the expression language (the reason says why)."""


class Dim(int):
    """A symbolic size; sizes that must be equal are unified (union-find).  It is also
    the number it had where the expression was traced (``size``), so that the op table's
    rules may compute with it (``np.eye(n)``)."""

    _ids = count()

    def __new__(cls, size: int, named: bool = False) -> "Dim":
        d = super().__new__(cls, size)
        d.parent = None
        d._id = next(Dim._ids)
        d.named = named  # a size the user named (--shape x=n): no traced value stands in
        d.vector = None  # a variable that is a vector of this size (numel(x) counts it)
        return d

    @property
    def size(self) -> int:
        return int(self)

    def find(self) -> "Dim":
        d = self
        while d.parent is not None:
            d = d.parent
        return d

    def __repr__(self) -> str:
        return f"Dim#{self.find()._id}"


def unify(a, b) -> None:
    """Record that two sizes are equal (1 broadcasts and unifies with nothing)."""
    if isinstance(a, Dim) and isinstance(b, Dim):
        ra, rb = a.find(), b.find()
        if ra is not rb:
            rb.parent = ra
            ra.named = ra.named or rb.named
            ra.vector = ra.vector or rb.vector


def named_size(shape) -> bool:
    """Whether a size of ``shape`` was named by the user (its traced value is no answer
    for every size: a count of elements over it is ``numel`` of a variable)."""
    return any(isinstance(d, Dim) and d.find().named for d in shape)


def _count(dims) -> Mx:
    """The number of elements over named sizes, as ``numel`` of vectors of those sizes
    (``numel(x)``), or NoVectorForm when no variable is such a vector."""
    vectors = [d.find().vector if isinstance(d, Dim) else None for d in dims]
    if any(v is None for v in vectors):
        raise NoVectorForm("a sum of equal terms over a size the matrix form cannot name")
    return mul(*[fn(name_of(T.ROLES.count), v, shape=()) for v in vectors])


def _dim_key(d):
    return ("1",) if not isinstance(d, Dim) else ("d", d.find()._id)


def op_of(name: str):
    """The op a function name of the algebra stands for: the expression language's name
    (``sin``, ``arcsin``) or ``<key>`` for an op of the table without one
    (``<linalg_det>``)."""
    if name.startswith("<") and name.endswith(">"):
        return OPS.get(name[1:-1])
    return FUNCTION_OPS.get(name)


def name_of(op) -> str:
    """The algebra's name of ``op``: the expression language's, else ``<key>``."""
    return op.expr or f"<{op.key}>"


def is_op(name, op) -> bool:
    """Whether the function ``name`` of the algebra is ``op`` (None: no op is)."""
    return op is not None and isinstance(name, str) and op_of(name) is op


class _Unnamed(threading.local):
    """Set while an op with no name in the grammar runs its forward on expressions
    (``log_softmax_backward_data`` in a gradient rule): numpy's elementwise functions
    then read as the grammar's (``np.exp`` is ``exp``)."""

    on = False


_UNNAMED = _Unnamed()


@contextlib.contextmanager
def unnamed_forward():
    """While set, numpy's elementwise functions on expressions are the grammar's."""
    _UNNAMED.on, before = True, _UNNAMED.on
    try:
        yield
    finally:
        _UNNAMED.on = before


def elementwise(name: str) -> bool:
    """Whether the function ``name`` applies element by element (its result has its
    argument's shape): the op table says (``Op.elementwise``)."""
    op = op_of(name)
    return op is not None and op.elementwise


def _square(name: str) -> bool:
    op = op_of(name)
    return op is not None and op.square


class Mx:
    """A matrix expression node: ``kind``, ``args`` and ``shape`` (a tuple of
    :class:`Dim` and 1)."""

    __slots__ = ("kind", "args", "shape", "_key")
    __array_priority__ = 1000

    def __init__(self, kind: str, args: tuple, shape) -> None:
        self.kind, self.args, self.shape = kind, args, shape
        self._key = None

    # -- identity ---------------------------------------------------------------------
    @property
    def key(self) -> tuple:
        """A hashable structural key (dimension classes included)."""
        if self._key is None:
            parts = tuple(a.key if isinstance(a, Mx) else ("#", _hashable(a))
                          for a in self.args)
            self._key = (self.kind, parts)
        return self._key

    def __hash__(self) -> int:
        return hash(self.key)

    def same(self, other) -> bool:
        return isinstance(other, Mx) and self.key == other.key

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Mx({self.kind}, {self.args!r})"

    # -- Python's operators: what the op table's rules write ------------------------------
    def __add__(self, o):
        return add(self, _lift(o, self))

    def __radd__(self, o):
        return add(_lift(o, self), self)

    def __sub__(self, o):
        return add(self, neg(_lift(o, self)))

    def __rsub__(self, o):
        return add(_lift(o, self), neg(self))

    def __mul__(self, o):
        return mul(self, _lift(o, self))

    def __rmul__(self, o):
        return mul(_lift(o, self), self)

    def __truediv__(self, o):
        return mul(self, power(_lift(o, self), -1))

    def __rtruediv__(self, o):
        return mul(_lift(o, self), power(self, -1))

    def __neg__(self):
        return neg(self)

    def __pow__(self, o):
        return power(self, _lift(o, self))

    def __matmul__(self, o):
        return mm(self, _lift(o, self))

    def __rmatmul__(self, o):
        return mm(_lift(o, self), self)

    # -- numpy's protocols: the op table's numpy forwards run on expressions -------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__
        if method == "outer" and name == "multiply" and not kwargs:  # np.multiply.outer
            return outer(*(_lift(a, self) for a in inputs))
        if (_UNNAMED.on and method == "__call__" and not kwargs and len(inputs) == 1
                and elementwise(name)):
            return fn(name, _lift(inputs[0], self))  # np.exp: the grammar's function
        if method != "__call__" or kwargs or name not in _UFUNCS:
            return NotImplemented
        return _UFUNCS[name](*(_lift(a, self) for a in inputs))

    def __array_function__(self, func, types, args, kwargs):
        handler = _FUNCTIONS.get(func.__name__)
        if handler is None:
            return NotImplemented
        return handler(*args, **kwargs)


def _hashable(a):
    if isinstance(a, (tuple, list)):
        return tuple(_hashable(x) for x in a)
    if isinstance(a, Dim):
        return "d"  # (names identify variables; sizes do not change what is equal)
    return a


# -- leaves -------------------------------------------------------------------------------
def sym(name: str, shape: tuple) -> Mx:
    """A named variable of ``shape`` (Dims)."""
    return Mx("sym", (name,), tuple(shape))


def num(v) -> Mx:
    """A number (exact where it can be: ints, and floats that are small fractions)."""
    if isinstance(v, Mx):
        return v
    v = _exact(v)
    return Mx("num", (v,), ())


def _exact(v):
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, Fraction):
        return v.numerator if v.denominator == 1 else v
    v = float(v)
    if not np.isfinite(v):
        return v
    if v.is_integer() and abs(v) < 2 ** 53:
        return int(v)
    f = Fraction(v).limit_denominator(1000)
    return f if float(f) == v else v


def eye(d) -> Mx:
    """The identity matrix of size ``d``."""
    return Mx("eye", (), (d, d))


def uniform(g: Mx, shape: tuple) -> Mx:
    """The scalar ``g`` in every element of a tensor of ``shape`` (``sum``'s gradient)."""
    if g.kind == "uniform":
        g = g.args[0]
    if g.rank:
        raise NoVectorForm("a non-scalar value broadcast to a larger shape")
    return Mx("uniform", (g,), tuple(shape)) if len(shape) else g


def _is_num(e, value=None) -> bool:
    return e.kind == "num" and (value is None or e.args[0] == value)


def _lift(o, like: Mx | None = None) -> Mx:
    """A Python number, a 0-d array, an identity matrix -> an expression."""
    if isinstance(o, Mx):
        return o
    if isinstance(o, (int, float, Fraction, np.integer, np.floating, np.bool_)):
        return num(o)
    if isinstance(o, np.ndarray):
        if o.ndim == 0:
            return _lift(o[()], like)
        if o.dtype == object:
            try:
                o = o.astype(np.float64)
            except (TypeError, ValueError):
                raise NoVectorForm("an array of expressions") from None
        if (o.ndim == 2 and o.shape[0] == o.shape[1]
                and np.array_equal(o, np.eye(o.shape[0]))):
            d = like.shape[-1] if like is not None and like.rank == 2 else Dim(o.shape[0])
            return eye(d)
        if o.size and np.all(o == o.flat[0]):
            return uniform(num(o.flat[0]), tuple(Dim(n) for n in o.shape))
    raise NoVectorForm(f"a constant array has no vector form here ({type(o).__name__})")


# -- shapes -------------------------------------------------------------------------------
def _broadcast(shapes) -> tuple:
    shapes = list(shapes)
    if not shapes:
        return ()
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        d = 1
        for s in shapes:
            k = len(s) - rank + i
            if k < 0:
                continue
            e = s[k]
            if isinstance(e, Dim):
                if isinstance(d, Dim):
                    unify(d, e)
                else:
                    d = e
        out.append(d)
    return tuple(out)


# -- arithmetic -----------------------------------------------------------------------------
def neg(a: Mx) -> Mx:
    return mul(num(-1), a)


def _split(t: Mx):
    """``(coefficient, rest)`` of a term: ``2*A@x`` -> (2, A@x)."""
    if t.kind == "num":
        return t.args[0], None
    if t.kind == "mul" and _is_num(t.args[0]):
        rest = t.args[1:]
        return t.args[0].args[0], rest[0] if len(rest) == 1 else Mx("mul", rest, t.shape)
    return 1, t


def add(*xs: Mx) -> Mx:
    """A sum, flattened, with numbers folded and like terms collected."""
    terms = []
    for x in xs:
        terms.extend(x.args if x.kind == "add" else (x,))
    shape = _broadcast([t.shape for t in terms])
    # (zeros spread over a shape, a constant's gradient, add nothing: their shape is kept)
    terms = [t for t in terms if not (t.kind == "uniform" and _is_num(t.args[0], 0))] or \
        [num(0)]
    coefs: dict = {}
    order = []
    for t in terms:
        c, rest = _split(t)
        k = None if rest is None else rest.key
        if k not in coefs:
            coefs[k] = [0, rest]
            order.append(k)
        coefs[k][0] += c
    out = [num(coefs[k][0]) if k is None else mul(num(coefs[k][0]), coefs[k][1])
           for k in order if coefs[k][0] != 0]
    if not out:
        return num(0)
    if len(out) == 1:
        r = out[0]
        return uniform(r, shape) if r.kind == "num" and shape and r.rank == 0 else r
    return Mx("add", tuple(out), shape)


def mul(*xs: Mx) -> Mx:
    """An elementwise product (scalars broadcast), flattened: numbers first and folded,
    equal bases' powers combined, a uniform value's shape taken from the others."""
    factors = []
    for x in xs:
        factors.extend(x.args if x.kind == "mul" else (x,))
    c = 1
    powers: dict = {}
    order = []
    has_shaped = any(f.rank and f.kind != "uniform" for f in factors)
    shape = _broadcast([f.shape for f in factors])
    for f in factors:
        if f.kind == "num":
            c = c * f.args[0]
            continue
        if f.kind == "uniform" and has_shaped:
            f = f.args[0]
            if f.kind == "num":
                c = c * f.args[0]
                continue
        base, e = (f.args[0], f.args[1]) if f.kind == "pow" else (f, num(1))
        k = base.key
        if k not in powers:
            powers[k] = [base, []]
            order.append(k)
        powers[k][1].append(e)
    if c == 0:
        return num(0)
    uniforms = [f for f in factors if f.kind == "uniform"]
    for k in list(order):  # sign(u) * u = abs(u)
        if k not in powers:
            continue
        base, es = powers[k]
        if not (base.kind == "fn" and is_op(base.args[0], T.ROLES.sign) and _one(es)):
            continue
        u = base.args[1]
        if u.key not in powers or not _one(powers[u.key][1]):
            continue
        for gone in (k, u.key):
            del powers[gone]
            order.remove(gone)
        a = fn(name_of(T.ROLES.absolute), u)
        if a.key in powers:
            powers[a.key][1].append(num(1))
        else:
            powers[a.key] = [a, [num(1)]]
            order.append(a.key)
    out = []
    for k in order:
        base, es = powers[k]
        e = add(*es) if len(es) > 1 else es[0]
        if _is_num(e, 0):
            continue
        out.append(base if _is_num(e, 1) else Mx("pow", (base, e), base.shape))
    if not out:
        return uniform(num(c), shape) if uniforms else num(c)
    if any(f.kind == "uniform" for f in out):  # uniform values only: one uniform value
        inner = mul(num(c), *(f.args[0] if f.kind == "uniform" else f for f in out))
        return uniform(inner, shape)
    out.sort(key=lambda f: f.rank)  # (stable) scalars before vectors before matrices
    if c != 1:
        out.insert(0, num(c))
    if len(out) == 1:
        return out[0]
    cols = [f for f in out if f.kind == "unsq" and f.args[1] == 1]
    vecs = [f for f in out if f.rank == 1]
    if len(cols) == 1 and len(vecs) == 1 and len(out) - len(cols) - len(vecs) == \
            sum(f.rank == 0 for f in out):  # a column times a vector: an outer product
        return mul(*(f for f in out if f.rank == 0), outer(cols[0].args[0], vecs[0]))
    return Mx("mul", tuple(out), shape)


def _one(exponents: list) -> bool:
    return _is_num(add(*exponents) if len(exponents) > 1 else exponents[0], 1)


def power(base: Mx, e) -> Mx:
    e = _lift(e)
    if _is_num(e, 1):
        return base
    if _is_num(e, 0):
        return num(1)
    if base.kind == "num" and e.kind == "num" and isinstance(e.args[0], int):
        b, k = base.args[0], e.args[0]
        f = Fraction(b) if not isinstance(b, float) or np.isfinite(b) else None
        # (exact only while small: 0.5 ** 10**100 stays a power, never computed)
        if f is not None and (b != 0 or k > 0) and abs(k) <= 64 and \
                max(f.numerator.bit_length(), f.denominator.bit_length()) * abs(k) <= 4096:
            return num(f ** k)
    if base.kind == "pow" and e.kind == "num" and isinstance(e.args[0], int):
        return power(base.args[0], mul(base.args[1], e))
    if base.kind == "mul" and e.kind == "num" and isinstance(e.args[0], int):
        return mul(*(power(f, e) for f in base.args))
    return mul(Mx("pow", (base, e), base.shape))


# -- products -------------------------------------------------------------------------------
def _scalars_out(x: Mx):
    """``(scalar factors, the rest)`` of an elementwise product."""
    if x.kind == "mul" and x.rank:
        s = [f for f in x.args if f.rank == 0]
        if s:
            rest = [f for f in x.args if f.rank != 0]
            return s, (rest[0] if len(rest) == 1 else Mx("mul", tuple(rest), x.shape))
    return [], x


def mm(a: Mx, b: Mx) -> Mx:
    """The matrix product with numpy's rules for vectors (``v @ w`` is their dot)."""
    if _is_num(a, 0) or _is_num(b, 0):
        return num(0)
    if a.kind == "uniform" or b.kind == "uniform":
        raise NoVectorForm("the gradient passes through a matrix of ones (a sum of a "
                           "matrix product)")
    if a.rank == 0 or b.rank == 0:
        return mul(a, b)
    sa, a = _scalars_out(a)
    sb, b = _scalars_out(b)
    if sa or sb:
        return mul(*sa, *sb, mm(a, b))
    if a.kind == "add":
        return add(*(mm(t, b) for t in a.args))
    unify(a.shape[-1], b.shape[0])
    if a.kind == "eye":
        return b
    if b.kind == "eye":
        return a
    if _inverse_pair(a, b):  # X @ inverse(X) = I
        return eye(a.shape[0])
    if b.kind == "mm" and _inverse_pair(a, b.args[0]):
        return b.args[1]
    # rows and columns made from vectors (the recorded 1-D products) back to vectors
    if a.kind == "unsq" and b.kind == "unsq" and a.args[1] == 1 and b.args[1] == 0:
        return outer(a.args[0], b.args[0])
    if a.kind == "unsq" and a.args[1] == 0:
        return unsqueeze(mm(a.args[0], b), 0)
    if b.kind == "unsq" and b.args[1] == 1:
        return unsqueeze(mm(a, b.args[0]), 1)
    if a.rank == 1 and b.rank == 2:  # v @ M = M.T @ v
        return mm(transpose(b), a)
    if a.kind == "outer":  # (u v^T) B = u (B^T v)^T ; (u v^T) w = u (v . w)
        u, v = a.args
        return mul(mm(v, b), u) if b.rank == 1 else outer(u, mm(transpose(b), v))
    if b.kind == "outer" and a.rank == 2:
        u, v = b.args
        return outer(mm(a, u), v)
    if a.kind == "mm" and a.rank == 2:  # right-nested chains: (A @ B) @ c = A @ (B @ c)
        return mm(a.args[0], mm(a.args[1], b))
    shape = a.shape[:-1] + b.shape[1:]
    return Mx("mm", (a, b), shape)


def _inverse_pair(a: Mx, b: Mx) -> bool:
    """``a @ b`` is an identity: ``X @ inverse(X)``, ``inverse(X) @ X`` or transposed."""
    for x, y in ((a, b), (b, a)):
        if x.kind == "fn" and is_op(x.args[0], T.ROLES.inverse) and x.args[1].same(y):
            return True
        if (x.kind == "T" and y.kind == "T" and x.args[0].kind == "fn"
                and is_op(x.args[0].args[0], T.ROLES.inverse)
                and x.args[0].args[1].same(y.args[0])):
            return True
    return False


def outer(u: Mx, v: Mx) -> Mx:
    """The outer product ``u v^T`` of two vectors."""
    if _is_num(u, 0) or _is_num(v, 0):
        return num(0)
    su, u = _scalars_out(u)
    sv, v = _scalars_out(v)
    if su or sv:
        return mul(*su, *sv, outer(u, v))
    if u.rank != 1 or v.rank != 1:
        raise NoVectorForm("an outer product of non-vectors")
    return Mx("outer", (u, v), (u.shape[0], v.shape[0]))


def transpose(a: Mx) -> Mx:
    """``a.T``, pushed to the leaves; vectors and scalars are their own transposes."""
    if a.rank < 2:
        return a
    k = a.kind
    if k == "T":
        return a.args[0]
    if k == "eye":
        return a
    if k == "add":
        return add(*(transpose(t) for t in a.args))
    if k == "mul":
        return mul(*(transpose(f) for f in a.args))
    if k == "pow":
        return power(transpose(a.args[0]), a.args[1])
    if k == "mm":
        return mm(transpose(a.args[1]), transpose(a.args[0]))
    if k == "outer":
        return outer(a.args[1], a.args[0])
    if k == "unsq":
        return unsqueeze(a.args[0], 1 - a.args[1])
    if k == "fn" and elementwise(a.args[0]):
        return fn(a.args[0], transpose(a.args[1]))
    if k == "fn" and is_op(a.args[0], T.ROLES.inverse) and transpose(a.args[1]).same(a.args[1]):
        return a  # the inverse of a symmetric matrix (X.T @ X) is symmetric
    return Mx("T", (a,), a.shape[::-1])


def unsqueeze(a: Mx, dim: int) -> Mx:
    """A vector as a one-row (``dim=0``) or one-column (``dim=1``) matrix."""
    if a.rank == 0:
        return a
    if a.kind == "uniform":
        shape = list(a.shape)
        shape.insert(dim % (a.rank + 1), 1)
        return uniform(a.args[0], tuple(shape))
    if a.rank != 1:
        raise NoVectorForm("a view with a new dimension of a matrix")
    dim = dim % 2
    if a.kind == "num":
        return a
    s = a.shape
    return Mx("unsq", (a, dim), (1, s[0]) if dim == 0 else (s[0], 1))


def squeeze(a: Mx, dim: int) -> Mx:
    """The inverse of :func:`unsqueeze`, pushed through sums and products."""
    if a.rank == 0:
        return a
    dim = dim % a.rank
    if a.shape[dim] != 1:
        return a
    if a.kind == "uniform":
        return uniform(a.args[0], a.shape[:dim] + a.shape[dim + 1:])
    k = a.kind
    if k == "unsq" and a.args[1] == dim:
        return a.args[0]
    if k == "add":
        return add(*(squeeze(t, dim) for t in a.args))
    if k == "mul":
        return mul(*(squeeze(f, dim) if f.rank == a.rank else f for f in a.args))
    if k == "mm":
        x, y = a.args
        if dim == 0 and x.kind == "unsq" and x.args[1] == 0:
            return mm(x.args[0], y)
        if dim == 1 and y.kind == "unsq" and y.args[1] == 1:
            return mm(x, y.args[0])
    if k == "T":
        return squeeze(a.args[0], 1 - dim)
    if k == "fn" and elementwise(a.args[0]):
        return fn(a.args[0], squeeze(a.args[1], dim))
    raise NoVectorForm("a one-row or one-column matrix that is not a vector")


def reshape(a: Mx, shape: tuple) -> Mx:
    """Only the reshapes that add or drop a unit dimension of a vector."""
    if len(shape) == a.rank:
        return a
    if a.kind == "uniform":
        return uniform(a.args[0], tuple(shape))
    if a.rank == 1 and len(shape) == 2 and 1 in shape:
        return unsqueeze(a, 0 if shape[0] == 1 else 1)
    if a.rank == 2 and len(shape) == 1 and 1 in a.shape:
        return squeeze(a, 0 if a.shape[0] == 1 else 1)
    raise NoVectorForm("a reshape of a vector or matrix into another shape")


def sum_to(g: Mx, shape: tuple) -> Mx:
    """``g`` summed back to ``shape``, the shape of an operand that was broadcast."""
    if tuple(map(_dim_key, g.shape)) == tuple(map(_dim_key, shape)):
        return g
    if g.kind == "uniform":  # n equal values summed: n times the value
        kept = {_dim_key(d) for d in shape}
        summed = [d for d in g.shape if _dim_key(d) not in kept]
        if named_size(summed):
            return uniform(mul(_count(summed), g.args[0]), shape)
        n = int(np.prod([int(d) for d in g.shape])) // max(
            1, int(np.prod([int(d) for d in shape])))
        return uniform(mul(num(n), g.args[0]), shape)
    total = name_of(T.ROLES.total)
    if not shape:
        return fn(total, g, shape=())
    if g.rank == 2 and len(shape) == 1:  # (n, m) -> (m,): the sum of the rows
        s, rest = _scalars_out(g)
        if rest.kind == "outer":
            return mul(*s, fn(total, rest.args[0], shape=()), rest.args[1])
        if rest.kind == "mul":
            cs = [f for f in rest.args if f.kind == "unsq" and f.args[1] == 1]
            ms = [f for f in rest.args if f.rank == 2 and f not in cs]
            if len(cs) == 1 and len(ms) == 1 and len(rest.args) == 2:
                return mul(*s, mm(transpose(ms[0]), cs[0].args[0]))
    if g.rank == 2 and len(shape) == 2:
        # (n, m) -> (n, 1): G * v summed along the rows is G @ v; (1, m): u-columns
        s, rest = _scalars_out(g)
        if rest.kind == "outer":
            u, v = rest.args
            if shape[1] == 1:
                return mul(*s, unsqueeze(mul(fn(total, v, shape=()), u), 1))
            if shape[0] == 1:
                return mul(*s, unsqueeze(mul(fn(total, u, shape=()), v), 0))
        if rest.kind == "mul" and shape[1] == 1:
            vs = [f for f in rest.args if f.rank == 1]
            ms = [f for f in rest.args if f.rank == 2]
            if len(vs) == 1 and len(ms) == 1:
                return mul(*s, unsqueeze(mm(ms[0], vs[0]), 1))
    if g.rank == len(shape) and not any(
            isinstance(a, Dim) and b == 1 for a, b in zip(g.shape, shape)):
        return g
    raise NoVectorForm("a vector broadcast across the rows of a matrix (its gradient "
                       "sums them)")


# -- functions --------------------------------------------------------------------------------
def _counted(e: Mx) -> Mx:
    """A variable of ``e``'s shape inside ``e`` (``numel((X @ w - y) ** 2)`` counts the
    elements of ``y``), else ``e``: ``numel`` of it reads plainly."""
    key = tuple(map(_dim_key, e.shape))
    todo = [e]
    while todo:
        a = todo.pop(0)
        if a.kind == "sym" and tuple(map(_dim_key, a.shape)) == key:
            return a
        todo.extend(b for b in a.args if isinstance(b, Mx)
                    and tuple(map(_dim_key, b.shape)) == key)
    return e


def fn(name: str, *args, shape=None) -> Mx:
    """A call of the grammar's function ``name``: elementwise ones keep their argument's
    shape; otherwise ``shape`` is given (a reduction's is ())."""
    x = args[0]
    op = op_of(name)
    if op is not None and x.kind == "fn":  # the identities registered beside the ops
        inner = op_of(x.args[0])
        if inner is not None and T.INVERSE_OF.get(op) is inner:  # exp(log(x)) = x
            return x.args[1]
        composed = (T.COMPOSES.get(op) or {}).get(inner)  # exp(log_softmax(x))
        if composed is not None:
            return fn(name_of(composed), x.args[1], shape=x.shape)
    if elementwise(name):
        shape = x.shape
        if x.kind == "uniform":
            return uniform(fn(name, x.args[0]), x.shape)
    elif shape is None:
        raise NoVectorForm(f"{name}() of unknown shape")
    if op is not None and op is T.ROLES.count:
        x = _counted(x)
    if _square(name) and x.rank == 2:  # their argument is square: its sizes are equal
        unify(x.shape[0], x.shape[1])
    total = op is not None and op is T.ROLES.total
    if total and x.kind == "uniform":
        if named_size(x.shape):  # (n equal terms: numel(x) of them, not the traced n)
            return mul(_count(x.shape), x.args[0])
        return mul(num(int(np.prod([int(d) for d in x.shape]))), x.args[0])
    if total and x.kind == "mul" and x.rank == 1 and len(x.args) == 2 \
            and all(f.rank == 1 for f in x.args):
        return mm(*x.args)  # sum(u * v) is the dot product u @ v
    if total and x.kind == "pow" and x.rank == 1 and _is_num(x.args[1], 2):
        return mm(x.args[0], x.args[0])  # sum(u**2) is u @ u
    if op is not None and op is T.ROLES.trace and x.kind == "outer":
        return mm(*x.args)  # trace(outer(u, v)) is u @ v
    if total and x.rank == 0:
        return x
    if op is not None and (op.linear or op in T.HOMOGENEOUS) and x.kind == "mul" \
            and _is_num(x.args[0]):
        return mul(x.args[0], fn(name, *_split(x)[1:], shape=shape))
    return Mx("fn", (name, x, *args[1:]), tuple(shape))


# -- numpy's functions on expressions ---------------------------------------------------------
def _np_sum(a, axis=None, keepdims=False, **kw):
    if axis is not None and not (a.rank == 1 and axis in (0, -1, (0,), (-1,))):
        raise NoVectorForm("a sum over one dimension of a matrix")
    return fn(name_of(T.ROLES.total), a, shape=())


def _np_transpose(a, axes=None):
    if axes is not None and tuple(axes) not in ((1, 0), (0, 1)):
        raise NoVectorForm("a permutation of more than two dimensions")
    return a if axes is not None and tuple(axes) == (0, 1) else transpose(a)


def _np_squeeze(a, axis=None):
    axes = [i for i, d in enumerate(a.shape or ()) if d == 1] if axis is None else \
        [axis] if isinstance(axis, int) else list(axis)
    for d in sorted((d % a.rank for d in axes), reverse=True):
        a = squeeze(a, d)
    return a


_UFUNCS = {"add": add, "subtract": lambda a, b: add(a, neg(b)), "multiply": mul,
           "true_divide": lambda a, b: mul(a, power(b, -1)), "negative": neg,
           "power": power, "matmul": mm}

_FUNCTIONS = {"dot": lambda a, b, **kw: mm(_lift(a), _lift(b)),
              "matmul": lambda a, b, **kw: mm(_lift(a), _lift(b)),
              "sum": _np_sum, "transpose": _np_transpose,
              "trace": lambda a, **kw: fn(name_of(T.ROLES.trace), a, shape=()),
              "swapaxes": lambda a, d0, d1: a if a.rank < 2 else transpose(a),
              "outer": lambda a, b: outer(_lift(a), _lift(b)),
              "expand_dims": lambda a, axis: unsqueeze(a, axis),
              "squeeze": lambda a, axis=None: _np_squeeze(a, axis),
              "shape": lambda a: a.shape, "ndim": lambda a: a.rank,
              "reshape": lambda a, *shape, **kw: reshape(
                  a, tuple(shape[0] if shape else kw.get("shape", kw.get("newshape")))),
              "where": lambda c, a, b: _choose(c, a, b)}


def _choose(cond, a, b):
    """``where`` with a condition known from the values (all true or all false)."""
    c = np.asarray(cond)
    if isinstance(cond, Mx) or c.dtype != bool or (c.any() and not c.all()):
        raise NoVectorForm("the derivative has a step (a comparison)")
    return _lift(a) if c.all() else _lift(b)
