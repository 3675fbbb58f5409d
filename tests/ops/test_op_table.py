"""Every differentiable op of the table, its VJP checked to second order.

One parametrized test, driven by :data:`symgrad.ops.OPS`: for each op with gradient rules
it compares the VJP (and the VJP of the VJP, built with ``create_graph=True``, which runs
the rules on the tensor backend)

1. with central finite differences in float64 (HIPS autograd's ``check_grads``), and
2. with ``sympy.diff`` of the op's SymPy mapping (:func:`symgrad.symbolic.sym_forward`),
   first derivatives and Hessian-vector products.

Example inputs come from a generic sampler: shapes by rank (``()``, ``(3,)``, ``(2, 3)``),
attributes from a table keyed by attribute *name*, values inside the op's ``domain``,
away from kinks (0, +-1: abs, relu, clamp's bounds) and from ties (max, maximum).
"""
from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
import sympy

import symgrad
from symgrad import ops
from symgrad.autograd import grad as autograd_grad
from symgrad.symbolic.bridge import leaf_symbols, sym_forward
from symgrad.api.tensor import apply

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-6

# --------------------------------------------------------------------------- sampler
RANK_SHAPES = {0: (), 1: (3,), 2: (2, 3), 3: (2, 2, 3)}
NAMED_SHAPES = {"mat2": {2: (3, 2), 3: (2, 3, 2)}, "mat1": {2: (2, 3)}, "vec": {1: (3,)}, "tensor": {1: (3,)},
                "value": {0: ()}, "A": {2: (3, 3)}, "B": {1: (3,), 2: (3, 2)},
                "mat": {2: (2, 3)}, "batch1": {3: (2, 2, 3)}, "batch2": {3: (2, 3, 2)}}


def _attr_candidates(name: str, shape: tuple) -> list:
    """Values tried for an attribute, chosen by its name and the base input's shape."""
    last = max(len(shape) - 1, 0)
    table = {
        "dim": sorted({0, last}),
        "keepdim": [False, True],
        "exponent": [3, -1.5, 0.5, 0],
        "other": [2.0],
        "alpha": [2, -0.5],
        "self": [1.7],
        "min": [-1.0, None],
        "max": [1.0, None],
        "ord": [2, 1, 3, float("inf")],
        "dims": [tuple(reversed(range(len(shape))))],
        "dim0": [0],
        "dim1": sorted({0, last}),
        # Valid for expand and view alike, and (2,) + shape only for expand.
        "size": [(1,) + tuple(shape), (2,) + tuple(shape)],
        # select's position, and scatter's/gather's index along dim (one per other dim).
        "index": [1] + ([np.ones((1,) * len(shape), dtype=np.int64)] if shape else []),
        "start": [1],
        "end": [3],
        "step": [1, 2],
        "indices": [np.array([1, 0, 1])],
        "value": [0.5],
        "mask": [np.arange(int(np.prod(shape))).reshape(shape) % 2 == 0],
        "stride": [(1,)], "storage_offset": [0],  # (as_strided shows them only)
        "dtype": [symgrad.float64],
        "threshold": [0.0, 1.0],
        "decimals": [1],
        "weight": [0.3],
        "negative_slope": [0.2],
        "min_val": [-0.5],
        "max_val": [1.0],
        "approximate": ["none", "tanh"],
        "reduction": [0, 1, 2],
        "delta": [0.7],
        "pos_weight": [None, 1.5],
        "ignore_index": [-100],
        "beta": [2.0],
        "scale": [1.5],
        "input_scale": [0.5],
        "correction": [1, 0],
        "pad": [(1, 2), (1, -1)],
        "offset": [0, 1],
        "dim2": [1],
        "left": [True],
        "self_is_result": [False], "is_result": [False, True],
        "diagonal": [0, -1],  # (tril's, triu's)
        "repeats": [(2,) + (1,) * len(shape), (2,) * max(len(shape), 1)],
        "shifts": [(1,) * max(len(shape), 1)],
        "nan": [0.5], "posinf": [None], "neginf": [-2.0], "rounding_mode": ["floor", "trunc"],
        "p": [2, 1, 3],
        "accumulate": [True],  # (put: without it, a repeated index has no derivative)
    }
    return table.get(name, [])  # an unknown name leaves the op without examples


