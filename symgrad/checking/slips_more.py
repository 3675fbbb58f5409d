"""More slips of hand-derived gradients, each named by one rewrite of the claim's text
(the kinds :mod:`~symgrad.checking.slips` tries after its own; same bounds, words only).

* a mean divided by the **size of the wrong tensor** (``1/numel(X)`` for ``1/numel(y)``);
* **relu's step** mistaken: ``relu(u)`` or ``sign(u)`` where the step ``(1 + sign(u))/2``
  belongs, relu's (or leaky ReLU's) **mask left out** of a vector, abs's ``sign(u)``
  left out (these also run where the claim is right on part of the domain only);
* the **chain rule's vector factor** left out of a scalar claim (``a`` of ``dot(a, x)``,
  ``x/norm(x)`` of ``norm(x)``), a **sum** that should not be (``sum(y)`` for ``y``) or
  that should (a scalar broadcast over a vector: ``sum(...)`` of its gradient);
* a **missing or extra term** of the claim's own sum (a variable of f left out, one term
  too many);
* a **wrong variable** in one place (``(w*x - y)*w`` for ``(w*x - y)*x``);
* the chain rule written **at the wrong argument** (``1 + x**2`` for ``1 + (2*x)**2`` of
  ``atan(2*x)``) or with the **inner derivative inside** the outer function
  (``exp(cos(x))`` for ``exp(sin(x))*cos(x)``);
* a missing factor ``det(A)`` (``det(A)*inverse(A).T``).

Examples
--------
>>> from symgrad.symbolic.parser import parse
>>> from symgrad import parse as parse_f
>>> f = parse_f("mean((X @ w - y)**2)")
>>> tree = parse("2*X.T @ (X @ w - y)/numel(X)")
>>> shapes = {"X": (2, 3), "w": (3,), "y": (2,)}
>>> for _, words in _numel_swaps(tree, None, f, shapes, ""):
...     print(words.split(" (")[0])
1/numel(X) where the true gradient has 1/numel(w)
1/numel(X) where the true gradient has 1/numel(y)
"""
from __future__ import annotations

from dataclasses import replace

from .. import ops
from ..symbolic import parser as P
from ..symbolic.expression import parse as parse_f
from ..symbolic.syntax import BinOp, Call, Name, Neg, Num, Transpose
from .slip_trees import _at, _call, _children, _is, _put, _sites, _term, _terms, _text

__all__ = ["MORE_KINDS", "REGION_KINDS", "NUMEL_KINDS", "EARLY_KINDS", "RATIO_KINDS"]


def _step(u):
    """relu's derivative at ``u``: ``(1 + sign(u))/2``."""
    return BinOp("/", BinOp("+", Num(1), _call(ops.SIGN, u)), Num(2))


def _leaky_step(u):
    """leaky ReLU's derivative at ``u`` (slope 0.01): ``0.505 + 0.495*sign(u)``."""
    return BinOp("+", Num(0.505), BinOp("*", Num(0.495), _call(ops.SIGN, u)))


def _f_calls(f, op) -> list:
    """The distinct calls of ``op`` in f, outermost first."""
    return list(dict.fromkeys(n for _, n, _ in _sites(f.tree) if _is(n, op)))


def _numel_swaps(tree, sites, f, shapes, text):
    """``numel(a)`` of the claim made ``numel(b)`` for another variable of f with a
    shape: the variables inside a ``mean`` of f first (what the mean averages)."""
    inside = [n.name for m in _f_calls(f, ops.MEAN) for _, n, _ in _sites(m)
              if isinstance(n, Name)]
    order = list(dict.fromkeys(inside + list(f.variables)))
    for path, node, _ in _sites(tree):
        if not (_is(node, ops.NUMEL) and isinstance(node.args[0], Name)):
            continue
        a = node.args[0].name
        for b in order:
            if b == a or not shapes.get(b):
                continue
            new = _call(ops.NUMEL, Name(b))
            yield _put(tree, path, new), (
                f"1/numel({a}) where the true gradient has 1/numel({b}) (a mean divides "
                f"by the number of terms it averages: numel({b}), not numel({a}))")


