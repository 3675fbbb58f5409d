"""``symgrad diff --mode forward`` and ``--jacobian``: forward mode's report."""
from __future__ import annotations

from typing import Iterable

import numpy as np
import sympy as sp

from symgrad.symbolic.forward_mode import ForwardDerivatives, forward_derivatives
from symgrad.symbolic.parser import ParseError, parse_value
from symgrad.symbolic.tangents import dotted

from ._common import InputError, assignments, fmt, style, to_plain

__all__ = ["parse_direction", "run_forward", "forward_text", "forward_json"]

#: More directions than this (input elements) print as the Jacobian, not one per line.
_LISTED = 6
#: The output's tangent, as the tangent program names tangents.
_FDOT = dotted("f")
#: A Jacobian wider than this (characters) prints one nonzero entry per line.
_WIDTH = 100


def parse_direction(items: Iterable[str], variables: list[str]) -> dict | None:
    """``["x=1", "y=[0,1]"]`` -> ``{"x": 1.0, "y": [0.0, 1.0]}`` (None: none given)."""
    out: dict = {}
    for name, text in assignments("--direction", items, variables,
                                  "--direction x=1 --direction y=0"):
        try:
            out[name] = parse_value(text)
        except ParseError as err:
            raise InputError(f"--direction {name}=...: {err.pretty()}") from None
    return out or None


def run_forward(expr, wrt, at, direction, shapes, simplify, timeout) -> ForwardDerivatives:
    """:func:`forward_derivatives`, a library refusal as one line."""
    try:
        return forward_derivatives(expr, wrt, at, direction, timeout=timeout,
                                   simplify=simplify, shapes=shapes)
    except (ValueError, TypeError) as err:
        text = err.pretty() if hasattr(err, "pretty") else str(err)
        if text.startswith("wrt "):
            text = "--" + text
        raise InputError(text) from None


def _mark(agree: bool) -> str:
    return style("✓ agrees", fg="green") if agree else style("✗ DIFFERS", fg="red")


def _seed_text(d: ForwardDerivatives, v: dict) -> str:
    return ", ".join(f"{dotted(k)} = {fmt(v[k])}" for k in d.wrt)


def forward_text(d: ForwardDerivatives, latex: bool, jacobian: bool, steps: bool,
                 shaped: dict) -> str:
    """The report as text (all at once: an error leaves no half report)."""
    f = d.expression
    lines = [f"f({', '.join(f.variables)}) = {f}"]
    if shaped:
        lines.append("  shapes: " + ", ".join(f"{k} {'×'.join(map(str, s))}"
                                            for k, s in shaped.items()))
    seeds = ", ".join(dotted(k) for k in d.wrt)
    show_program = (steps or not shaped) and bool(d.program.lines)
    if not d.program.lines:
        lines.append("\n(the expression is an input itself: its tangent is the seed)")
    if show_program:
        lines.append(f"\nTangent program (forward mode, seeds {seeds}), in evaluation "
                     "order:")
        lines.append(d.program.to_latex() if latex else str(d.program))
    if d.jvp is not None or d.vjp:
        lines.append("\nIn matrix form (every size):")
        if d.jvp is not None:
            lines.append(f"  J v   (forward):  {_FDOT} = {d.jvp}")
        for k, text in d.vjp.items():
            lines.append(f"  Jᵀ u  (reverse):  {k}\u0304 = {text}")
    elif d.no_form:
        lines.append(f"\n(no matrix form: {d.no_form})")
    if not shaped or not d.jvp:
        tangent = sp.latex(d.tangent) if latex else d.tangent
        out = d.program.output
        via = f"{dotted(out.name)} = " if out is not None and show_program else ""
        lines.append(f"\n{_FDOT} = {via}{tangent}")
    if jacobian:
        lines.extend(_jacobian_lines(d, latex, shaped))
    if d.complete:
        point = ", ".join(f"{k} = {fmt(d.at[k])}" for k in f.variables)
        lines.append(f"\nat {point}:  f = {fmt(d.value)}")
        lines.extend(_numbers(d))
    elif d.at:
        missing = [v for v in f.variables if v not in d.at]
        lines.append(f"\n(no values: give --at for {', '.join(missing)} too)")
    return "\n".join(lines)