def _extra_attr_candidates(name: str, shape: tuple) -> list:
    """Values only some ops with this attribute name take: all dims, several dims.

    ``max(dim)`` and ``cat(dim)`` take one dim where ``sum`` and ``linalg_vector_norm``
    take ``None`` or a tuple; the record does not say which, so these values are kept
    only where the forward *and* the backward run (the single-dim examples stay, so a
    VJP that fails on every dim cannot hide here).
    """
    if name == "dim":
        return [None] + ([(0, len(shape) - 1)] if len(shape) > 1 else [])
    return []


class Case:
    """One example call of an op: input shapes and attributes."""

    def __init__(self, op: ops.Op, shapes: tuple, attrs: tuple) -> None:
        self.op = op
        self.shapes = shapes
        self.attrs = attrs
        self.size = sum(int(np.prod(s, dtype=int)) for s in shapes)
        self.sympy_second_order = False  # set on each op's smallest example, see CASES

    @property
    def id(self) -> str:
        shapes = "x".join(str(list(s)).replace(" ", "") for s in self.shapes)
        attrs = ",".join(_short(a) for a in self.attrs)
        return f"{self.op.key}-{shapes}" + (f"-{attrs}" if attrs else "")

    def is_bool(self, i: int) -> bool:
        return not self.op.variadic and self.op.inputs[i] == "condition"

    def differentiable(self, i: int) -> bool:
        rule = self.op.grads[0] if self.op.variadic else self.op.grads[i]
        return rule is not None and not self.is_bool(i)


def _short(a) -> str:
    if isinstance(a, np.ndarray):
        return str(a.tolist()).replace(" ", "")
    return str(a).replace(" ", "")


def _input_shapes(op: ops.Op, rank: int) -> list:
    """Shape tuples for the op's inputs with the base input of the given rank."""
    base = RANK_SHAPES[rank]
    if op.variadic:
        return [(base, base)]
    shapes = []
    for i, name in enumerate(op.inputs):
        if name in NAMED_SHAPES:
            ranks = op.ranks[i] if op.ranks else tuple(NAMED_SHAPES[name])
            shapes.append([NAMED_SHAPES[name][r] for r in ranks
                           if r in NAMED_SHAPES[name]])
        else:
            shapes.append([base])
    combos = [tuple(s[0] for s in shapes)]
    if op.broadcasts:
        # One operand at a time gets a shape that broadcasts against the others.
        for i, name in enumerate(op.inputs):
            if name == "self" or (i == 0 and "self" not in op.inputs):
                continue
            for other in (base[1:], (2,) + base):
                if other != base:
                    combos.append(tuple(other if j == i else s[0]
                                        for j, s in enumerate(shapes)))
    return combos


def _call(case: Case, args: list):
    if case.op.variadic:
        return apply(case.op, list(args), case.attrs)
    return apply(case.op, tuple(args), case.attrs)


def _probe(shape: tuple, value: float) -> np.ndarray:
    """A constant array, plus the identity when square (so that inverses exist)."""
    a = np.full(shape, value)
    if len(shape) == 2 and shape[0] == shape[1]:
        a += np.eye(shape[0])
    return a


