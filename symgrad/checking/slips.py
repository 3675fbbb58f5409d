"""Slips of hand-derived gradients of neural-network expressions, each named by the one
rewrite of the claim's own text that makes it right.

A claim in the expression language is rewritten at one place (or at every place of one
kind) and evaluated where the true gradient is known; a rewrite that gives the true
gradient at every such point names the slip in a teacher's words:

* a **missing transpose** (``A @ y`` for ``A.T @ y``: a gradient passes back through a
  matrix product as its transpose), or an extra one, or the chain rule's ``A.T @`` left
  out;
* the **sign inside a sigmoid** (``sigmoid(-x)`` for ``sigmoid(x)``);
* a **missing factor of sigmoid's derivative** ``sigmoid(u)*(1 - sigmoid(u))`` (the claim
  has ``sigmoid(u)`` or ``1 - sigmoid(u)`` alone), or an **extra factor** (sigmoid's
  derivative once too often);
* cross-entropy's gradient written **as if sum(y) = 1** (``softmax(z) - y`` for
  ``softmax(z)*sum(y) - y``), or a sum of log-probabilities without its ``numel(z)``;
* an elementwise factor (sigmoid's derivative, say) on the **wrong side of a matrix
  product** (``(W.T @ y) * s`` for ``W.T @ (y * s)``; ``@`` and ``*`` bind equally and
  group from the left), or ``@`` where ``*`` is meant, or the other way; a sum that
  belongs inside a product (``W.T @ W @ x - y`` for ``W.T @ (W @ x - y)``);
* tanh's derivative written ``1 - tanh(u)`` (or left out); softmax's Jacobian by its
  diagonal alone; a missing factor of one term (``2``, a scalar variable); a ``+`` for a
  ``-``; a missing square; the power rule's exponent off by one or two, or applied to an
  exponential (``x*2**(x - 1)``); ``exp(z)`` for ``softmax(z)``; a missing ``1/norm(v)``
  or ``norm(v)``; the transposed twin of a quadratic form's gradient (``A @ x`` for
  ``A @ x + A.T @ x``).

Words only: the verdict never rests on them (it comes from the numbers and the proofs).
Bounded: at most :data:`MAX_REWRITES` rewrites of a claim of at most :data:`MAX_NODES`
nodes, each evaluated at up to three points, stopping at the first that fails.

Examples
--------
>>> import numpy as np
>>> from symgrad import parse
>>> from symgrad.checking.sampling import Claim
>>> f = parse("log(sigmoid(x))")
>>> point = {"x": np.float64(0.5)}
>>> true = np.float64(f.gradient(**point)["x"])
>>> named_slip(f, Claim("1 - sigmoid(-x)", ["x"]), "x", [(None, true, None, point)], {},
...            1e-6, 1e-9)
'sign inside sigmoid: the claim has sigmoid(-x) where the true gradient has sigmoid(x) \
(sigmoid(-u) = 1 - sigmoid(u), not sigmoid(u))'
"""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from itertools import islice

import numpy as np

from .. import ops
from ..autograd import no_grad
from ..symbolic.expression import Expression
from ..symbolic.parser import parse as parse_text
from ..symbolic.syntax import BinOp, Call, Name, Neg, Num, Transpose, to_text
from .sampling import close, fit, random_point
from .sizes import size_classes
from .slips_more import EARLY_KINDS, MORE_KINDS, NUMEL_KINDS, RATIO_KINDS, REGION_KINDS
from .slip_trees import (_at, _call, _children, _context, _is, _left_grouped, _negated,
                         _one_minus, _put, _sites, _spine, _term, _terms, _text,
                         _with_children)

__all__ = ["MAX_REWRITES", "MAX_NODES", "KINDS", "NUMEL_KINDS", "REGION_KINDS", "RATIO_KINDS",
           "named_slip", "missing_vector_term"]

#: Rewrites tried per claim (each kind at most 20 of them).
MAX_REWRITES = 640
#: Claims with more nodes than this are not rewritten.
MAX_NODES = 200
_PER_KIND = 20
_PRODUCTS = ("*", "@")
_MAX_OTHER = 8  # (rewrites right at the points' sizes but not at others: at most these)
_MAX_CHAIN = 5  # (operands of a chain of * and @ regrouped: 14 groupings at 5)