def _step_masks(tree, sites, f, shapes, text):
    """relu's derivative mistaken: ``relu(u)`` or ``sign(u)`` of the claim where the step
    belongs; a vector of the claim without relu's (or leaky ReLU's) mask; ``sign(u)`` of
    abs left out."""
    relus = _f_calls(f, ops.RELU)
    for path, node, _ in sites:
        if _is(node, ops.RELU) and relus:
            u = node.args[0]
            yield _put(tree, path, _step(u)), (
                f"{_text(node)} where relu's derivative belongs: the step "
                f"{_text(_step(u))}, 1 where {_text(u)} > 0 and 0 where {_text(u)} < 0 "
                "(relu'(u) is not relu(u))")
        elif _is(node, ops.SIGN) and relus:
            u = node.args[0]
            yield _put(tree, path, _step(u)), (
                f"{_text(node)} where relu's derivative belongs: sign is -1 where "
                f"{_text(u)} < 0, relu's derivative is 0 there (the step "
                f"{_text(_step(u))})")
    vectors = [(p, n) for p, n, _ in sites if isinstance(n, Name)
               and len(shapes.get(n.name, ())) == 1]
    for op, step, law in ((ops.RELU, _step, "relu's derivative is 0 where {u} < 0"),
                          (ops.LEAKY_RELU, _leaky_step,
                           "leaky ReLU's derivative is 0.01 where {u} < 0, 1 where "
                           "{u} > 0")):
        for call in _f_calls(f, op):
            u = call.args[0]
            for path, n in vectors:
                new = BinOp("*", n, step(u))
                yield _put(tree, path, new), (
                    f"missing {'relu' if op is ops.RELU else 'leaky ReLU'}'s mask: "
                    f"{law.format(u=_text(u))}: the true gradient has {_text(new)} "
                    f"where the claim has {n.name}")
    for call in _f_calls(f, ops.ABS):  # (abs's derivative taken as the identity)
        u = call.args[0]
        for path, node, _ in sites:
            if node == u:
                fixed = _put(tree, path, _call(ops.SIGN, u))
                where = _term(tree, path)
                yield fixed, (
                    f"the gradient of {_text(call)} is sign({_text(u)}), not {_text(u)}: "
                    f"the claim has {_text(_at(tree, where))} where the true gradient has "
                    f"{_text(_at(fixed, where))}")
    for call in _f_calls(f, ops.ABS):
        u = call.args[0]
        sign = _call(ops.SIGN, u)
        yield BinOp("*", tree, sign), (f"missing factor {_text(sign)}: the derivative of "
                                       f"{_text(call)} is {_text(sign)}")


def _inner_gradients(tree, sites, f, shapes, text):
    """A scalar claim times the gradient of an inner ``dot(a, x)`` (``a``) or
    ``norm(x)`` (``x/norm(x)``): the chain rule's vector factor left out."""
    for call in _f_calls(f, ops.DOT):
        args = call.args
        for v, a in ((args[0], args[1]), (args[1], args[0])):
            if isinstance(v, Name) and shapes.get(v.name):
                yield BinOp("*", tree, a), (
                    f"missing factor {_text(a)}: the gradient of {_text(call)} with respect "
                    f"to {v.name} (the chain rule through {_text(call)}; the claim is a "
                    f"scalar, {v.name} a vector)")
    for call in _f_calls(f, ops.NORM):
        v = call.args[0]
        if isinstance(v, Name) and shapes.get(v.name):
            g = BinOp("/", v, call)
            yield BinOp("*", tree, g), (
                f"missing factor {_text(g)}: the gradient of {_text(call)} with respect to "
                f"{v.name} (the chain rule through {_text(call)}; the claim is a scalar, "
                f"{v.name} a vector)")


