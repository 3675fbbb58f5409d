"""``symgrad diff``: symbolic partial derivatives and their reverse-mode values."""
from __future__ import annotations

import click
import numpy as np
import sympy as sp

from symgrad._util import deep
from symgrad.symbolic import budget
from symgrad.symbolic.budget import limits
from symgrad.symbolic.differentiation import (DerivativeError, Derivatives, OutsideDomain,
                                             derivatives)

from ._common import (ExpressionCommand, InputError, echo_json, fmt, load_expression,
                      parse_at, parse_shapes, style, to_plain)
from ._forward import forward_json, forward_text, parse_direction, run_forward
from ._limits import limit_options

__all__ = ["diff"]

#: A Hessian wider than this (characters) is printed one element per line.
_WIDTH = 100
_SUP = dict(enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")) | {10: "¹⁰"}
#: Programs longer than this print f as written, not rebuilt in SymPy (it would only
#: repeat the text, slowly).
_LARGE = 200


@click.command(cls=ExpressionCommand)
@click.argument("expression")
@click.option("--wrt", multiple=True, metavar="VAR",
              help="Differentiate with respect to VAR (repeatable; default: all variables).")
@click.option("--at", "at_items", multiple=True, metavar="VAR=VALUE",
              help="The point: x=4, x=-0.5, v=[1,2,3], A=[[1,2],[3,4]] (repeatable).")
@click.option("--order", type=click.IntRange(1, 10), default=1, show_default=True,
              help="2 adds the Hessian; 3 and more add each scalar variable's "
                   "derivative of that order.")
@click.option("--shape", "shape_items", multiple=True, metavar="VAR=DIMS",
              help="The shape of a variable without a value: A=n,m or x=m (named sizes, "
                   "the same name the same size) or x=4 (repeatable).")
@click.option("--elements", is_flag=True,
              help="Print vector and matrix gradients element by element too.")
@click.option("--mode", type=click.Choice(["reverse", "forward"]), default="reverse",
              show_default=True,
              help="forward: the tangent program (v̇k = local derivative · tangent), "
                   "directional derivatives J v, any output shape.")
@click.option("--direction", "direction_items", multiple=True, metavar="VAR=VALUE",
              help="Forward mode's direction: the inputs' tangents, x=1, v=[1,0,0] "
                   "(repeatable; missing inputs 0; default: one direction per input "
                   "element, the Jacobian's columns).")
@click.option("--jacobian", is_flag=True,
              help="Print the Jacobian (of a vector function too): in matrix form for "
                   "vectors, else over the elements.")
@click.option("--steps", is_flag=True, help="Print the chain-rule straight-line program.")
@click.option("--latex", is_flag=True, help="Print the derivatives as LaTeX.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--simplify", is_flag=True,
              help="Run SymPy's simplify on every result (slow on large expressions); "
                   "by default only small results get it, the others are tidied "
                   "(common factors pulled out).")
@click.option("--timeout", type=click.FloatRange(0.1, 600), default=10.0, show_default=True,
              help="Seconds --simplify may take; past them the tidied form is shown.")
@limit_options("elements", "terms", "hessian")
def diff(expression: str, wrt: tuple, at_items: tuple, order: int, shape_items: tuple,
         elements: bool, mode: str, direction_items: tuple, jacobian: bool, steps: bool,
         latex: bool, as_json: bool, simplify: bool, timeout: float, max_elements: int,
         max_terms: int, max_hessian: int) -> None:
    """Differentiate EXPRESSION: symbolic partial derivatives (SymPy, computed on the
    graph) and their values at a point from reverse mode, checked against each other.

    \b
    Examples:
      symgrad diff "5*x**2 + 3*sin(y)" --at x=4 --at y=0
      symgrad diff "sin(dot(x, y))" --at x=[1,2,3] --at y=[5,6,7] --wrt x
      symgrad diff "sum((A @ x - b)**2)" --shape A=n,m --shape x=m --shape b=n
      symgrad diff "x**3*y" --order 2 --at x=1 --at y=2 --json
      symgrad diff "tanh(1.1*tanh(x) + 0.1)" --steps
      symgrad diff "sin(x*y)" --mode forward --at x=1 --at y=2 --direction x=1
      symgrad diff "tanh(W @ x + b)" --mode forward --shape W=n,m --shape x=m --jacobian

    Work is estimated before it is done: an intermediate past --max-elements, symbolic
    work past --max-terms or a Hessian past --max-hessian is refused (exit 2), and
    gradients of more than 500 elements are printed in vector form only.
    """
    expr = load_expression(expression)
    at = parse_at(at_items, expr.variables)
    shapes = parse_shapes(shape_items, expr.variables, at)
    labels = {k: tuple(map(str, s)) for k, s in shapes.items()}
    direction = parse_direction(direction_items, expr.variables)
    if mode == "forward" or jacobian:
        if order != 1:
            raise InputError("--order with --mode forward or --jacobian: forward mode "
                             "here gives first derivatives (use --mode reverse --order N)")
        if direction is not None and wrt:
            missing = [k for k in direction if k not in wrt]
            if missing:
                raise InputError(f"--direction {missing[0]}=...: {missing[0]} is not one "
                                 "of the --wrt variables")
        with limits(max_elements=max_elements, max_terms=max_terms, max_hessian=max_hessian):
            d = run_forward(expr, wrt, at, direction, shapes,
                            "full" if simplify else "auto", timeout)
        shaped = {k: s for k, s in _shapes(d, labels).items() if s}
        try:
            if as_json:
                echo_json(_on_a_deep_stack(lambda: forward_json(d, expression, jacobian)))
            else:
                click.echo(_on_a_deep_stack(
                    lambda: forward_text(d, latex, jacobian, steps, shaped)))
        except ValueError as err:
            raise InputError(str(err)) from None
        return
    if direction is not None:
        raise InputError("--direction is for --mode forward")
    try:
        with limits(max_elements=max_elements, max_terms=max_terms, max_hessian=max_hessian):
            d = derivatives(expr, wrt, at, order=order, timeout=timeout,
                            simplify="full" if simplify else "auto", shapes=shapes)
    except OutsideDomain as err:
        point = ", ".join(f"{k} = {fmt(at[k])}" for k in expr.variables)
        raise InputError(f"not defined at {point}: {err.cause.pretty()}") from None
    except DerivativeError as err:
        # The library names its argument at fault (wrt, order); here that is an option.
        raise InputError(f"--{err}" if err.argument else str(err)) from None
    except (ValueError, TypeError) as err:
        raise InputError(err.pretty() if hasattr(err, "pretty") else str(err)) from None
    try:
        if as_json:
            echo_json(_on_a_deep_stack(lambda: _as_json(d, expression, latex, steps, labels)))
        else:
            click.echo(_on_a_deep_stack(lambda: _print(d, latex, steps, elements, labels)))
    except ValueError as err:  # (a power too large to compute, met while printing)
        raise InputError(str(err)) from None


def _on_a_deep_stack(fn):
    """``fn()``; SymPy prints recursively, so a result too deeply nested for Python's
    default stack is printed again in a child process with a deep one (this process's
    recursion limit is never changed)."""
    try:
        return fn()
    except RecursionError:
        return deep(fn)


def _mark(agree: bool) -> str:
    return style("✓ agrees", fg="green") if agree else style("✗ DIFFERS", fg="red")


def _shapes(d: Derivatives, labels: dict) -> dict:
    """Variable -> its dimensions: the --shape names, else the sizes."""
    return {k: list(labels.get(k) or np.shape(d.shapes[k])) for k in d.expression.variables}


def _forms(d: Derivatives) -> dict:
    """Variable -> (vector form, why none): for vectors and matrices, and for scalars in
    an expression that has any (``s*dot(x, x)``: ∂f/∂s is ``dot(x, x)`` for every size,
    where the elements would name the traced size's ``x_0``, ``x_1``)."""
    shaped = any(np.ndim(d.shapes[k]) for k in d.expression.variables)
    return {n: d.vector_form(n) if shaped else (None, None) for n in d.wrt}


def _as_json(d: Derivatives, expression: str, latex: bool, steps: bool, labels: dict) -> dict:
    names = d.wrt
    forms = _forms(d)
    obj = {"expression": expression, "variables": d.expression.variables,
           "shapes": _shapes(d, labels),
           "at": {k: to_plain(v) for k, v in d.at.items()},
           "value": to_plain(d.value) if d.value is not None else None,
           # (the same keys for every variable: vector null for a scalar, and
           # no_vector_form saying why a vector or matrix has none)
           "gradient": {n: {"symbolic": str(d.symbolic[n]),
                            "value": to_plain(d.gradient[n]) if d.gradient else None,
                            "vector": forms[n][0], "no_vector_form": forms[n][1]}
                        for n in names},
           "agree": d.agree}
    if latex:
        for n in names:
            obj["gradient"][n]["latex"] = sp.latex(d.symbolic[n])
    if steps and d.program:
        obj["steps"] = [str(line) for line in d.program.lines]
    if d.hessian is not None:
        h = d.hessian
        obj["hessian"] = {"symbolic": [[str(e) for e in row] for row in h.symbolic.tolist()],
                          "matrix": {f"{x},{y}": text for (x, y), text in
                                     (h.blocks or {}).items()}}
        if h.value is not None:
            obj["hessian"].update(value=to_plain(h.value), agree=h.agree)
    if d.higher is not None:
        obj["derivatives"] = {n: {"order": r.order, "symbolic": str(r.symbolic),
                                  **({} if r.value is None else
                                     {"value": to_plain(r.value), "agree": r.agree})}
                              for n, r in d.higher.items()}
    return obj


def _hessian_lines(h, latex: bool) -> list:
    """The element Hessian as a matrix where it fits the screen's width, else one line
    per pair of variables (it is symmetric: each pair once)."""
    head = "\nHessian over (" + ", ".join(str(s) for s in h.symbols) + ")"
    if latex:
        return [head + ":", sp.latex(h.symbolic)]
    texts = [[str(e) for e in row] for row in h.symbolic.tolist()]
    width = sum(max(len(t) for t in col) + 2 for col in zip(*texts)) if texts else 0
    if width <= _WIDTH:
        return [head + ":", sp.pretty(h.symbolic, use_unicode=True)]
    out = [head + ", one line per pair (symmetric):"]
    for i, a in enumerate(h.symbols):
        for j in range(i, len(h.symbols)):
            b = h.symbols[j]
            wrt = f"∂{a}²" if i == j else f"∂{a}∂{b}"
            out.append(f"  ∂²f/{wrt} = {texts[i][j]}")
    return out


def _print(d: Derivatives, latex: bool, steps: bool, elements: bool, labels: dict) -> str:
    lines: list = []  # (all printed at once: an error leaves no half report)
    variables, at = d.expression.variables, d.at
    shaped = {k: s for k, s in _shapes(d, labels).items() if s}
    large = d.program is not None and len(d.program.lines) > _LARGE
    many = [n for n in d.wrt if np.size(d.symbols[n]) > budget.MAX_SHOWN_ELEMENTS]
    if (shaped and not elements) or large or many:  # the expression as written (every size)
        lines.append(f"f({', '.join(variables)}) = {d.expression}")
        if shaped:
            lines.append("  shapes: " + ", ".join(f"{k} {'×'.join(map(str, s))}"
                                                for k, s in shaped.items()))
    else:
        lines.append(f"f({', '.join(variables)}) = {d.function()}")
    if d.complete and variables:
        point = ", ".join(f"{k} = {fmt(at[k])}" for k in variables)
        lines.append(f"at {point}:  f = {fmt(d.value)}")
    elif not variables:
        lines.append(f"f = {fmt(d.value)}   (a constant: no variables to differentiate)")
    forms = _forms(d) if not latex else {}
    for n in d.wrt:
        sym = d.symbolic[n]
        vector, why = forms.get(n, (None, None))
        if isinstance(sym, sp.MatrixBase) and not latex:
            if vector:
                lines.append(f"\n∂f/∂{n} = {vector}")
            elif labels:  # (named sizes: the elements are those of the traced size)
                size = "×".join(map(str, np.shape(d.shapes[n])))
                lines.append(f"\n∂f/∂{n} = (no vector form: {why}; per element at the "
                             f"traced size {size}, not for every size)")
            else:
                lines.append(f"\n∂f/∂{n} = (per element: no vector form: {why})")
            if (elements or not vector) and n in many:
                lines.append(f"  ({np.size(d.symbols[n]):,} elements: more than the "
                             f"{budget.MAX_SHOWN_ELEMENTS} printed one by one)")
            elif elements or not vector:
                for ix, e in zip(np.ndindex(*d.symbols[n].shape), sym):
                    lines.append(f"  [{', '.join(map(str, ix))}]  {e}")
        elif vector is not None and not elements:  # a scalar, for every size
            lines.append(f"\n∂f/∂{n} = {vector}")
        elif why is not None and labels and not elements:
            # (its elements would be the traced size's: x_0, x_1)
            lines.append(f"\n∂f/∂{n} = (no form for every size: {why})")
        elif n in many:  # (LaTeX of every element)
            lines.append(f"\n∂f/∂{n} = ({np.size(d.symbols[n]):,} elements: more than the "
                         f"{budget.MAX_SHOWN_ELEMENTS} printed one by one)")
        else:
            lines.append(f"\n∂f/∂{n} = {sp.latex(sym) if latex else sym}")
        if d.complete:
            lines.append(f"  symbolic at the point: {fmt(d.symbolic_at[n])}")
            lines.append(f"  reverse mode:          {fmt(d.gradient[n])}   "
                       f"{_mark(d.agrees[n])}")
    if d.hessian is not None:
        h = d.hessian
        blocks = {k: v for k, v in (h.blocks or {}).items() if v is not None}
        if shaped and blocks and not latex:
            lines.append("\nHessian in matrix form (I the identity):")
            for (x, y), text in blocks.items():
                lines.append(f"  ∂²f/∂{x}∂{y} = {text}")
        if not (shaped and len(blocks) == len(h.blocks) and not elements and not latex):
            lines.extend(_hessian_lines(h, latex))
        if h.value is not None:
            lines.append(f"  reverse mode (twice): {fmt(h.value)}   {_mark(h.agree)}")
    for n, r in (d.higher or {}).items():
        sup = _SUP[r.order]
        lines.append(f"\n∂{sup}f/∂{n}{sup} = {sp.latex(r.symbolic) if latex else r.symbolic}")
        if r.value is not None:
            lines.append(f"  reverse mode ({r.order} times): {fmt(r.value)}   {_mark(r.agree)}")
    if steps and d.program:
        lines.append("\nChain rule, step by step (one line per graph node):")
        lines.append(str(d.program))
    if not d.complete and at:
        missing = [v for v in variables if v not in at]
        lines.append(f"\n(no values: give --at for {', '.join(missing)} too)")
    return "\n".join(lines)