def named_slip(f: Expression, claim, name: str, evidence: list, shapes: dict,
               rtol: float, atol: float, base: dict | None = None,
               kinds: tuple | None = None) -> str | None:
    """Words for the slip that one rewrite of the claim corrects, or None.

    Parameters
    ----------
    f : Expression
        The function.
    claim : sampling.Claim
        The claimed gradient of ``name`` (only a claim given as text is rewritten).
    evidence : list
        ``(claimed, true, all true gradients, point)`` per point checked; the first
        three points are used.  Empty (a claim that cannot be evaluated at all): the
        points are ``base`` and random ones.
    shapes : dict
        Variable -> shape.
    rtol, atol : float
        The check's tolerance.
    base : dict, optional
        A point to use first when ``evidence`` is empty.
    kinds : tuple, optional
        The kinds of rewrite tried (default: every kind, this module's first).
    """
    expr = claim.expression
    if expr is None or _size(expr.tree) > MAX_NODES:
        return None
    try:
        points = [(ev[3], np.asarray(ev[1], dtype=np.float64)) for ev in evidence[:3]]
        if not points:
            points = _points(f, name, shapes, base)
        other: list = []  # (a point at other sizes, made when a rewrite first passes)
        for tree, words in islice(_rewrites(expr, f, shapes, kinds), MAX_REWRITES):
            if points and _gives(tree, points, rtol, atol):
                if not other:
                    other.append(_other_sizes(f, name, points[0][0]))
                if other[0] is None or _gives(tree, other[0], rtol, atol):
                    return words
                if len(other) > _MAX_OTHER:
                    return None  # (rewrites right at one size only: no more tried)
                other.append(None)
    except Exception:  # noqa: BLE001 - words are optional: no slip named
        return None
    return None


def _other_sizes(f: Expression, name: str, point: dict) -> list | None:
    """``[(point, true gradient)]`` at sizes each one larger than ``point``'s (a rewrite
    right at one size only, as ``2`` for ``numel(y)`` at 2, is no slip), or None where
    f has no sizes to change."""
    try:
        classes = size_classes(f, point)
        if not classes or not any(classes.values()):
            return None
        k = 1 + max(i for cs in classes.values() for i in cs)
        base = [0] * k
        for var, cs in classes.items():
            for i, size in zip(cs, np.shape(point[var])):
                base[i] = size
        shapes = {var: tuple(base[i] + 1 for i in cs) for var, cs in classes.items()}
        p = random_point(np.random.default_rng(3), shapes, 2)
        true = np.asarray(f.gradient(**p)[name], dtype=np.float64)
    except Exception:  # noqa: BLE001 - no other size: the points decide
        return None
    return [(p, true)] if np.all(np.isfinite(true)) else None


def _points(f: Expression, name: str, shapes: dict, base: dict | None) -> list:
    """Up to three points with the true gradient of ``name``: ``base``, then random."""
    rng = np.random.default_rng(2)
    out = []
    for point in [base] * (base is not None) + [random_point(rng, shapes, 1)
                                                for _ in range(4)]:
        try:
            true = np.asarray(f.gradient(**point)[name], dtype=np.float64)
        except Exception:  # noqa: BLE001 - a point outside the domain: the next
            continue
        if np.all(np.isfinite(true)):
            out.append((point, true))
        if len(out) == 3:
            break
    return out


def _gives(tree, points: list, rtol: float, atol: float) -> bool:
    """Whether the claim ``tree`` is the true gradient at every point."""
    expr = Expression(to_text(tree), tree)
    for point, true in points:
        try:
            with no_grad(), np.errstate(all="ignore"):
                got = expr.evaluate(**{v: point[v] for v in expr.variables})
            got = fit(np.asarray(got.detach().numpy(), dtype=np.float64), true.shape)
        except Exception:  # noqa: BLE001 - a rewrite that does not evaluate is no fix
            return False
        if got is None or not np.all(close(got, true, rtol, atol)):
            return False
    return True


# -- the tree: sites (path, node) and one-site replacement --------------------------------


def _size(tree) -> int:
    return sum(1 for _ in islice(_sites(tree), MAX_NODES + 1))


# -- the rewrites, one kind after another ----------------------------------------------
def _rewrites(expr: Expression, f: Expression, shapes: dict, kinds: tuple | None = None):
    tree = expr.tree
    sites = list(_sites(tree))
    for kind in KINDS if kinds is None else kinds:
        yield from islice(kind(tree, sites, f, shapes, expr.text), _PER_KIND)