def _sums(tree, sites, f, shapes, text):
    """A ``sum(v)`` of the claim that should be ``v`` (each element has its own
    derivative), or the whole claim summed (a scalar broadcast over the elements)."""
    for path, node, _ in sites:
        if _is(node, ops.SUM):
            yield _put(tree, path, node.args[0]), (
                f"{_text(node)} where the true gradient has {_text(node.args[0])}: each "
                "element has its own derivative (no sum over the elements)")
    whole = _call(ops.SUM, tree)
    yield whole, (f"missing sum over the elements: the true gradient is {_text(whole)} (a "
                  "scalar broadcast over a vector gets the sum of the gradients of the "
                  "elements it was added to)")


def _without(tree, path: tuple):
    """``tree`` with the term at ``path`` (of a sum or difference) removed."""
    parent = _at(tree, path[:-1])
    keep = parent.left if path[-1] == 1 else parent.right
    if path[-1] == 0 and parent.op == "-":
        keep = Neg(keep)
    return _put(tree, path[:-1], keep)


def _term_changes(tree, sites, f, shapes, text):
    """One term of the claim's sum too many, or a variable of f left out as a term."""
    terms = _terms(tree)
    if len(terms) > 1:
        for path, term in terms:
            yield _without(tree, path), (f"extra term {_text(term)}: the true gradient is "
                                         f"{_text(_without(tree, path))}")
    for v in f.variables:
        for op in ("+", "-"):
            new = BinOp(op, tree, Name(v))
            yield new, (f"missing term {'-' if op == '-' else ''}{v}: the true gradient is "
                        f"{_text(new)}")


def _variable_swaps(tree, sites, f, shapes, text):
    """One occurrence of a variable made another of the same shape (a scalar made any)."""
    names = [v for v in f.variables]
    for path, node, _ in sites:
        if not isinstance(node, Name) or node.name not in names:
            continue
        for other in names:
            if other == node.name or shapes.get(other, ()) != shapes.get(node.name, ()) and \
                    shapes.get(node.name, ()) != ():
                continue
            fixed = _put(tree, path, Name(other))
            where = _term(tree, path)
            yield fixed, (f"wrong variable: the claim has {_text(_at(tree, where))} where the "
                          f"true gradient has {_text(_at(fixed, where))}")
    for path, node, _ in sites:  # (1 for y: right only where y is 1)
        if isinstance(node, Num) and node.value in (0, 1):
            for other in names:
                fixed = _put(tree, path, Name(other))
                where = _enclosing(tree, path)
                yield fixed, (f"{node.value} where the true gradient has {other}: the claim "
                              f"has {_text(_at(tree, where))}, the true gradient "
                              f"{_text(_at(fixed, where))} (the same only where {other} is "
                              f"{node.value})")


def _inner_factors(tree, sites, f, shapes, text):
    """A factor left out inside a ``sum`` or ``mean`` of the claim: the chain rule's
    inner derivative of each element (``mean(w*x - y)`` for ``mean((w*x - y)*x)``)."""
    vectors = [v for v in f.variables if shapes.get(v)]
    for path, node, _ in sites:
        if not (_is(node, ops.SUM) or _is(node, ops.MEAN)):
            continue
        for v in vectors:
            new = replace(node, args=(BinOp("*", node.args[0], Name(v)),))
            yield _put(tree, path, new), (
                f"missing factor {v} inside {_text(node)}: the true gradient has "
                f"{_text(new)} (the chain rule, element by element)")


def _inner_nodes(f) -> list:
    """The inner arguments of f's calls and the bases of its powers (not bare names)."""
    out = []
    for _, n, _ in _sites(f.tree):
        if isinstance(n, Call):
            out += [a for a in n.args if not isinstance(a, (Name, Num))]
        elif isinstance(n, BinOp) and n.op == "**" and not isinstance(n.left, (Name, Num)):
            out.append(n.left)
    return list(dict.fromkeys(out))


