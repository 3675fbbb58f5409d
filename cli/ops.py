"""``symgrad ops``: the op table, as every other layer reads it."""
from __future__ import annotations

import click

from symgrad.ops import OPS

from ._common import echo_json, style

__all__ = ["ops"]


def _names(row: dict) -> str:
    """Where users meet the op: ``symgrad.f``, ``Tensor.m``, the expression language."""
    out = [f"symgrad.{row['function']}"] if row["function"] else []
    out += [f"Tensor.{m}" for m in row["methods"] + ([row["inplace"]] if row["inplace"] else [])]
    out += [f"F.{row['functional']}"] if row["functional"] else []
    out += [f"expr {row['expr']}(...)"] if row["expr"] else []
    return ", ".join(out)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--all", "every", is_flag=True,
              help="Also the ops with no gradient (comparisons, argmax).")
def ops(as_json: bool, every: bool) -> None:
    """List the op table: each op, its PyTorch node name, its derivative rule, and its
    names on every surface (symgrad.f, Tensor.m, nn.functional, the expression language).

    \b
    Examples:
      symgrad ops
      symgrad ops --all --json
    """
    # (compositions such as outer and kron differentiate through what they are made of)
    rows = [op.describe() for op in OPS.values()
            if every or op.differentiable or op.composite]
    if as_json:
        echo_json({"ops": rows})
        return
    width = max(len(r["op"]) for r in rows)
    node_w = max(len(r["node"] or "") for r in rows)
    for r in rows:
        names = _names(r)
        rule = "; ".join(r["derivative"]) or "(a composition: recorded as its parts)"
        click.echo(f"{style(r['op'].ljust(width), bold=True)}  {(r['node'] or '').ljust(node_w)}  "
                   + rule + (f"  [{names}]" if names else ""))
