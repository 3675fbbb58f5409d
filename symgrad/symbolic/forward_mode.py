"""Forward mode of an expression at once: what ``symgrad diff --mode forward`` shows.

:func:`forward_derivatives` gives the tangent program (:mod:`~symgrad.symbolic.tangents`),
the output's tangent in closed form (``ḟ`` in terms of the inputs and the seeds ``ẋ``),
and at a point the directional derivatives ``J v`` by forward mode, one per direction
(by default one per input element: the Jacobian's columns), each checked against
reverse mode (``⟨∇f, v⟩``, or the reverse-mode Jacobian times ``v`` for a vector
output).  The output may have any shape.

With vectors and matrices it also gives the matrix forms, true for every size: the
Jacobian-vector product ``J v`` (``ḟ = Ȧ @ x + A @ ẋ``) beside the vector-Jacobian
product ``Jᵀ u`` (``x̄ = A.T @ f̄``), and each input's Jacobian (``diag(cos(x))``).  The
directional derivatives in matrix form follow each function's own rule in the matrix
algebra (:mod:`~symgrad.symbolic.hessians`), the reverse ones reverse mode seeded with
``f̄`` (:func:`~symgrad.symbolic.vectors.matrix_gradient`).

Examples
--------
>>> d = forward_derivatives("sin(x*y)", at={"x": 1, "y": 2})
>>> d.tangent
(x*ẏ + ẋ*y)*cos(x*y)
>>> [round(float(c), 4) for c in d.columns], d.agree
([-0.8323, -0.4161], True)
>>> forward_derivatives("A @ x", at={"A": [[1, 2], [3, 4]], "x": [1, 1]}).jvp
'Ȧ @ x + A @ ẋ'
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..autograd.functional import jacobian as reverse_jacobian
from ..ops import tables as T
from . import matrix as M
from .budget import check_expression
from .differentiation import chosen_variables
from .expression import Expression, parse
from .hessians import _V, _coefficient, _directional
from .matrix import NoVectorForm
from .matrix_forms import canonical, tidy, to_text
from .program import BAR
from .shapes import placeholder, resolve_shapes
from .tangents import TangentProgram, dotted
from .vectors import _named, matrix_forward, matrix_gradient

__all__ = ["forward_derivatives", "ForwardDerivatives", "jacobian_form",
           "jacobian_expression", "jvp_form", "vjp_forms"]


class ForwardDerivatives:
    """The result of :func:`forward_derivatives`.

    Attributes
    ----------
    expression : Expression
    wrt : list of str
        The inputs given a tangent.
    at : dict
        The point (possibly partial); ``complete`` says whether it gives every input.
    program : TangentProgram
    tangent : SymPy expression or Matrix
        The output's tangent ``ḟ`` in terms of the inputs and the seeds.
    directions : list of dict
        Input name -> tangent, one dict per direction.
    columns : list of numpy arrays or None
        ``J v`` by forward mode at the point, one per direction.
    reverse : list of numpy arrays or None
        The same by reverse mode; ``agrees`` per direction, ``agree`` for all.
    value : numpy array or None
        The output's value at the point.
    jvp, vjp, jacobians
        Matrix forms (text), where the inputs are vectors or matrices: ``J v``, ``Jᵀ u``
        per input, each input's Jacobian; ``None`` or ``{}`` without; ``no_form`` says why.
    """

    def __init__(self, expression, wrt, at, shapes, labels, program) -> None:
        self.expression = expression
        self.wrt = wrt
        self.at = at
        self.shapes = shapes
        self.labels = labels
        self.complete = all(v in at for v in expression.variables)
        self.program: TangentProgram = program
        self._tangent = None
        self._tidy = ("auto", 10.0)  # (how the closed form is tidied, when asked for)
        self.directions: list = []
        self.columns = self.reverse = self.agrees = self.value = None
        self.jvp: str | None = None
        self.vjp: dict = {}
        self.jacobians: dict = {}
        self.no_form: str | None = None

    @property
    def agree(self) -> bool | None:
        """Whether forward and reverse mode agree in every direction (None without a
        point)."""
        return None if self.agrees is None else all(self.agrees)

    @property
    def tangent(self):
        """The output's tangent in closed form (built on first use: with vectors the
        matrix forms are what is shown, and the closed form over the elements costs)."""
        if self._tangent is None:
            self._tangent = self.program.closed_form(*self._tidy)
        return self._tangent

    @property
    def shaped(self) -> bool:
        """Whether some input is a vector or a matrix."""
        return any(np.ndim(self.shapes[k]) for k in self.expression.variables)

    def jacobian_matrix(self, simplify: str = "auto", timeout: float = 10.0):
        """The Jacobian over the inputs' elements (SymPy Matrix: one row per output
        element, one column per input element, inputs in :attr:`wrt` order)."""
        return self.program.jacobian_matrix(simplify, timeout)


def _basis(names: Sequence[str], shapes: Mapping) -> list:
    """One direction per input element: the standard basis (the Jacobian's columns)."""
    out = []
    for k in names:
        shape = np.shape(shapes[k])
        for ix in np.ndindex(*shape):
            e = np.zeros(shape)
            e[ix] = 1.0
            out.append({n: (e if n == k else np.zeros(np.shape(shapes[n]))) for n in names})
    return out


def forward_derivatives(expr: str | Expression, wrt: Sequence[str] | None = None,
                        at: Mapping | None = None, direction: Mapping | None = None,
                        timeout: float = 10.0, simplify: str = "auto",
                        shapes: Mapping | None = None) -> ForwardDerivatives:
    """Forward mode of ``expr``: tangent program, closed form, directional derivatives.

    Parameters
    ----------
    expr : str or Expression
        Any expression (its value may be a vector or a matrix).
    wrt : sequence of str, optional
        The inputs given a tangent (default: all); the others are held fixed.
    at : mapping, optional
        The point (and the shapes of vectors and matrices).
    direction : mapping, optional
        Input name -> its tangent (a number, a list); missing inputs 0.  Default: one
        direction per input element (the Jacobian's columns).
    timeout, simplify, shapes
        As for :func:`~symgrad.symbolic.differentiation.derivatives`.

    Returns
    -------
    ForwardDerivatives

    Raises
    ------
    ValueError
        An input in ``wrt`` or ``direction`` the expression does not have, a direction
        whose shape does not fit its input.

    Examples
    --------
    >>> d = forward_derivatives("x**2 * y", at={"x": 3, "y": 2}, direction={"x": 1})
    >>> print(d.program)
    v1 = x**2               # PowBackward0
    v̇1 = 2*x·ẋ
    v2 = v1*y               # MulBackward0
    v̇2 = y·v̇1 + v1·ẏ
    >>> d.columns[0].item(), d.agree
    (12.0, True)
    """
    f = expr if isinstance(expr, Expression) else parse(expr)
    at = dict(at or {})
    names = chosen_variables(f, wrt)
    if not f.variables:
        raise ValueError("the expression has no variables: its tangent is 0")
    sized, labels = resolve_shapes(shapes)
    check_expression(f, sized, at, names)  # (before any work)
    values = f.shape_values({**{k: placeholder(s) for k, s in sized.items() if k not in at},
                             **at})
    labels = {k: v for k, v in labels.items() if k not in at}
    complete = all(v in at for v in f.variables)
    if complete:
        bad = f.domain_error(**at)
        if bad is not None:
            raise ValueError(f"not defined at the point: {bad.pretty()}")
    program = f.tangent_program(names, **values)
    d = ForwardDerivatives(f, names, at, values, labels, program)
    d._tidy = (simplify, timeout)
    if direction is not None:
        d.directions = [_direction(direction, names, values)]
    else:
        d.directions = _basis(names, values)
    if complete:
        d.value = np.asarray(f.evaluate(**at).detach().numpy(), dtype=np.float64)
        d.columns = [program.directional(at, v) for v in d.directions]
        d.reverse = _reverse(f, names, at, d.directions)
        d.agrees = [bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))
                    for a, b in zip(d.columns, d.reverse)]
    if d.shaped:
        try:
            d.jvp = jvp_form(f, names, values, labels)
            d.vjp = vjp_forms(f, names, values, labels)
        except NoVectorForm as err:
            d.no_form = str(err)
        for n in names:
            try:
                d.jacobians[n] = jacobian_form(f, n, values, labels)
            except NoVectorForm:
                d.jacobians[n] = None
    return d


