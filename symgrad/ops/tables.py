"""Side tables keyed by op: what one interpretation needs to know of an op, registered
beside the op (JAX's way: ``ad.defjvp`` and lowerings sit next to the primitive).

The core record (:class:`~symgrad.ops.record.Op`) holds what every layer needs; a fact
that only one reader needs (the matrix algebra's identities, the checker's domains, what
has no vector form) is an entry in one of the tables below, written in the op's family
module right after the op.  Readers ask ``TABLE.get(op)`` or ``op in TABLE``: none of them
names an op.  :func:`~symgrad.ops.record.unregister` takes an op out of every table.

Examples
--------
>>> from symgrad import ops
>>> from symgrad.ops import tables
>>> ops.EQ in tables.MEASURE_ZERO, tables.NO_VECTOR_FORM.get(ops.GATHER)
(True, 'indexing and scattering have no vector form')
"""
from __future__ import annotations

from typing import Any, Iterator

__all__ = ["Table", "TABLES", "FORMULA", "MEASURE_ZERO", "CONJUNCTION", "NO_VECTOR_FORM",
           "STEP", "INDEXING", "CHOOSES", "DECOMPOSED", "INVERSE_OF", "COMPOSES", "LINEAR",
           "HOMOGENEOUS", "ELEMENTWISE", "POINTWISE", "SQUARE", "SYNONYM",
           "TRANSPOSE_INVARIANT", "ROLES",
           "NOT_FINITE", "WORK", "RATIONAL", "JVP", "BATCHING", "EVERY_OUTPUT", "ShapeMismatch"]

#: Every side table, so that an op can be taken out of all of them.
TABLES: list = []