def _numbers(d: ForwardDerivatives) -> list:
    n_in = sum(int(np.size(d.shapes[k])) for k in d.wrt)
    if len(d.directions) == 1:
        v = d.directions[0]
        out = [f"  direction {_seed_text(d, v)}:",
               f"  forward mode:  {_FDOT} = {fmt(d.columns[0])}",
               f"  reverse mode:  ⟨∇f, v⟩ = {fmt(d.reverse[0])}   {_mark(d.agrees[0])}"
               if np.ndim(d.value) == 0 else
               f"  reverse mode:  J v = {fmt(d.reverse[0])}   {_mark(d.agrees[0])}"]
        if 0 < len(d.program.lines) <= 40:
            out.append("  each line's value:")
            vals = d.program.tangents(d.at, v)
            for ln in d.program.lines:
                out.append(f"    {ln.name} = {fmt(vals[ln.name])}")
        return out
    if n_in <= _LISTED and np.ndim(d.value) == 0:
        out = ["  one forward pass per input (its tangent 1, the others 0):"]
        for v, c, a in zip(d.directions, d.columns, d.agrees):
            who = next((f"∂f/∂{k}" for k in d.wrt if np.ndim(d.shapes[k]) == 0
                        and float(v[k]) == 1.0), None)
            label = who or _seed_text(d, v)
            out.append(f"    {label} = {fmt(c)}   {_mark(a)} (reverse mode)")
        return out
    jac = np.stack([np.ravel(c) for c in d.columns], axis=1) + 0.0  # (no -0)
    return [f"  Jacobian by forward mode, one pass per column ({jac.shape[1]} passes):",
            *(f"    {fmt(row)}" for row in jac),
            f"  reverse mode (one pass per row):   {_mark(all(d.agrees))}"]


def _jacobian_lines(d: ForwardDerivatives, latex: bool, shaped: dict) -> list:
    out = []
    if d.jacobians and not latex:
        out.append("\nJacobian in matrix form (every size):")
        for k, text in d.jacobians.items():
            out.append(f"  ∂f/∂{k} = {text if text is not None else '(no matrix form)'}")
        if d.labels:  # (named sizes: the elements would be those of the traced size)
            return out
    j = d.jacobian_matrix()
    seeds = [s for a in d.program.seeds.values() for s in np.ravel(a)]
    cols = ", ".join(str(s)[:1] + str(s)[2:] for s in seeds)  # (x_0, not ẋ_0)
    out.append(f"\nJacobian over the elements (rows: the output's; columns: {cols}):")
    if latex:
        out.append(sp.latex(j))
        return out
    pretty = sp.pretty(j, use_unicode=True, wrap_line=False)
    if max(map(len, pretty.splitlines())) <= _WIDTH:
        out.append(pretty)
        return out
    rows = np.ravel(np.asarray(d.program.tangent, dtype=object)).size
    for i in range(j.rows):
        for k in range(j.cols):
            if j[i, k] != 0:
                row = f"[{i}]" if rows > 1 else ""
                out.append(f"  ∂f{row}/∂{cols.split(', ')[k]} = {j[i, k]}")
    out.append("  (the other entries are 0)")
    return out


def forward_json(d: ForwardDerivatives, expression: str, jacobian: bool) -> dict:
    obj = {"expression": expression, "mode": "forward",
           "variables": d.expression.variables, "wrt": d.wrt,
           "seeds": {k: dotted(k) for k in d.wrt},
           "steps": [{"name": ln.name, "kind": ln.kind, "expr": ln.rhs()}
                     for ln in d.program.lines],
           "tangent": str(d.tangent),
           "at": {k: to_plain(v) for k, v in d.at.items()},
           "value": to_plain(d.value) if d.value is not None else None,
           "directions": [{k: to_plain(v[k]) for k in d.wrt} for v in d.directions],
           "forward": None if d.columns is None else [to_plain(c) for c in d.columns],
           "reverse": None if d.reverse is None else [to_plain(c) for c in d.reverse],
           "agree": d.agree,
           "matrix": {"jvp": d.jvp, "vjp": d.vjp, "no_form": d.no_form}}
    if jacobian:
        obj["jacobian"] = {"symbolic": [[str(e) for e in row]
                                        for row in d.jacobian_matrix().tolist()],
                           "matrix": d.jacobians}
    return obj