def _direction(direction: Mapping, names: list, values: Mapping) -> dict:
    unknown = [k for k in direction if k not in names]
    if unknown:
        raise ValueError(f"direction for {', '.join(unknown)}: not an input differentiated "
                         f"against (inputs: {', '.join(names)})")
    out = {}
    for k in names:
        shape = np.shape(values[k])
        v = np.asarray(direction.get(k, 0.0), dtype=np.float64)
        if v.shape not in (shape, ()):
            raise ValueError(f"direction for {k} has shape {list(v.shape)}; {k} has shape "
                             f"{list(shape)}")
        out[k] = np.broadcast_to(v, shape).copy()
    return out


def _reverse(f: Expression, names: list, at: dict, directions: list) -> list:
    """``J v`` for each direction by reverse mode: the reverse-mode Jacobian (one
    backward pass per output element) times ``v``."""
    leaves = f.leaves(**at)
    fixed = {k: t for k, t in leaves.items() if k not in names}

    def func(*xs):
        return f.evaluate({**fixed, **dict(zip(names, xs))})
    out_shape = np.shape(f.evaluate(**at).detach().numpy())
    blocks = reverse_jacobian(func, tuple(leaves[n] for n in names))
    if not isinstance(blocks, tuple):
        blocks = (blocks,)
    n_out = int(np.prod(out_shape)) if out_shape else 1
    jac = np.concatenate([np.asarray(b.detach().numpy(), dtype=np.float64).reshape(n_out, -1)
                          for b in blocks], axis=1)
    return [(jac @ np.concatenate([np.ravel(v[n]) for n in names])).reshape(out_shape)
            for v in directions]


