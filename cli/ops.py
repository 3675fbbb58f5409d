"""``symgrad ops``: the op table, as every other layer reads it."""
from __future__ import annotations

import click

from symgrad.ops import OPS

from ._common import echo_json, style

__all__ = ["ops"]


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def ops(as_json: bool) -> None:
    """List the op table: each op, its PyTorch node name and its derivative rule.

    \b
    Examples:
      symgrad ops
      symgrad ops --json
    """
    rows = []
    for op in OPS.values():
        if op.grads is None or op.key.startswith("function:"):
            continue
        local = [f"∂/∂{name}: {text}" for name, text in zip(op.inputs, op.local or ())
                 if text]
        rows.append({"op": op.key, "node": op.node_name, "inputs": list(op.inputs),
                     "attrs": list(op.attrs), "saves": list(op.saves), "derivative": local})
    if as_json:
        echo_json({"ops": rows})
        return
    width = max(len(r["op"]) for r in rows)
    node_w = max(len(r["node"]) for r in rows)
    for r in rows:
        click.echo(f"{style(r['op'].ljust(width), bold=True)}  {r['node'].ljust(node_w)}  "
                   + "; ".join(r["derivative"]))