def _transposes(tree, sites, f, shapes, text):
    """The whole claim transposed (of the wrong shape: ``outer(x, u)`` for ``outer(u,
    x)``); a matrix variable transposed (``A`` -> ``A.T``), or a transpose dropped."""
    yield Transpose(tree), ("transposed: the claimed gradient is the transpose of the true "
                            "one")
    for path, node, parent in sites:
        if isinstance(node, Name) and len(shapes.get(node.name, ())) == 2 and not \
                isinstance(parent, Transpose):
            new, words = Transpose(node), "missing transpose"
        elif isinstance(node, Transpose) and isinstance(node.operand, Name):
            new, words = node.operand, "extra transpose"
        else:
            continue
        fixed = _put(tree, path, new)
        where = _context(tree, path)
        yield fixed, (f"{words}: the claim has {_text(_at(tree, where))} where the true "
                      f"gradient has {_text(_at(fixed, where))} (a gradient passes back "
                      "through a matrix product as its transpose)")


def _back_products(tree, sites, f, shapes, text):
    """The claim multiplied by ``A.T @`` (or ``@ A``) for a matrix product ``A @ u`` (or
    ``u @ A``) of f: the chain rule's last step left out."""
    seen = set()
    for _, node, _ in _sites(f.tree):
        if not (isinstance(node, BinOp) and node.op == "@"):
            continue
        for side, m in (("left", node.left), ("right", node.right)):
            if not (isinstance(m, Name) and len(shapes.get(m.name, ())) == 2) or (
                    side, m.name) in seen:
                continue
            seen.add((side, m.name))
            new = BinOp("@", Transpose(m), tree) if side == "left" else \
                BinOp("@", tree, Transpose(m))
            step = f"{m.name}.T @" if side == "left" else f"@ {m.name}.T"
            yield new, (f"missing {step} from the chain rule through {_text(node)}: the true "
                        f"gradient is {_text(new)}")


def _sigmoid_signs(tree, sites, f, shapes, text):
    """The argument of one sigmoid negated, then of every sigmoid."""
    calls = [(path, node) for path, node, _ in sites if _is(node, ops.SIGMOID)]
    law = " (sigmoid(-u) = 1 - sigmoid(u), not sigmoid(u))"
    for path, node in calls:
        new = replace(node, args=(_negated(node.args[0]),))
        yield _put(tree, path, new), (f"sign inside sigmoid: the claim has {_text(node)} "
                                      f"where the true gradient has {_text(new)}" + law)
    if len(calls) > 1:
        yield _flip_all(tree), ("sign inside sigmoid: every sigmoid(u) of the claim should "
                                "be sigmoid(-u), and the other way round" + law)


def _flip_all(node):
    """``node`` with the argument of every sigmoid negated (inner ones too)."""
    node = _with_children(node, tuple(_flip_all(k) for k in _children(node)))
    return replace(node, args=(_negated(node.args[0]),)) if _is(node, ops.SIGMOID) else node


def _sigmoid_factors(tree, sites, f, shapes, text):
    """``sigmoid(u)`` made ``sigmoid(u)*(1 - sigmoid(u))``; ``1 - sigmoid(u)`` too."""
    law = "sigmoid'(u) = sigmoid(u)*(1 - sigmoid(u))"
    for path, node, parent in sites:
        if _is(node, ops.SIGMOID) and not _one_minus(parent):
            lack = BinOp("-", Num(1), node)
            new = BinOp("*", node, lack)
        elif _one_minus(node):
            lack = node.right
            new = BinOp("*", node.right, node)
        else:
            continue
        term = _at(tree, _term(tree, path))
        where = f" in {_text(term)}" if term != node and sum(
            n == node for _, n, _ in sites) > 1 else ""
        yield _put(tree, path, new), (f"missing factor {_text(lack)} of sigmoid's "
                                      f"derivative: {law}, the claim has {_text(node)} "
                                      f"alone{where}")
        if _is(node, ops.SIGMOID):  # (sigmoid' left out: the chain rule through it)
            whole = BinOp("*", node, BinOp("-", Num(1), node))
            yield _put(tree, path, BinOp("*", node, whole)), (
                f"missing factor {_text(whole)} (sigmoid's derivative: {law}) on "
                f"{_text(node)}")