class Table:
    """A mapping from op records to one kind of fact about them.

    Parameters
    ----------
    name : str
        What the table holds (shown by ``repr``).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._entries: dict = {}
        # (the dict's own lookup: hot paths ask a table per op they run)
        self.get = self._entries.get
        TABLES.append(self)

    def register(self, value: Any, *ops) -> None:
        """Record ``value`` for each of ``ops``."""
        for op in ops:
            self._entries[op] = value

    def get(self, op, default: Any = None) -> Any:
        """The entry of ``op``, else ``default``."""
        return self._entries.get(op, default)

    def drop(self, op) -> None:
        """Forget ``op`` (it left the op table)."""
        self._entries.pop(op, None)

    def __contains__(self, op) -> bool:
        return op in self._entries

    def __iter__(self) -> Iterator:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<table {self.name}: {len(self._entries)} ops>"


# -- the matrix algebra's (symgrad.symbolic.vectors): facts about conditions ----------------
#: Comparisons that hold only on a set of measure zero (``x == 0``): almost everywhere
#: false, so ``where`` takes its other branch.
MEASURE_ZERO = Table("measure zero")
#: Connectives that hold only where all their operands hold (``and``).
CONJUNCTION = Table("conjunction")
#: Ops with no vector form, and why (a message of NoVectorForm).
NO_VECTOR_FORM = Table("no vector form")

#: Ops that pick between two values by a condition: op -> ``f(*args)`` giving
#: ``(condition, value where it holds, value elsewhere)`` (where, masked_fill).
CHOOSES = Table("chooses")

#: The reasons of NO_VECTOR_FORM.
STEP = "the derivative has a step (a comparison)"
INDEXING = "indexing and scattering have no vector form"


# -- PyTorch-parity details of the recorded backend (symgrad.api.recorded) -------------------
#: Ops a gradient formula of PyTorch's records as their decomposition (``ger`` is
#: ``self.reshape(n, 1) * vec``): op -> ``f(a, b, ...)`` on tensors.
DECOMPOSED = Table("decomposed")


# -- the engine's (symgrad.engine.rules) ------------------------------------------------------
#: Ops with several outputs (``op.outputs``) whose forward computes each of them (a tuple,
#: None for one not asked for) and whose rules take one gradient per output (a list, None
#: where undefined): PyTorch's multi-output backward nodes (ConvolutionBackwardBackward0).
#: Their last attribute is the output mask (which outputs to compute).
EVERY_OUTPUT = Table("every output")


# -- the text backend's (symgrad.ops.formula): how an op a rule calls reads ----------------
#: A template over the input and attribute names (``"{self} > {other}"``, ``"σ({self})"``);
#: a relation prints as a condition (an Iverson bracket in a product).
FORMULA = Table("formula")


# -- the matrix algebra's identities (symgrad.symbolic.matrix, hessians) ---------------------
#: ``f(g(x)) = x``: op -> the op it undoes (exp and log; inverse and itself).
INVERSE_OF = Table("inverse of")
#: ``f(g(x)) = h(x)``: op -> {inner op: the op of the composition} (exp of log_softmax is
#: softmax).
COMPOSES = Table("composes")
#: Linear in its argument (a directional derivative passes through; a constant factor
#: comes out): sum, trace.
LINEAR = Table("linear")
#: A constant factor comes out (``mean(2 * x) = 2 * mean(x)``), though not registered
#: as LINEAR for the Hessians.
HOMOGENEOUS = Table("homogeneous")
#: Applied element by element: the result has its argument's shape.
ELEMENTWISE = Table("elementwise")
#: Several operands, broadcast, then element by element, with attributes that are numbers
#: (slopes, thresholds), never dimensions: tanh_backward, threshold_backward, ...  A batch
#: of samples lined up by broadcasting runs in one call (symgrad.func's batched backward).
#: ELEMENTWISE ops and broadcasting ops without attributes need no entry.
POINTWISE = Table("pointwise")
#: Defined on square matrices only (det, inverse): a matrix argument's two sizes are one.
SQUARE = Table("square")
#: Ops that are another op on real numbers (sgn is sign): op -> that op.
SYNONYM = Table("synonym")
#: ``f(X.T) = f(X)``: det, logdet, trace.
TRANSPOSE_INVARIANT = Table("transpose invariant")


class Roles:
    """The ops the matrix algebra builds with, by what they do (registered by the
    families: ``ROLES.total = SUM``); an attribute not registered is None."""

    total = total_along = count = trace = diagonal = inverse = absolute = sign = None

    def __repr__(self) -> str:
        return "<roles: " + ", ".join(f"{k}={v}" for k, v in vars(self).items()) + ">"


#: ``total``: the sum of all elements (``sum(u * v) = u @ v``, ``sum(u ** 2) = u @ u``, a
#: sum of n equal terms is n times the term), ``total_along`` along dims; ``count``: the
#: number of elements;
#: ``trace`` (``trace(outer(u, v)) = u @ v``); ``diagonal``: a vector as a diagonal matrix;
#: ``inverse``: the matrix inverse (``X @ inverse(X) = I``); ``absolute``: ``|x|``;
#: ``sign`` (``sign(u) * u = |u|``).
ROLES = Roles()


# -- the budget's (symgrad.symbolic.budget): the work an op of the grammar asks for --------
#: op -> ``f(*operand shapes)`` giving ``(result shape, operations per element, size of a
#: symbolic elimination)`` (symgrad.ops.shape_rules), raising ShapeMismatch; an op with no
#: entry is elementwise.
WORK = Table("work")


#: Ops whose results are rational functions of a matrix's elements by symbolic elimination
#: (inverse, logdet, solve: a Hessian through the inverse of a 3x3 matrix took 15 s, of a
#: 4x4 more than a minute; through det, 3 s).
RATIONAL = Table("rational")


class ShapeMismatch(Exception):
    """The operands' shapes do not fit the op."""


# -- the checker's (symgrad.symbolic.expression): why a value is not finite ------------------
#: op -> ``f(x)`` giving the words for why ``op(x)`` is nan or inf at the array ``x``,
#: or None when ``x`` is not why.
NOT_FINITE = Table("not finite")


# -- forward mode's (symgrad.ops.jvp): each op's Jacobian-vector product -------------------
#: op -> how its JVP is had: one of the derivations ``jvp.ELEMENT_WISE``, ``jvp.LINEAR``,
#: ``jvp.MULTILINEAR`` (as derivatives.yaml's ``auto_element_wise`` and ``auto_linear``),
#: or an explicit rule ``f(m, tangents, args, attrs, result, saved)`` (JAX's ``defjvp``).
#: Ops in ELEMENTWISE and LINEAR need no entry: they are derived as such.
JVP = Table("jvp")


# -- vmap's (symgrad.ops.batching): each op run once on a batch of samples ------------------
#: op -> ``rule(m, args, batched)`` giving the op's result for every sample, batch first
#: (JAX's batching rules), or None where it does not apply; an op without an entry runs
#: once by broadcasting if point-wise, else sample by sample.
BATCHING = Table("batching")