def _forward_root(f: Expression, values: Mapping, labels: Mapping | None):
    t, names = _named(f, values)
    if t.grad_fn is None:
        raise NoVectorForm("the expression is constant")
    order, vals, leaves, root = matrix_forward(t, names, labels)
    return t, names, vals[root], leaves


def jvp_form(f: Expression, wrt: Sequence[str], values: Mapping,
             labels: Mapping | None = None) -> str:
    """``J v`` in matrix form: the output's tangent in terms of the inputs' tangents
    (``ẋ``), for every size.

    Examples
    --------
    >>> jvp_form(parse("sin(x)"), ["x"], {"x": [1, 2]})
    'ẋ * cos(x)'
    """
    try:
        t, names, e, leaves = _forward_root(f, values, labels)
        dots = {k: M.sym(dotted(k), leaves[k].shape) for k in wrt if k in leaves}
        texts = []
        try:
            d = M.add(*(_directional(e, k, v, {}) for k, v in dots.items()))
            texts += [to_text(tidy(d)), to_text(tidy(canonical(d)))]
        except NoVectorForm:
            if e.rank:
                raise
        if e.rank == 0:  # (a scalar: also the gradients paired with the tangents)
            texts.append(to_text(tidy(M.add(*(_pair(tidy(matrix_gradient(
                t, k, names, labels)), v) for k, v in dots.items())))))
        return min(texts, key=len)
    except (NoVectorForm, ValueError):
        raise
    except Exception as err:  # noqa: BLE001 - a form the algebra cannot follow
        raise NoVectorForm(f"a step the matrix algebra cannot follow ({err})") from None