def _sums_of_targets(tree, sites, f, shapes, text):
    """``softmax(z)`` (or ``exp(z)/sum(exp(z))``) made ``softmax(z)*sum(y)`` for a vector
    variable ``y`` of f: cross-entropy's gradient when ``y`` need not sum to 1."""
    targets = [v for v in f.variables if len(shapes.get(v, ())) >= 1]
    for path, node, _ in sites:
        expanded = (isinstance(node, BinOp) and node.op == "/" and _is(node.right, ops.SUM)
                    and node.right.args[:1] == (node.left,) and _is(node.left, ops.EXP))
        if not (_is(node, ops.SOFTMAX) or expanded):
            continue
        for y in targets:
            new = BinOp("*", node, _call(ops.SUM, Name(y)))
            yield _put(tree, path, new), (
                f"assumes sum({y}) = 1: the true gradient has {_text(new)} where the claim "
                f"has {_text(node)}; the two agree only when the entries of {y} sum to 1 "
                "(a one-hot or probability vector)")
        for y in targets:  # (a sum of log-probabilities: a target of ones)
            new = BinOp("*", node, _call(ops.NUMEL, Name(y)))
            yield _put(tree, path, new), (
                f"missing factor numel({y}) on {_text(node)}: the true gradient has "
                f"{_text(new)} (a sum of numel({y}) log-probabilities, each contributing "
                f"{_text(node)})")


def _chain(node) -> list | None:
    """The operands and operators of a chain of ``*`` and ``@`` that mixes both, read
    left to right, or None."""
    if not (isinstance(node, BinOp) and node.op in _PRODUCTS):
        return None
    out: list = []

    def walk(n):
        if isinstance(n, BinOp) and n.op in _PRODUCTS:
            walk(n.left)
            out.append(n.op)
            walk(n.right)
        else:
            out.append(n)
    walk(node)
    ops_used = set(out[1::2])
    return out if ops_used == set(_PRODUCTS) and len(out) <= 2 * _MAX_CHAIN - 1 else None


def _groupings(items: list):
    """Every grouping of a chain ``[a, op, b, op, c, ...]`` into binary operations."""
    if len(items) == 1:
        yield items[0]
        return
    for i in range(1, len(items), 2):
        for left in _groupings(items[:i]):
            for right in _groupings(items[i + 1:]):
                yield BinOp(items[i], left, right)


def _shown(node, top: bool = True) -> str:
    """A product written with the parentheses that show its grouping (where ``@`` and
    ``*`` meet, and on the right of either); a sum or difference (``top``) with its
    products in parentheses."""
    if top and isinstance(node, BinOp) and node.op in ("+", "-"):  # (products bracketed)
        left, right = (f"({_shown(n, False)})" if isinstance(n, BinOp) and n.op != "**"
                       else _shown(n, False) for n in (node.left, node.right))
        return f"{left} {node.op} {right}"
    if not (isinstance(node, BinOp) and node.op in _PRODUCTS):
        return _text(node)
    left, right = _shown(node.left, False), _shown(node.right, False)
    if isinstance(node.left, BinOp) and (node.left.op in ("+", "-") or (
            node.left.op in _PRODUCTS and node.left.op != node.op)):
        left = f"({left})"
    if isinstance(node.right, (BinOp, Neg)) and not (isinstance(node.right, BinOp)
                                                    and node.right.op == "**"):
        right = f"({right})"
    return f"{left} {node.op} {right}"


def _regroupings(tree, sites, f, shapes, text):
    """A chain of ``*`` and ``@`` grouped otherwise."""
    for path, node, parent in sites:
        if isinstance(parent, BinOp) and parent.op in _PRODUCTS:
            continue  # (the whole chain only)
        items = _chain(node)
        if items is None:
            continue
        mine = _shown(node)
        bare = "".join(to_text(node).split()) in "".join(text.split())
        # (one split into two left-grouped sides first: the change a reader means)
        simple = [BinOp(items[i], _left_grouped(items[:i]), _left_grouped(items[i + 1:]))
                  for i in range(1, len(items), 2)]
        for new in dict.fromkeys([*simple, *_groupings(items)]):
            if new == node:
                continue
            inside = new.op == "@"  # (the true gradient's last step is the matrix product)
            factor = "sigmoid's derivative" if any(_is(n, ops.SIGMOID) for _, n, _ in
                                                    _sites(node)) else "the elementwise factor"
            yield _put(tree, path, new), (
                f"{factor} belongs {'inside' if inside else 'outside'} the matrix product: "
                f"the claim computes {mine}, the true gradient {_shown(new)}" +
                (" (@ and * bind equally and group from the left: the parentheses are "
                 "needed)" if bare else ""))


