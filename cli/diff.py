"""``symgrad diff``: symbolic partial derivatives and their reverse-mode values."""
from __future__ import annotations

import click
import numpy as np

from ._common import (ExpressionCommand, InputError, echo_json, fmt, load_expression,
                      parse_at, style, to_plain)

__all__ = ["diff"]


def _symbol_values(program, at: dict) -> dict:
    """SymPy symbol -> number, for substituting the point into closed forms."""
    subs = {}
    for name, (syms, _) in program.leaves.items():
        v = np.asarray(at[name], dtype=np.float64)
        for ix in np.ndindex(*syms.shape):
            subs[syms[ix]] = float(v[ix])
    return subs


def _vector_form(expr, name: str, shapes: dict) -> str | None:
    """``cos(dot(x, y)) * y`` where the grammar can write the gradient, else None."""
    from symgrad.symbolic.vecdiff import NoVectorForm
    try:
        return expr.vector_gradient(name, **shapes)
    except NoVectorForm:
        return None


def _simplified(matrix, timeout: float):
    """``sympy.simplify`` in a child process that is killed after ``timeout`` seconds."""
    import sympy as sp
    from symgrad._util import run_with_timeout
    status, result = run_with_timeout(sp.simplify, (matrix,), timeout)
    return result if status == "ok" else matrix


def _hessian(expr, at: dict, names: list, timeout: float):
    """Symbolic and reverse-mode second derivatives over the variables' elements."""
    import sympy as sp
    from symgrad.autograd.functional import hessian
    shapes = expr.shape_values(at)
    program = expr.gradient_program(names, **shapes)
    f = sp.sympify(expr.to_sympy(**shapes))  # also when the output is a leaf (f = x)
    syms = [s for n in names for s in np.ravel(program.leaves[n][0])]
    h_sym = _simplified(sp.hessian(f, syms), timeout)
    result = {"symbolic": [[str(e) for e in row] for row in h_sym.tolist()]}
    if all(v in at for v in expr.variables):
        leaves = expr._leaves(at)
        fixed = {k: t for k, t in leaves.items() if k not in names}

        def func(*xs):
            return expr.evaluate({**fixed, **dict(zip(names, xs))})
        blocks = hessian(func, tuple(leaves[n] for n in names))
        sizes = [leaves[n].numel() for n in names]
        rows = []
        for i, n in enumerate(names):
            row = [np.asarray(blocks[i][j].detach().numpy(), dtype=np.float64).reshape(
                sizes[i], sizes[j]) for j in range(len(names))]
            rows.append(np.concatenate(row, axis=1))
        h_num = np.concatenate(rows, axis=0)
        h_at = np.array([[_float(e) for e in row] for row in
                         h_sym.xreplace(_symbol_values(program, at)).evalf().tolist()],
                        dtype=np.float64).reshape(h_num.shape)
        result["value"] = to_plain(h_num)
        result["agree"] = bool(np.allclose(h_num, h_at, rtol=1e-9, atol=1e-12,
                                           equal_nan=True))
    return h_sym, result