def _forward_accepts(op: ops.Op, shapes: tuple, attrs: tuple) -> bool:
    lo, hi = op.domain
    probe = 0.5 if lo < 0.5 < hi else lo + 0.5 if lo > -np.inf else hi - 0.5
    arrays = [_probe(s, probe) for s in shapes]
    if not op.variadic and "condition" in op.inputs:
        arrays[op.inputs.index("condition")] = np.ones(
            shapes[op.inputs.index("condition")], dtype=bool)
    try:
        out = np.asarray(op.forward(*arrays, *attrs))
    except Exception:  # noqa: BLE001 - attributes the forward rejects are not examples
        return False
    # (a degenerate call, var of one element with correction 1, is nan: no example)
    return out.dtype.kind == "f" and bool(np.all(np.isfinite(out)))


def _backward_runs(op: ops.Op, shapes: tuple, attrs: tuple) -> bool:
    case = Case(op, shapes, attrs)
    values = [_probe(s, 0.5) if not case.is_bool(i) else np.ones(s, dtype=bool)
              for i, s in enumerate(shapes)]
    args = [symgrad.tensor(v, dtype=symgrad.float64, requires_grad=case.differentiable(i))
            if not case.is_bool(i) else symgrad.tensor(v) for i, v in enumerate(values)]
    try:
        y = _call(case, args)
        y.backward(symgrad.ones(y.shape, dtype=symgrad.float64))
    except Exception:  # noqa: BLE001 - see _extra_attr_candidates
        return False
    return True


_IN_PLACE_ACTIVATIONS = [getattr(ops.activations, n) for n in ops.activations.__all__
                         if getattr(ops.activations, n).overload]


def cases_for(op: ops.Op) -> list:
    """Every example the generic sampler finds for ``op`` (its forward must accept it)."""
    ranks = op.ranks[0] if op.ranks else (0, 1, 2)
    if op.key == "std":  # (one element: std is 0 and its second derivative nan, in PyTorch
        ranks = (1, 2)   # too; tests/ops/test_statistics_vs_torch.py compares that)
    out = []
    for rank in ranks:
        base = RANK_SHAPES[rank]
        attr_lists = [[(v, False) for v in _attr_candidates(a, base)]
                      + [(v, True) for v in _extra_attr_candidates(a, base)]
                      for a in op.attrs]
        for chosen in itertools.product(*attr_lists):
            attrs = tuple(v for v, _ in chosen)
            extra = any(e for _, e in chosen)
            if sum(a is None for a in attrs) > 1:
                continue  # at most one optional attribute left out (clamp needs a bound)
            # (in-place activations refuse a negative slope at backward, as PyTorch:
            # tests/ops/test_activations_vs_torch.py compares that error)
            if op in _IN_PLACE_ACTIVATIONS and attrs[0] < 0:
                continue
            for shapes in _input_shapes(op, rank):
                if _forward_accepts(op, shapes, attrs) and (
                        not extra or _backward_runs(op, shapes, attrs)):
                    out.append(Case(op, shapes, attrs))
    return out


# (an op whose derivative PyTorch does not implement is compared with PyTorch's error
# elsewhere: tests/ops/test_functions_vs_torch.py)
DIFFERENTIABLE = [op for op in ops.OPS.values() if op.grads is not None
                  and not any(hasattr(g, "not_implemented") for g in op.grads)]
CASES = []
for _op in DIFFERENTIABLE:
    _cases = cases_for(_op)
    if _cases:
        # SymPy's second derivatives are slow (Max, Abs): they check each op's smallest
        # example; finite differences check second order on every example.
        min(_cases, key=lambda c: c.size).sympy_second_order = True
    CASES.extend(_cases)


# Ops whose inputs the generic sampler cannot make: class indices (nll_loss's target,
# embedding's indices), optional tensor inputs (layer_norm's weight and bias), shapes that
# must fit the attributes (_trilinear's expand and sumdim).
# tests/ops/test_nn_functional.py and tests/ops/test_layers_vs_torch.py check them with
# finite differences and PyTorch.
BY_HAND = {"nll_loss", "nll_loss_backward", "embedding", "embedding_dense_backward",
           "native_layer_norm", "_trilinear",
           # (no SymPy form of an order: tests/ops/test_sort_vs_torch.py checks them to
           # second order with check_grads, and against PyTorch)
           "sort", "sort1", "topk", "kthvalue"}