def _parentheses(tree, sites, f, shapes, text):
    """A sum or difference that belongs inside a product (``W.T @ W @ x - y`` for
    ``W.T @ (W @ x - y)``): the product's last factors and the other term bracketed."""
    for path, node, _ in sites:
        if not (isinstance(node, BinOp) and node.op in ("+", "-")):
            continue
        items = _spine(node.left)
        for i in range(1, len(items), 2):  # (items[:i] op items[i+1:] - b)
            inner = replace(node, left=_left_grouped(items[i + 1:]))
            new = BinOp(items[i], _left_grouped(items[:i]), inner)
            yield _put(tree, path, new), (
                f"missing parentheses: the claim computes {_shown(node)}, the true "
                f"gradient {_shown(new)} ({items[i]} binds tighter than {node.op})")


def _products_swapped(tree, sites, f, shapes, text):
    """One ``@`` made ``*`` or one ``*`` made ``@``."""
    for path, node, _ in sites:
        if not (isinstance(node, BinOp) and node.op in _PRODUCTS):
            continue
        new = replace(node, op="*" if node.op == "@" else "@")
        what = ("a matrix product where the true gradient multiplies elementwise"
                if node.op == "@" else
                "an elementwise product where the true gradient has a matrix product")
        yield _put(tree, path, new), (f"{what}: the claim has {_shown(node)} where the true "
                                      f"gradient has {_shown(new)}")


def _extra_factors(tree, sites, f, shapes, text):
    """One factor of an elementwise product left out (sigmoid's derivative once too
    often, say)."""
    for path, node, _ in sites:
        if not (isinstance(node, BinOp) and node.op == "*"):
            continue
        for extra, rest in ((node.left, node.right), (node.right, node.left)):
            if isinstance(extra, Num):
                continue  # (a constant: the numbers name it)
            what = " (sigmoid's derivative)" if _is_sigmoid_derivative(extra) else ""
            below = _below(tree, path)  # (y of 1/(x*y): an extra factor 1/y)
            shown = f"1/{_text(extra)}" if below and isinstance(extra, (Name, Call)) else \
                f"1/({_text(extra)})" if below else _text(extra)
            yield _put(tree, path, rest), (f"extra factor {shown}{what}: the claim "
                                           "is right without it")
    for path, node, _ in sites:  # (a division that should not be: x/norm(x) for x)
        if isinstance(node, BinOp) and node.op == "/" and not isinstance(node.right, Num):
            yield _put(tree, path, node.left), (
                f"extra factor 1/{_text(node.right)}: the claim is right without it")
    for path, node, _ in sites:  # (a square that should not be: tan(x)**2 for tan(x))
        if isinstance(node, BinOp) and node.op == "**" and node.right == Num(2):
            yield _put(tree, path, node.left), (
                f"extra factor {_text(node.left)}: the claim has {_text(node)} where the "
                f"true gradient has {_text(node.left)}")


def _below(tree, path: tuple) -> bool:
    """Whether the node at ``path`` is in a denominator (an odd number of them)."""
    below = False
    for i in range(len(path)):
        node = _at(tree, path[:i])
        if isinstance(node, BinOp) and node.op == "/" and path[i] == 1:
            below = not below
    return below


def _is_sigmoid_derivative(node) -> bool:
    """``sigmoid(u)*(1 - sigmoid(u))`` (either order)."""
    if not (isinstance(node, BinOp) and node.op == "*"):
        return False
    for s, o in ((node.left, node.right), (node.right, node.left)):
        if _is(s, ops.SIGMOID) and _one_minus(o) and o.right == s:
            return True
    return False