_SUP = dict(enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")) | {10: "¹⁰"}


def _higher(expr, at: dict, names: list, order: int, timeout: float) -> dict:
    """Each variable's pure derivative of ``order`` (>= 3): symbolic and by reverse mode
    run ``order`` times (``create_graph=True``)."""
    import sympy as sp
    import symgrad
    from symgrad.autograd import grad
    from symgrad._util import run_with_timeout
    shapes = expr.shape_values(at)
    bad = [n for n in names if np.ndim(shapes[n]) != 0]
    if bad:
        raise InputError(f"--order {order}: derivatives of order 3 and more are for scalar "
                         f"variables; {', '.join(bad)} is not a scalar")
    out = {}
    for n in names:
        e = expr.diff(n, simplify=False, order=order, **shapes)
        status, tidy = run_with_timeout(sp.simplify, (e,), timeout)
        e = tidy if status == "ok" else e
        r: dict = {}
        if all(v in at for v in expr.variables):
            leaves = expr._leaves(at)
            g = expr.evaluate(leaves)
            for _ in range(order):
                if g is leaves[n] or g.grad_fn is None:  # d/dx x = 1, then zeros
                    g = 1.0 if g is leaves[n] else 0.0
                    g = symgrad.tensor(g, dtype=symgrad.float64)
                    continue
                (g,) = grad(g, leaves[n], create_graph=True, materialize_grads=True)
            sym = _float(e.xreplace({sp.Symbol(k, real=True): sp.Float(float(v))
                                     for k, v in at.items()}).evalf())
            r = {"value": to_plain(g), "agree": bool(np.allclose(
                g.detach().item(), sym, rtol=1e-9, atol=1e-12, equal_nan=True))}
        out[n] = (e, r)
    return out


def _float(e) -> float:
    """A SymPy number as a float; nan for what has no real value (a kink, a complex)."""
    try:
        return float(e)
    except (TypeError, ValueError):
        return float("nan")


@click.command(cls=ExpressionCommand)
@click.argument("expression")
@click.option("--wrt", multiple=True, metavar="VAR",
              help="Differentiate with respect to VAR (repeatable; default: all variables).")
@click.option("--at", "at_items", multiple=True, metavar="VAR=VALUE",
              help="The point: x=4, x=-0.5, v=[1,2,3], A=[[1,2],[3,4]] (repeatable).")
@click.option("--order", type=click.IntRange(1, 10), default=1, show_default=True,
              help="2 adds the Hessian; 3 and more add each scalar variable's "
                   "derivative of that order.")
@click.option("--steps", is_flag=True, help="Print the chain-rule straight-line program.")
@click.option("--latex", is_flag=True, help="Print the derivatives as LaTeX.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--timeout", type=click.FloatRange(0.1, 600), default=10.0, show_default=True,
              help="Seconds allowed for simplifying; past them the unsimplified form "
                   "is shown.")
def diff(expression: str, wrt: tuple, at_items: tuple, order: int, steps: bool,
         latex: bool, as_json: bool, timeout: float) -> None:
    """Differentiate EXPRESSION: symbolic partial derivatives (SymPy, computed on the
    graph) and their values at a point from reverse mode, checked against each other.

    \b
    Examples:
      symgrad diff "5*x**2 + 3*sin(y)" --at x=4 --at y=0
      symgrad diff "sin(dot(x, y))" --at x=[1,2,3] --at y=[5,6,7] --wrt x
      symgrad diff "x**3*y" --order 2 --at x=1 --at y=2 --json
      symgrad diff "tanh(1.1*tanh(x) + 0.1)" --steps
    """
    import sympy as sp
    expr = load_expression(expression)
    at = parse_at(at_items, expr.variables)
    names = list(dict.fromkeys(wrt)) or list(expr.variables)
    for n in names:
        if n not in expr.variables:
            raise InputError(f"--wrt {n}: not a variable of the expression (variables: "
                             f"{', '.join(expr.variables) or 'none'})")
    try:
        shapes = expr.shape_values(at)
        complete = all(v in at for v in expr.variables)
        bad = expr.domain_error(**at) if complete else None
        if bad is not None:
            point = ", ".join(f"{k} = {fmt(at[k])}" for k in expr.variables)
            raise InputError(f"not defined at {point}: {bad.pretty()}")
        out = expr.trace(**shapes)
        if out.numel() != 1:
            raise InputError(f"the expression's value has shape {list(out.shape)}; "
                             "derivatives need a scalar (wrap it in sum(...))")
        program = expr.gradient_program(names, **shapes) if names else None
    except (ValueError, TypeError) as err:
        raise InputError(err.pretty() if hasattr(err, "pretty") else str(err)) from None
    closed = program.closed_form(timeout=timeout) if program else {}
    value = grads = None
    agree = None
    if complete:
        value = expr.evaluate(**at)
        grads = expr.gradient(**at)
        symbolic_at = program.evaluate(at) if program else {}
        agree = all(np.allclose(grads[n], symbolic_at[n], rtol=1e-9, atol=1e-12,
                                equal_nan=True) for n in names)
    hess = _hessian(expr, at, names, timeout) if order == 2 and names else None
    higher = _higher(expr, at, names, order, timeout) if order > 2 and names else None

    if as_json:
        obj = {"expression": expression, "variables": expr.variables,
               "at": {k: to_plain(v) for k, v in at.items()},
               "value": to_plain(value) if value is not None else None,
               "gradient": {n: {"symbolic": str(closed[n]),
                                "value": to_plain(grads[n]) if grads else None,
                                # the same keys for every variable: null for a scalar
                                "vector": _vector_form(expr, n, shapes)
                                if isinstance(closed[n], sp.MatrixBase) else None}
                            for n in names},
               "agree": agree}
        if latex:
            for n in names:
                obj["gradient"][n]["latex"] = sp.latex(closed[n])
        if steps and program:
            obj["steps"] = [str(line) for line in program.lines]
        if hess is not None:
            obj["hessian"] = hess[1]
        if higher is not None:
            obj["derivatives"] = {n: {"order": order, "symbolic": str(e), **r}
                                  for n, (e, r) in higher.items()}
        echo_json(obj)
        return

    args = ", ".join(expr.variables)
    click.echo(f"f({args}) = {sp.sympify(expr.to_sympy(**shapes))}")
    if complete and expr.variables:
        point = ", ".join(f"{k} = {fmt(at[k])}" for k in expr.variables)
        click.echo(f"at {point}:  f = {fmt(value)}")
    elif not expr.variables:
        click.echo(f"f = {fmt(value)}   (a constant: no variables to differentiate)")
    for n in names:
        sym = closed[n]
        if isinstance(sym, sp.MatrixBase) and not latex:
            vector = _vector_form(expr, n, shapes)
            click.echo(f"\n∂f/∂{n} = {vector}" if vector else f"\n∂f/∂{n} =")
            syms = program.leaves[n][0]
            for ix, e in zip(np.ndindex(*syms.shape), sym):
                click.echo(f"  [{', '.join(map(str, ix))}]  {e}")
        else:
            click.echo(f"\n∂f/∂{n} = {sp.latex(sym) if latex else sym}")
        if grads is not None:
            num = symbolic_at[n]
            ok = np.allclose(grads[n], num, rtol=1e-9, atol=1e-12, equal_nan=True)
            mark = style("✓ agrees", fg="green") if ok else style("✗ DIFFERS", fg="red")
            click.echo(f"  symbolic at the point: {fmt(num)}")
            click.echo(f"  reverse mode:          {fmt(grads[n])}   {mark}")
    if hess is not None:
        h_sym, h = hess
        click.echo("\nHessian over (" + ", ".join(
            str(s) for n in names for s in np.ravel(program.leaves[n][0])) + "):")
        click.echo(sp.latex(h_sym) if latex else sp.pretty(h_sym, use_unicode=True))
        if "value" in h:
            mark = style("✓ agrees", fg="green") if h["agree"] else style("✗ DIFFERS",
                                                                         fg="red")
            click.echo(f"  reverse mode (twice): {fmt(h['value'])}   {mark}")
    for n, (e, r) in (higher or {}).items():
        click.echo(f"\n∂{_SUP[order]}f/∂{n}{_SUP[order]} = {sp.latex(e) if latex else e}")
        if "value" in r:
            mark = style("✓ agrees", fg="green") if r["agree"] else style("✗ DIFFERS",
                                                                         fg="red")
            click.echo(f"  reverse mode ({order} times): {fmt(r['value'])}   {mark}")
    if steps and program:
        click.echo("\nChain rule, step by step (one line per graph node):")
        click.echo(str(program))
    if not complete and at:
        missing = [v for v in expr.variables if v not in at]
        click.echo(f"\n(no values: give --at for {', '.join(missing)} too)")