# Convolution, pooling and normalisation take (N, C, ...) inputs whose shapes must fit their
# attributes: tests/conv/test_conv_ops.py gives each op of those families its examples and
# runs this file's checks on them (finite differences and SymPy, to second order).
BY_HAND |= {getattr(family, name).key
            for family in (ops.convolution, ops.pooling, ops.normalization)
            for name in family.__all__ if isinstance(getattr(family, name), ops.Op)}
# Several outputs (one node, a piece each): tests/tensor/test_shape_names_vs_torch.py checks
# them against PyTorch to second order.
BY_HAND |= {"split", "split_with_sizes", "unbind", "diagonal_backward",
            "rot90"}  # (an attribute k: kthvalue's examples would be made too)
# scatter_reduce: index and reduction attributes the samplers cannot give (which entry is
# the extreme is no SymPy expression either); tests/ops/test_cross_dist_scatter_reduce_vs_
# torch.py compares it with PyTorch, graphs and values to second order.
BY_HAND |= {"scatter_reduce2"}
# Order statistics with examples here but no SymPy form (which entry is the median is not a
# SymPy expression): finite differences only here; tests/ops/test_quantiles_histograms_vs_
# torch.py compares them with PyTorch.
NO_SYMPY = {"median", "median1", "nanmedian", "nanmedian1"}
# (and the running extremes: which entry is the running max is no SymPy expression either;
# tests/tensor/test_index_math_names_vs_torch.py compares them with PyTorch)
NO_SYMPY |= {"cummax", "cummin"}
# Ops PyTorch has no second derivative of (its gradient's node is "NotImplemented"):
# tests/ops/test_activations_vs_torch.py compares that error.
FIRST_ORDER_ONLY = {"hardsigmoid", "cdist"}  # (cdist: _cdist_backward has none either)


def test_every_differentiable_op_has_examples():
    """A new op needs sampler entries for its attribute names (or ``ranks``)."""
    covered = {c.op.key for c in CASES}
    assert [(op.key, op.inputs, op.attrs) for op in DIFFERENTIABLE
            if op.key not in covered | BY_HAND] == []


# --------------------------------------------------------------------------- values
def _sample(case: Case, rng: np.random.Generator) -> list:
    """Values for the inputs: distinct points of a grid inside the op's domain.

    The grid keeps away from 0 and +-1 (the kinks of abs, relu and clamp's bounds) and
    its points are 0.05 apart, so no two elements tie (max, maximum).
    """
    lo, hi = case.op.domain
    lo, hi = max(lo + 0.3, -2.0), min(hi - 0.3, 2.0)
    floats = [i for i in range(len(case.shapes)) if not case.is_bool(i)]
    need = sum(int(np.prod(case.shapes[i], dtype=int)) for i in floats)
    # (a narrow domain, binary_cross_entropy's (0, 1), gets a finer grid)
    step = 0.05 if (hi - lo) / 0.05 > 2 * need else (hi - lo) / (2 * need + 4)
    grid = np.arange(lo, hi, step)
    grid = grid[(np.abs(grid) >= 0.3) & (np.abs(np.abs(grid) - 1) >= 0.1)]
    assert need <= len(grid), "the domain grid is too small for this example"
    picks = iter(rng.choice(grid, need, replace=False) + rng.uniform(-0.01, 0.01, need))
    values = []
    for i, s in enumerate(case.shapes):
        n = int(np.prod(s, dtype=int))
        if case.is_bool(i):
            values.append((np.arange(n) % 2 == 0).reshape(s))
        else:
            values.append(np.array([next(picks) for _ in range(n)]).reshape(s))
    return values


# --------------------------------------------------------------------------- check_grads
def _leaves(arrays) -> list:
    return [symgrad.tensor(a, dtype=symgrad.float64, requires_grad=True) for a in arrays]