def _tanh_slips(tree, sites, f, shapes, text):
    """``1 - tanh(u)`` made ``1 - tanh(u)**2``; ``tanh(u)`` alone given the factor
    ``1 - tanh(u)**2`` (tanh's derivative left out)."""
    law = "tanh'(u) = 1 - tanh(u)**2"
    for path, node, parent in sites:
        if _one_minus(node, ops.TANH):
            new = replace(node, right=BinOp("**", node.right, Num(2)))
            yield _put(tree, path, new), (
                f"tanh's derivative is 1 - tanh(u)**2, not 1 - tanh(u): the claim has "
                f"{_text(node)} where the true gradient has {_text(new)}")
        elif _is(node, ops.TANH) and not (isinstance(parent, BinOp) and parent.op == "**"):
            lack = BinOp("-", Num(1), BinOp("**", node, Num(2)))
            yield _put(tree, path, BinOp("*", node, lack)), (
                f"missing factor {_text(lack)} (tanh's derivative: {law}) on {_text(node)}")


def _softmax_jacobian(tree, sites, f, shapes, text):
    """``softmax(z)*v`` (or ``softmax(z)*(1 - softmax(z))*v``, the Jacobian's diagonal
    only) made ``softmax(z)*(v - dot(v, softmax(z)))``."""
    for path, node, _ in sites:
        if not (isinstance(node, BinOp) and node.op == "*"):
            continue
        factors = _spine(node)
        if set(factors[1::2]) != {"*"}:
            continue
        soft = next((n for n in factors[::2] if _is(n, ops.SOFTMAX)), None)
        if soft is None:
            continue
        rest = [n for n in factors[::2] if n != soft and not (
            isinstance(n, BinOp) and n.op == "-" and isinstance(n.left, Num)
            and n.left.value == 1 and n.right == soft)]
        if not rest:
            continue
        v = rest[0]
        for n in rest[1:]:
            v = BinOp("*", v, n)
        new = BinOp("*", soft, BinOp("-", v, _call(ops.DOT, v, soft)))
        yield _put(tree, path, new), (
            f"softmax's Jacobian is diag(s) - outer(s, s) (s = {_text(soft)}), not its "
            f"diagonal alone: the claim has {_text(node)} where the true gradient has "
            f"{_text(new)}")


def _term_factors(tree, sites, f, shapes, text):
    """One term of a claim of several given a missing factor: a scalar variable of f,
    2 or 1/2."""
    terms = _terms(tree)
    if len(terms) < 2:
        return
    factors = [Name(v) for v in f.variables if not shapes.get(v)] + [Num(2)]
    for path, term in terms:
        for c in factors:
            new = _left_grouped([c, "*", *_spine(term)])  # (2*0.1*w, not 2*(0.1*w))
            yield _put(tree, path, new), (
                f"missing factor {_text(c)} in the term {_text(term)}: the true gradient "
                f"has {_text(new)} there")
        new = BinOp("/", term, Num(2))
        yield _put(tree, path, new), (f"extra factor 2 in the term {_text(term)}: the true "
                                      f"gradient has {_text(new)} there")


def _sign_flips(tree, sites, f, shapes, text):
    """One ``+`` made ``-`` or the other way round."""
    for path, node, _ in sites:
        if isinstance(node, BinOp) and node.op in ("+", "-"):
            new = replace(node, op="-" if node.op == "+" else "+")
            yield _put(tree, path, new), (f"wrong sign: the claim has {_text(node)} where "
                                          f"the true gradient has {_text(new)}")


def _squares(tree, sites, f, shapes, text):
    """A function's value or a sum squared (``1/cos(x)`` for ``1/cos(x)**2``)."""
    for path, node, parent in sites:
        if not (isinstance(node, Call) or isinstance(node, BinOp) and node.op in ("+", "-")):
            continue
        if isinstance(parent, BinOp) and parent.op == "**":
            continue
        new = BinOp("**", node, Num(2))
        yield _put(tree, path, new), (f"missing square: the claim has {_text(node)} where "
                                      f"the true gradient has {_text(new)}")