def _enclosing(tree, path: tuple) -> tuple:
    """The path of the nearest call or sum holding the node at ``path`` (its own when
    none): the part of the claim a diagnosis quotes."""
    for cut in range(len(path) - 1, -1, -1):
        node = _at(tree, path[:cut])
        if isinstance(node, Call) or isinstance(node, BinOp) and node.op in ("+", "-"):
            return path[:cut]
    return path


def _wrong_arguments(tree, sites, f, shapes, text):
    """The chain rule at the wrong argument: a variable of the claim made f's inner
    expression (``1 + x**2`` -> ``1 + (2*x)**2`` for ``atan(2*x)``); the inner derivative
    put inside the outer function (``exp(cos(x))`` -> ``exp(sin(x))*cos(x)``)."""
    inner = _inner_nodes(f)
    for path, node, parent in sites:
        if not isinstance(node, Name):
            continue
        for u in inner:
            if not any(isinstance(n, Name) and n.name == node.name for _, n, _ in _sites(u)):
                continue
            if isinstance(parent, Call) and isinstance(u, Call) and parent.func == u.func:
                continue  # (sum(sum(x**2)) for sum(x): a part replaced, no argument)
            fixed = _put(tree, path, u)
            where = _enclosing(tree, path)
            yield fixed, (f"the outer derivative is taken at {node.name}, not at the inner "
                          f"{_text(u)}: the claim has {_text(_at(tree, where))} where the "
                          f"true gradient has {_text(_at(fixed, where))} (chain rule: "
                          f"g'(u) at u = {_text(u)}, times u')")
    calls = [u for u in inner if isinstance(u, Call)] + [
        n for _, n, _ in _sites(f.tree) if isinstance(n, Call) and n is not f.tree]
    for path, node, _ in sites:  # (a call, or a negated one: exp(-sin(x)))
        if not path or not (isinstance(node, Call) or isinstance(node, Neg) and isinstance(
                node.operand, Call)):
            continue
        for u in dict.fromkeys(calls):
            if u == node:
                continue
            new = BinOp("*", _put(tree, path, u), node)
            yield new, (f"the chain rule: the claim has the inner derivative {_text(node)} "
                        f"where the inner {_text(u)} belongs; the true gradient is "
                        f"{_text(new)} (the outer derivative at {_text(u)}, times "
                        f"{_text(node)})")


def _transposed_parts(tree, sites, f, shapes, text):
    """Every occurrence of one matrix expression of the claim transposed (both
    ``inverse(A)`` of ``-inverse(A) @ outer(u, v) @ inverse(A)``)."""
    where: dict = {}
    for path, node, parent in sites:
        if isinstance(parent, Transpose):
            continue
        if isinstance(node, Call) or isinstance(node, Name) and len(
                shapes.get(node.name, ())) == 2:
            where.setdefault(node, []).append(path)
    for node, paths in where.items():
        if len(paths) < 2 and isinstance(node, Name):
            continue  # (one matrix variable: the transposes of slips.py say it)
        fixed = tree
        for path in paths:
            fixed = _put(fixed, path, Transpose(node))
        many = f"both occurrences of {_text(node)}" if len(paths) == 2 else (
            f"all {len(paths)} occurrences of {_text(node)}" if len(paths) > 2 else
            _text(node))
        yield fixed, (f"transposed: {many} need transposing: the true gradient is "
                      f"{_text(fixed)}")