def _data(ts) -> list:
    return [t.detach().numpy().copy() for t in ts]


def vjp(f, inputs, cotangents, create_graph=False):
    """The gradient of ``<cotangents, f(inputs)>`` w.r.t. each input (zeros if unused)."""
    outs = f(*inputs)
    pairs = [(o, c) for o, c in zip(outs, cotangents) if o.requires_grad]
    if not pairs:
        return [symgrad.zeros(x.shape, dtype=symgrad.float64) for x in inputs]
    got = autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                        create_graph=create_graph, allow_unused=True)
    return [symgrad.zeros(x.shape, dtype=symgrad.float64) if g is None else g
            for g, x in zip(got, inputs)]


def _inner(f, arrays, vs) -> float:
    return sum(float(np.sum(v * o)) for v, o in zip(vs, _data(f(*_leaves(arrays)))))


def check_grads(f, inputs, order=2, rng=None, _level=1, _n=None) -> None:
    """Compare ``f``'s VJP with central differences, then recursively its VJP's VJP.

    ``f`` maps symgrad tensors to a tuple of tensors.  At order 2 the checked function is
    ``(x, v) -> VJP_x(v)``, built with ``create_graph=True``, so both the second
    derivatives and the VJP's linearity in ``v`` are checked (as HIPS autograd does).
    """
    rng = rng or np.random.default_rng(0)
    inputs = [np.asarray(x, dtype=np.float64) for x in inputs]
    outs = _data(f(*_leaves(inputs)))
    vs = [rng.standard_normal(o.shape) for o in outs]
    got = [g.detach().numpy() for g in vjp(f, _leaves(inputs), _leaves(vs))]
    for i, x in enumerate(inputs):
        want = np.zeros(x.shape)
        for k in np.ndindex(x.shape):
            up = [a.copy() for a in inputs]
            down = [a.copy() for a in inputs]
            up[i][k] += EPS
            down[i][k] -= EPS
            want[k] = (_inner(f, up, vs) - _inner(f, down, vs)) / (2 * EPS)
        what = "VJP" if _level == 1 else "VJP of the VJP (create_graph=True)" if (
            _level == 2) else f"VJP at level {_level}"
        arg = f"input {i}" if _n is None or i < _n else f"cotangent {i - _n}"
        np.testing.assert_allclose(got[i], want, rtol=RTOL, atol=ATOL, err_msg=(
            f"{what} w.r.t. {arg} disagrees with finite differences"))
    if order > 1:
        n = len(inputs)

        def vjp_of_f(*ts):
            return tuple(vjp(f, list(ts[:n]), list(ts[n:]), create_graph=True))

        check_grads(vjp_of_f, inputs + vs, order - 1, rng, _level + 1, _n or n)


# --------------------------------------------------------------------------- SymPy
def evaluate(exprs, point) -> np.ndarray:
    """Float64 values of an object array of expressions at ``point`` (symbol -> number)."""
    subs = {k: sympy.Float(float(v), 30) for k, v in point.items()}
    exprs = np.asarray(exprs, dtype=object)
    flat = [float(sympy.sympify(e).xreplace(subs).evalf(20)) for e in exprs.ravel()]
    return np.array(flat).reshape(exprs.shape)