def _exponents(tree, sites, f, shapes, text):
    """The exponent of a power of a variable or a sum off by one or two, or not the one
    the power rule gives for a power of the same base in f (``x**1.5`` -> ``x**0.5`` for
    ``x**1.5``; ``x**(-1/3)`` -> ``x**(-2/3)`` for ``x**(1/3)``)."""
    powers: dict = {}
    for _, node, _ in _sites(f.tree):
        if isinstance(node, BinOp) and node.op == "**" and _constant(node.right) is not None:
            powers.setdefault(node.left, []).append(_constant(node.right) - 1)
    for path, node, parent in sites:
        orig = node
        if _is(node, ops.SQRT):  # (sqrt(u) as u**0.5: 1/(2*sqrt(x)) for x**(-3/2))
            node = BinOp("**", node.args[0], Num(0.5))
        if not (isinstance(node, BinOp) and node.op == "**"):
            continue
        n = _constant(node.right)
        if n is None or not (isinstance(node.left, Name) or isinstance(node.left, BinOp)
                             and node.left.op in ("+", "-")):
            continue  # (the power rule as applied to x**n or (2*x + 1)**3)
        steps = (n - 1, n + 1, n - 2, n + 2) if (2 * n) == int(2 * n) else ()
        for m in dict.fromkeys([*steps, *powers.get(node.left, ())]):
            if m in (0, 1, n):
                continue
            new = replace(node, right=_exponent(m))
            below = _below(tree, path)
            has, want = (_text(orig), _text(new))
            if below:  # (-3/x**2: the power rule speaks of x**(-2))
                has = f"1/{has} = {_text(replace(node, right=_exponent(-n)))}"
                want = f"1/{want} = {_text(replace(new, right=_exponent(-m)))}"
            elif orig is not node:
                has = f"{has} = {_text(node)}"
            yield _put(tree, path, new), (
                f"power rule: the claim has {has} where the true gradient has {want} "
                f"(d/du u**n = n*u**(n - 1): the exponent drops by one)")


def _constant(node):
    """The exact value of a constant exponent (``-2/3``, ``1.5``), or None."""
    if isinstance(node, Num):
        v = Fraction(node.value).limit_denominator(1000)
        return v if abs(float(v) - node.value) < 1e-12 else None
    if isinstance(node, Neg):
        v = _constant(node.operand)
        return None if v is None else -v
    if isinstance(node, BinOp) and node.op == "/":
        a, b = _constant(node.left), _constant(node.right)
        return None if a is None or not b else a / b
    return None


def _exponent(m):
    """The exponent node for the value ``m``: an integer, a decimal (``0.5``) when it has
    a short one, else a fraction as written (``-2/3``)."""
    m = Fraction(m)
    if m.denominator == 1 or m.denominator in (2, 4, 5, 8, 10, 20, 25, 50, 100):
        v = int(m) if m.denominator == 1 else float(m)
        return Num(v) if v >= 0 else Neg(Num(-v))
    top = Num(abs(m.numerator))
    return BinOp("/", top if m > 0 else Neg(top), Num(m.denominator))


def _transposed_terms(tree, sites, f, shapes, text):
    """The claim plus itself with one matrix transposed (``A @ x`` for ``A @ x + A.T @
    x``: a quadratic form's gradient has both)."""
    for path, node, parent in sites:
        if not (isinstance(node, Name) and len(shapes.get(node.name, ())) == 2) or \
                isinstance(parent, Transpose):
            continue
        other = _put(tree, path, Transpose(node))
        yield BinOp("+", tree, other), (
            f"missing term {_text(other)}: the true gradient has both {_text(tree)} and "
            f"{_text(other)} ({node.name} and {node.name}.T)")


def _exponentials(tree, sites, f, shapes, text):
    """``x*a**(x - 1)`` made ``a**x*log(a)`` (the power rule applied to an exponential);
    ``exp(z)`` of a vector made ``exp(z)/sum(exp(z))`` (softmax's normalisation)."""
    for path, node, _ in sites:
        if isinstance(node, BinOp) and node.op == "*":
            for n, p in ((node.left, node.right), (node.right, node.left)):
                if isinstance(p, BinOp) and p.op == "**" and isinstance(p.left, Num) and \
                        p.right == BinOp("-", n, Num(1)):
                    new = BinOp("*", BinOp("**", p.left, n), _call(ops.LOG, p.left))
                    yield _put(tree, path, new), (
                        f"the power rule applied to an exponential: d/du a**u = "
                        f"a**u*log(a), so the true gradient has {_text(new)} where the "
                        f"claim has {_text(node)} (the exponent is not constant)")
        elif _is(node, ops.EXP) and _vector(node.args[0], shapes):
            new = BinOp("/", node, _call(ops.SUM, node))
            yield _put(tree, path, new), (
                f"missing factor 1/sum({_text(node)}): the true gradient has {_text(new)} "
                f"(softmax) where the claim has {_text(node)}")