def _inner_inside(tree, sites, f, shapes, text):
    """The inner derivative put inside the outer function's derivative as its argument
    (``-sin(3*x**2)`` for ``-sin(x**3)*3*x**2`` of ``cos(x**3)``)."""
    inner = _inner_nodes(f)
    for path, node, _ in sites:
        if not (isinstance(node, Call) and len(node.args) == 1) or isinstance(
                node.args[0], (Name, Num)):
            continue
        a = node.args[0]
        for u in inner:
            if u == a:
                continue
            outer = replace(node, args=(u,))
            new = BinOp("*", outer, a)
            yield _put(tree, path, new), (
                f"the chain rule: the inner derivative {_text(a)} is put inside "
                f"{_text(node)} as its argument; the outer derivative is taken at the "
                f"inner {_text(u)} and multiplied by {_text(a)}: {_text(new)}")


def _divisions(tree, sites, f, shapes, text):
    """A division where the chain rule multiplies (``exp(3*x)/3`` for
    ``exp(3*x)*3``)."""
    for path, node, _ in sites:
        if isinstance(node, BinOp) and node.op == "/" and not (
                isinstance(node.left, Num) and node.left.value == 1):
            new = BinOp("*", node.left, node.right)
            yield _put(tree, path, new), (
                f"divided by {_text(node.right)} where the chain rule multiplies by it "
                f"(the inner derivative): the true gradient has {_text(new)}, not "
                f"{_text(node)}")


def _divided_terms(tree, sites, f, shapes, text):
    """A division applied to every term of a sum where it belongs to some only: a size
    ``1/numel(y)`` of the data term applied to the regulariser too (``2*(g + lam*w)/N``
    for ``2*g/N + 2*lam*w``)."""
    for path, node, _ in sites:
        if not (isinstance(node, BinOp) and node.op == "/"):
            continue
        den = node.right
        for sub, t, parent in _sites(node.left, path + (0,)):
            if not (isinstance(parent, BinOp) and parent.op in ("+", "-")):
                continue
            new = _put(tree, sub, BinOp("*", t, den))
            yield new, (
                f"the division by {_text(den)} was applied to the term {_text(t)} too: "
                f"that term of the true gradient is not divided by {_text(den)} (only the "
                f"other terms are)")


def _replaced_parts(tree, sites, f, shapes, text):
    """One variable of the claim where an expression of it belongs, an expression the
    claim or f has (``sum(z)`` for ``sum(exp(z))``: the normaliser of ``exp(z)/...``)."""
    calls = [n for _, n, _ in list(_sites(tree)) + list(_sites(f.tree))
             if (isinstance(n, Call) or isinstance(n, BinOp) and n.op == "**")
             and n != f.tree]
    for path, node, _ in sites:
        if not isinstance(node, Name):
            continue
        where = _enclosing(tree, path)
        for m in dict.fromkeys(calls):
            if node not in _children(m) or _at(tree, where) == m:
                continue
            fixed = _put(tree, path, m)
            yield fixed, (f"{_text(_at(tree, where))} where the true gradient has "
                          f"{_text(_at(fixed, where))}: {node.name} where {_text(m)} "
                          "belongs")


def _call_factors(tree, sites, f, shapes, text):
    """The claim times (or over) a ``det(A)`` of f."""
    for call in _f_calls(f, ops.LINALG_DET):
        for new, c in ((BinOp("*", tree, call), _text(call)),
                       (BinOp("/", tree, call), f"1/{_text(call)}")):
            yield new, f"missing factor {c}: the true gradient is {_text(new)}"


def _derivative_swaps(tree, sites, f, shapes, text):
    """``G(u)`` of the claim where ``F'(u)`` belongs, for an ``F(u)`` of f whose derivative
    is its co-function (``sinh(u)`` or ``-cosh(u)`` for ``cosh(u)`` of ``sinh(u)``)."""
    family = ((ops.SIN, ops.COS, False), (ops.COS, ops.SIN, True),
              (ops.SINH, ops.COSH, False), (ops.COSH, ops.SINH, False))
    for path, node, _ in sites:
        if not (isinstance(node, Call) and len(node.args) == 1):
            continue
        u = node.args[0]
        for op, co, minus in family:
            if not (_is(node, op) or (minus and _is(node, co))) or \
                    u not in (c.args[0] for c in _f_calls(f, op)):
                continue
            right = Neg(_call(co, u)) if minus else _call(co, u)
            shown = ("-" if minus else "") + co.exprs[0]
            given = node.func if _is(node, op) else f"{node.func} (the sign)"
            yield _put(tree, path, right), (
                f"{op.exprs[0]}'s derivative is {shown}, not {given}: the claim has "
                f"{_text(node)} where {_text(right)} belongs")