# --------------------------------------------------------------------------- the test
def _sympy_check(case: Case, values: list, rng: np.random.Generator) -> None:
    """First derivatives and Hessian-vector products against ``sympy.diff``."""
    op = case.op
    diff_ix = [i for i in range(len(values)) if case.differentiable(i)]
    xs = {i: leaf_symbols(f"x{i}", np.shape(values[i])) for i in diff_ix}
    args = [xs.get(i, values[i]) for i in range(len(values))]
    out = sym_forward(op, args, case.attrs)
    point = {s: v for i in diff_ix for s, v in zip(xs[i].ravel(), values[i].ravel())}
    v = rng.standard_normal(out.shape)
    loss = sum((sympy.Float(float(c), 30) * e for c, e in zip(np.ravel(v), np.ravel(out))),
               sympy.S.Zero)
    first = {i: np.array([sympy.diff(loss, s) for s in xs[i].ravel()], dtype=object)
             for i in diff_ix}

    # Numeric: the same VJP, and its VJP with cotangents u (a Hessian-vector product).
    leaves = _leaves(values)
    v_t = _leaves([v])[0]
    f_args = [leaves[i] if i in xs else values[i] for i in range(len(values))]
    f_args = [symgrad.tensor(a) if isinstance(a, np.ndarray) else a for a in f_args]
    y = _call(case, f_args)
    grads = autograd_grad(y, [leaves[i] for i in diff_ix], v_t, create_graph=True,
                          allow_unused=True)
    for i, g in zip(diff_ix, grads):
        got = np.zeros(values[i].shape) if g is None else g.detach().numpy()
        want = evaluate(first[i], point).reshape(values[i].shape)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10, err_msg=(
            f"VJP w.r.t. input {i} disagrees with sympy.diff"))

    if not case.sympy_second_order or case.op.key in FIRST_ORDER_ONLY:
        return
    # Second order: d/dx_j sum_i <u_i, dL/dx_i> = (H u)_j and d/dv_k of it = (J u)_k are
    # the derivatives of dL/dx_j and of the output along the line x + t*u at t = 0, so
    # SymPy differentiates in one symbol expressions whose other symbols are numbers.
    us = {i: rng.standard_normal(values[i].shape) for i in diff_ix}
    t = sympy.Symbol("t", real=True)
    line = {s: sympy.Float(float(point[s]), 30) + t * sympy.Float(float(u), 30)
            for i in diff_ix for s, u in zip(xs[i].ravel(), us[i].ravel())}

    def along_line(exprs):
        flat = [sympy.diff(sympy.sympify(e).xreplace(line), t) for e in np.ravel(exprs)]
        return evaluate(np.array(flat, dtype=object), {t: 0.0}).reshape(np.shape(exprs))

    wants = [along_line(first[i]).reshape(values[i].shape) for i in diff_ix]
    wants.append(along_line(out))
    wrt = [leaves[i] for i in diff_ix] + [v_t]
    pairs = [(g, us[i]) for i, g in zip(diff_ix, grads) if g is not None and g.requires_grad]
    if pairs:
        second = autograd_grad([g for g, _ in pairs], wrt, [_leaves([u])[0] for _, u in pairs],
                               allow_unused=True)
    else:
        second = [None] * len(wrt)
    for k, (g, want) in enumerate(zip(second, wants)):
        got = np.zeros(want.shape) if g is None else g.detach().numpy()
        name = "the cotangent" if k == len(diff_ix) else f"input {diff_ix[k]}"
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10, err_msg=(
            f"second-order VJP (create_graph=True) w.r.t. {name} disagrees with sympy.diff"))


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_vjp(case: Case) -> None:
    """The op's VJP to second order, against finite differences and against SymPy."""
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    values = _sample(case, rng)
    diff_ix = [i for i in range(len(values)) if case.differentiable(i)]

    def f(*ts):
        args = list(values)
        for i, t in zip(diff_ix, ts):
            args[i] = t
        args = [symgrad.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        return (_call(case, args),)

    failures = []
    try:
        check_grads(f, [values[i] for i in diff_ix],
                    order=1 if case.op.key in FIRST_ORDER_ONLY else 2, rng=rng)
    except Exception as e:  # noqa: BLE001 - report both checks' outcomes together
        failures.append(f"finite differences: {type(e).__name__}: {e}")
    try:
        if case.op.key not in NO_SYMPY:
            _sympy_check(case, values, rng)
    except Exception as e:  # noqa: BLE001
        failures.append(f"sympy: {type(e).__name__}: {e}")
    assert not failures, "\n\n".join(failures)