def _vector(node, shapes: dict) -> bool:
    return any(isinstance(n, Name) and len(shapes.get(n.name, ())) >= 1
               for _, n, _ in _sites(node))


def _norms(tree, sites, f, shapes, text):
    """The claim times ``norm(v)``, over it, or over ``2*norm(v)`` for a ``norm(v)`` of f
    (``2*x`` is the gradient of ``norm(x)**2``)."""
    seen = set()
    for _, node, _ in _sites(f.tree):
        if not _is(node, ops.NORM) or node in seen:
            continue
        seen.add(node)
        two = BinOp("*", Num(2), node)
        for new, c in ((BinOp("*", tree, node), node), (BinOp("/", tree, node),
                                                         BinOp("/", Num(1), node)),
                       (BinOp("/", tree, two), BinOp("/", Num(1), two))):
            yield new, (f"missing factor {_text(c)}: the true gradient is {_text(new)}" +
                        (f" ({text} is the gradient of {_text(node)}**2)"
                         if c == BinOp("/", Num(1), two) else ""))


def _logit_gradients(tree, sites, f, shapes, text):
    """A logit's gradient given for the probability: binary cross-entropy's ``p - y`` is
    the gradient with respect to ``z`` where ``p = sigmoid(z)``; with respect to ``p``
    it is divided by ``p*(1 - p)``."""
    logs = [n.args[0] for _, n, _ in _sites(f.tree) if _is(n, ops.LOG)]
    for p in dict.fromkeys(u for u in logs if isinstance(u, Name)):
        if not any(isinstance(u, BinOp) and u.op == "-" and isinstance(u.left, Num)
                   and u.left.value == 1 and u.right == p for u in logs):
            continue
        slope = BinOp("*", p, BinOp("-", Num(1), p))
        yield BinOp("/", tree, slope), (
            f"gradient with respect to the logit: the claim is d/dz where {p.name} = "
            f"sigmoid(z); with respect to {p.name} it is divided by {_text(slope)} "
            f"(sigmoid's derivative)")


#: Every kind of rewrite, in the order tried.
KINDS = (_transposes, _back_products, _sigmoid_signs, _sigmoid_factors, _tanh_slips,
         _sums_of_targets, _softmax_jacobian, _regroupings, _term_factors, _parentheses,
         _products_swapped, _extra_factors, _sign_flips, _squares) + EARLY_KINDS + (
         _exponents,
         _exponentials, _norms, _transposed_terms, _logit_gradients) + MORE_KINDS


def _vector_terms(tree) -> list:
    """The terms of a vector form, each product of a sum distributed (``A @ x`` and
    ``A.T @ x`` of ``(A + A.T) @ x``)."""
    out = []
    for _, t in _terms(tree):
        left, right = (_terms(t.left), _terms(t.right)) if isinstance(t, BinOp) and \
            t.op in ("*", "@") else ([], [])
        if len(left) > 1:
            out += [BinOp(t.op, n, t.right) for _, n in left]
        elif len(right) > 1:
            out += [BinOp(t.op, t.left, n) for _, n in right]
        else:
            out.append(t)
    return out


def missing_vector_term(f: Expression, claim, name: str, evidence: list, shapes: dict,
                         rtol: float, atol: float) -> str | None:
    """``missing term b*dot(a, x)``: the claim plus (or minus) one term of the true
    gradient's vector form is right (the product rule's second term of a vector that
    appears twice).  Bounded: the vector form's first 8 terms, two signs each."""
    if not evidence or getattr(claim, "expression", None) is None:
        return None
    try:
        text = f.vector_gradient(name, **evidence[0][3])
        terms = _vector_terms(parse_text(text))[:8]
    except Exception:  # noqa: BLE001 - no vector form: no term named
        return None
    if len(terms) < 2:
        return None

    def added(tree, sites, f, shapes, text):
        for t in terms:
            for op, sign in (("+", ""), ("-", "-")):
                yield BinOp(op, tree, t), (f"missing term {sign}{to_text(t)}: the true "
                                           f"gradient is {text_true}")

    text_true = text
    return named_slip(f, claim, name, evidence, shapes, rtol, atol, kinds=(added,))