def _abs_chains(tree, sites, f, shapes, text):
    """``sign(u)`` of the claim for ``abs(u)`` of f without the inner derivative ``u'``
    (``sign(x**3 - x)`` for ``(3*x**2 - 1)*sign(x**3 - x)``).  Bounded: one derivative a
    scalar variable of each ``u`` (at most 4)."""
    for u in _f_calls(f, ops.ABS)[:4]:
        u = u.args[0]
        signs = [(p, n) for p, n, _ in sites if _is(n, ops.SIGN) and n.args[0] == u]
        if not signs:
            continue
        for v in [n.name for _, n, _ in _sites(u) if isinstance(n, Name)][:4]:
            if shapes.get(v):
                continue
            try:
                d = P.parse(str(parse_f(_text(u)).diff(v, simplify=False)))
            except Exception:  # noqa: BLE001 - no symbolic inner derivative: none named
                continue
            if isinstance(d, (Num, Name)):
                continue  # (a plain factor: the other kinds name it)
            for path, node in signs:
                yield _put(tree, path, BinOp("*", d, node)), (
                    f"missing chain-rule factor {_text(d)} (the inner derivative of "
                    f"{_text(u)}): abs's derivative is sign(u)*u'")


def _mixed_partials(tree, sites, f, shapes, text):
    """A mixed partial ``d2f/dwdv`` given for ``df/dv`` (``6*x*y**2`` for ``3*x**2*y**2``
    of ``x**2*y**3``).  Bounded: f of scalars only, at most 4 of them and 40 nodes."""
    names = list(f.variables)
    if not 2 <= len(names) <= 4 or any(shapes.get(v) for v in names) or \
            len(list(_sites(f.tree))) > 40 or len(sites) > 40:
        return
    try:
        claim = parse_f(text).to_sympy()
        firsts = {v: f.diff(v, simplify=False) for v in names}
    except Exception:  # noqa: BLE001 - no symbolic form: no mixed partial named
        return
    symbols = {s.name: s for g in firsts.values() for s in g.free_symbols}
    for v, first in firsts.items():
        for w in names:
            if w != v and w in symbols and (first.diff(symbols[w]) - claim).expand() == 0 \
                    and (first - symbols[w]*claim).expand() != 0:  # (x*cos(y): factor x)
                yield P.parse(str(first)), (
                    f"{text} is the mixed partial d2f/d{w}d{v}; df/d{v} is {first}")


#: The kinds :func:`~symgrad.checking.slips.named_slip` tries after its own.
MORE_KINDS = (_transposed_parts, _step_masks, _inner_gradients, _sums, _call_factors, _term_changes,
              _inner_factors, _variable_swaps, _inner_inside, _divided_terms,
              _replaced_parts, _abs_chains, _mixed_partials)
#: Kinds tried before the power rule's exponents (the chain rule at the wrong argument
#: explains ``2*x/(1 + x**2)`` of ``atan(x**2)``, not an exponent).
EARLY_KINDS = (_wrong_arguments, _derivative_swaps)
#: Kinds tried where the claim is a constant multiple of the truth.
RATIO_KINDS = (_divisions,)
#: The kinds tried where a claim is right on part of the domain only.
REGION_KINDS = (_step_masks,)
#: The kinds tried before a size is read off the numbers.
NUMEL_KINDS = (_numel_swaps,)

