#!/usr/bin/env python3
"""The vocabulary figures of symgrad: code outside ``symgrad/ops`` deciding by an op's
name string, op records named in the layers that only interpret the table (engine, IR,
drawing, ``func``: op-specific rules are side tables beside the ops), the methods of each rule backend
(and those named after an op), and the lines of hand-written C.

An op is reached by its record (``m.call(ops.EXP, x)``, a side table of
``symgrad.ops.tables``), never by its name: the figures count what is left of the other
way.  A name string decides when it is compared with (or looked up as) an op's name:

* ``name == "exp"``, ``op.name in ("sum", "trace")``, ``x.args[0] == "log"`` (the
  function name of a matrix expression);
* ``fn("sum", ...)``, ``op_named("mul")``, ``op_of("log")``, ``OPS["exp"]``.

PyTorch's own string arguments (``reduction == "mean"``), numpy's and SymPy's function
names (``np.sum`` handled by name in numpy's protocol) and the matrix algebra's node kinds
(``x.kind == "mul"``) are not op names in this sense.

Usage::

    python tools/vocabulary.py [--root DIR] [--json]
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

__all__ = ["LAYERS", "INTERPRETERS", "op_names", "name_uses", "record_names", "record_uses",
           "backends", "backend_methods", "c_lines", "measure"]

ROOT = Path(__file__).resolve().parent.parent
#: The layers above the op table, whose code must not decide by op names.
LAYERS = ("engine", "ir", "api", "symbolic", "checking", "drawing")
#: The layers that interpret the op table generically (the engine, the IR, drawings, forward
#: mode and vmap): they reach an op's specifics through its record's fields and its side
#: tables (``JVP``, ``BATCHING``, ...), never by naming the record.
INTERPRETERS = ("engine", "ir", "drawing", "func")
_NAME_ATTRS = {"name", "key", "expr", "node_name", "function", "func"}
_NAME_VARS = {"name", "fname", "func", "op_name", "key"}
_LOOKUPS = {"fn", "op_named", "op_of", "is_op"}
_TABLES = {"OPS", "FUNCTION_OPS", "FUNCTIONS"}


def op_names() -> set:
    """Every name an op goes by: its name and key (with and without a leading ``_``), its
    node name and its names in the expression language and the module."""
    from symgrad import ops  # why: the tool reads the table of the tree it measures
    names = set()
    for op in ops.OPS.values():
        names |= {op.name, op.name.lstrip("_"), op.key, op.key.lstrip("_"), op.node_name}
        names |= set(op.exprs) | set(op.functions)
    return names


def _strings(node) -> list:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _names_an_op(node) -> bool:
    """Whether ``node`` is an expression holding an op's (or a function's) name."""
    if isinstance(node, ast.Attribute):
        return node.attr in _NAME_ATTRS
    if isinstance(node, ast.Name):
        return node.id in _NAME_VARS
    if isinstance(node, ast.Subscript):  # x.args[0]: a matrix expression's function name
        return isinstance(node.value, ast.Attribute) and node.value.attr == "args"
    return False


def _callee(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr if f.attr != "get" else getattr(f.value, "id", "") + ".get"
    return getattr(f, "id", "")


def name_uses(root: Path, names: set) -> list:
    """``[(path, line, name)]``: the places in :data:`LAYERS` deciding by an op's name."""
    hits = []
    for layer in LAYERS:
        for path in sorted((root / "symgrad" / layer).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text(), filename=rel)):
                found = []
                if isinstance(node, ast.Compare):
                    sides = [node.left, *node.comparators]
                    if any(_names_an_op(s) for s in sides):
                        found = [c for s in sides for c in _strings(s)]
                elif isinstance(node, ast.Call) and node.args:
                    callee = _callee(node)
                    if callee in _LOOKUPS or callee.split(".")[0] in _TABLES:
                        found = _strings(node.args[0])
                elif isinstance(node, ast.Subscript) and getattr(node.value, "id", "") in _TABLES:
                    found = _strings(node.slice)
                hits += [(rel, node.lineno, c) for c in found if c in names]
    return hits