def vjp_forms(f: Expression, wrt: Sequence[str], values: Mapping,
              labels: Mapping | None = None) -> dict:
    """``Jᵀ u`` in matrix form for each input: reverse mode seeded with the output's
    cotangent ``f̄`` (``x̄ = A.T @ f̄``).

    Examples
    --------
    >>> vjp_forms(parse("A @ x"), ["x", "A"], {"A": [[1, 2], [3, 4]], "x": [1, 1]})
    {'x': 'A.T @ f̄', 'A': 'outer(f̄, x)'}
    """
    try:
        t, names, e, leaves = _forward_root(f, values, labels)
        seed = M.sym("f" + BAR, e.shape)
        return {k: to_text(tidy(matrix_gradient(t, k, names, labels, seed=seed)))
                for k in wrt}
    except (NoVectorForm, ValueError):
        raise
    except Exception as err:  # noqa: BLE001 - a form the algebra cannot follow
        raise NoVectorForm(f"a step the matrix algebra cannot follow ({err})") from None


def jacobian_form(f: Expression, var: str, values: Mapping,
                  labels: Mapping | None = None) -> str:
    """The Jacobian ``∂f/∂var`` in matrix form (``diag(cos(x))``, ``A``), for a vector or
    scalar output and a vector or scalar ``var`` (a matrix's has more than two
    dimensions: :class:`~symgrad.symbolic.matrix.NoVectorForm`).

    Examples
    --------
    >>> jacobian_form(parse("sin(x)"), "x", {"x": [1, 2]})
    'diag(cos(x))'
    >>> jacobian_form(parse("tanh(W @ x)"), "x", {"W": [[1, 2], [3, 4]], "x": [1, 1]})
    'diag(1 - tanh(W @ x) ** 2) @ W'
    """
    return to_text(jacobian_expression(f, var, values, labels), identity="I")


def jacobian_expression(f: Expression, var: str, values: Mapping,
                        labels: Mapping | None = None) -> M.Mx:
    """:func:`jacobian_form` as a tidied matrix expression."""
    try:
        t, names, e, leaves = _forward_root(f, values, labels)
        if var not in leaves:
            return M.num(0)
        leaf = leaves[var]
        if e.rank == 0:  # (a row: the gradient, as a column here)
            return tidy(matrix_gradient(t, var, names, labels))
        if leaf.rank == 0:  # (a column: the derivative in the direction 1)
            return tidy(_directional(e, var, M.num(1), {}))
        if e.rank > 1 or leaf.rank > 1:
            raise NoVectorForm("a Jacobian with a matrix has more than two dimensions")
        v = M.sym(_V, leaf.shape)
        d = _directional(e, var, v, {})
        if M._is_num(d, 0):
            return M.num(0)
        try:  # (as the rules wrote it first: diag(1 - tanh(u) ** 2) @ W, not expanded)
            return tidy(_read_off(d, v))
        except NoVectorForm:
            try:
                return tidy(_read_off(canonical(d), v))
            except NoVectorForm:
                raise NoVectorForm("the Jacobian has no matrix form here") from None
    except (NoVectorForm, ValueError):
        raise
    except Exception as err:  # noqa: BLE001 - a form the algebra cannot follow
        raise NoVectorForm(f"a step the matrix algebra cannot follow ({err})") from None


def _read_off(d, v):
    """``J`` with ``d = J @ v``, term by term."""
    terms = d.args if d.kind == "add" else (d,)
    return M.add(*(_coefficient(t, v) for t in terms))


def _pair(g, v):
    """``⟨g, v⟩``: ``g * v`` for scalars, ``dot(g, v)`` for vectors, ``sum(g * v)``."""
    if v.rank == 0 or g.rank == 0 and M._is_num(g, 0):
        return M.mul(g, v)
    if v.rank == 1:
        return M.mm(g, v)
    return M.fn(M.name_of(T.ROLES.total), M.mul(g, v), shape=())