def record_names() -> set:
    """The names op records are bound to in ``symgrad.ops`` and its family modules
    (``MUL``, ``CONVOLUTION``, ...)."""
    from symgrad import ops  # why: the tool reads the table of the tree it measures
    names = set()
    for name, module in list(sys.modules.items()):
        if name == "symgrad.ops" or name.startswith("symgrad.ops."):
            names |= {k for k, v in vars(module).items() if isinstance(v, ops.Op)}
    return names


def _ops_aliases(tree) -> set:
    """The names a module binds ``symgrad.ops`` (or one of its modules) to."""
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            inside = (node.module or "").split(".")
            for a in node.names:
                if a.name == "ops" or "ops" in inside:
                    aliases.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names
                        if a.asname and a.name.startswith("symgrad.ops")}
    return aliases


def record_uses(root: Path, names: set, layers: tuple = INTERPRETERS) -> list:
    """``[(path, line, name)]``: op records named in ``layers`` (``O.CONVOLUTION``,
    ``from ..ops.linalg import MM``)."""
    hits = []
    for layer in layers:
        for path in sorted((root / "symgrad" / layer).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(), filename=rel)
            aliases = _ops_aliases(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and "ops" in (node.module or "").split("."):
                    hits += [(rel, node.lineno, a.name) for a in node.names if a.name in names]
                elif (isinstance(node, ast.Attribute) and node.attr in names
                      and isinstance(node.value, ast.Name) and node.value.id in aliases):
                    hits.append((rel, node.lineno, node.attr))
    return hits


def backends() -> dict:
    """The rule backends by name: numpy values, recorded tensors, SymPy, the matrix
    algebra, text."""
    # why: the tool reads the backends of the tree it measures
    from symgrad.api.recorded import TENSOR
    from symgrad.ir.backends import NUMPY
    from symgrad.ops.formula import TEXT
    from symgrad.symbolic.backend import SYMPY
    from symgrad.symbolic.vectors import MATRIX
    return {"numpy": NUMPY, "recorded": TENSOR, "sympy": SYMPY, "matrix": MATRIX,
            "text": TEXT}


def backend_methods(names: set) -> dict:
    """Per backend: its public methods and attributes (inherited ones too), and those
    named after an op."""
    out = {}
    for label, backend in backends().items():
        members = sorted({n for c in type(backend).__mro__[:-1] for n in vars(c)
                          if not n.startswith("_")})
        out[label] = {"methods": len(members),
                      "named_after_ops": [n for n in members if n in names]}
    return out


def c_lines(root: Path) -> int:
    """Lines of hand-written C in the package (a file saying it is generated is not)."""
    total = 0
    for path in sorted((root / "symgrad").rglob("*")):
        if path.suffix in (".c", ".h") and path.is_file():
            text = path.read_text(errors="replace")
            if "generated" not in text[:400].lower():
                total += len(text.splitlines())
    return total


def measure(root: Path = ROOT) -> dict:
    """All vocabulary figures of the tree at ``root``, JSON-ready."""
    sys.path.insert(0, str(root))
    names = op_names()
    uses = name_uses(root, names)
    records = record_uses(root, record_names())
    methods = backend_methods(names)
    return {"op_names_outside_ops": len(uses),
            "op_name_uses": [f"{p}:{n}: {c!r}" for p, n, c in uses],
            "op_records_in_interpreters": len(records),
            "op_record_uses": [f"{p}:{n}: {c}" for p, n, c in records],
            "backend_methods": methods,
            "max_backend_methods": max(m["methods"] for m in methods.values()),
            "backend_methods_named_after_ops":
                sum(len(m["named_after_ops"]) for m in methods.values()),
            "hand_written_c_lines": c_lines(root)}


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure(args.root.resolve())
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"op names decided on outside ops/: {result['op_names_outside_ops']}")
    for use in result["op_name_uses"]:
        print("  " + use)
    print(f"op records named in {', '.join(layer + '/' for layer in INTERPRETERS)}: "
          f"{result['op_records_in_interpreters']}")
    for use in result["op_record_uses"]:
        print("  " + use)
    for label, m in result["backend_methods"].items():
        named = ", ".join(m["named_after_ops"]) or "none"
        print(f"backend {label}: {m['methods']} methods; named after an op: {named}")
    print(f"hand-written C: {result['hand_written_c_lines']} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
