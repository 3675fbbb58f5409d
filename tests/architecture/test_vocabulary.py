"""One vocabulary: rules reach ops through ``m.call(OP, ...)``, backends name no op, no
layer above ``symgrad/ops`` decides by an op's name string, and the layers that interpret
the table (engine, IR, drawing, ``func``) name no op record: what forward mode and vmap
know of an op is a side table beside it (``tools/vocabulary.py``).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy

import symgrad
from symgrad import ops
from symgrad.ir.backends import Backend

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


vocabulary = _load("vocabulary")


def test_no_layer_decides_by_an_op_name():
    uses = vocabulary.name_uses(ROOT, vocabulary.op_names())
    assert uses == [], "\n".join(f"{p}:{n}: {c!r}" for p, n, c in uses)


def test_the_walk_finds_name_decisions(tmp_path):
    """The walk is not vacuous: it flags names compared or looked up, not PyTorch's own
    string arguments, numpy's names or the matrix algebra's node kinds."""
    layer = tmp_path / "symgrad" / "symbolic"
    layer.mkdir(parents=True)
    (layer / "bad.py").write_text(
        "def f(name, x, op, reduction):\n"
        "    if name == 'exp':\n"                   # flagged
        "        return fn('sum', x)\n"             # flagged
        "    if op.name in ('log', 'sqrt'):\n"      # flagged twice
        "        return OPS['mul']\n"               # flagged
        "    if x.args[0] == 'inverse':\n"          # flagged
        "        return x\n"
        "    if reduction == 'mean' or x.kind == 'mul':\n"  # PyTorch's argument; a kind
        "        return {'sum': 1}\n"               # numpy's name in a protocol table
        "    return getattr(x, 'shape')\n")
    hits = vocabulary.name_uses(tmp_path, vocabulary.op_names())
    assert sorted(c for _, _, c in hits) == ["exp", "inverse", "log", "mul", "sqrt", "sum"]


def test_no_interpreter_names_an_op_record():
    uses = vocabulary.record_uses(ROOT, vocabulary.record_names())
    assert uses == [], "\n".join(f"{p}:{n}: {c}" for p, n, c in uses)
    assert "func" in vocabulary.INTERPRETERS


def test_the_walk_finds_records_named(tmp_path):
    """Records named through the ops package or imported from a family module are
    flagged; a tensor's ``.T`` and a local name that happens to spell a record are not."""
    layer = tmp_path / "symgrad" / "func"
    layer.mkdir(parents=True)
    (layer / "bad.py").write_text(
        "from .. import ops as O\n"
        "from ..ops.linalg import MM\n"                  # flagged
        "from ..ops.tables import BATCHING\n"
        "RULES = {O.CONVOLUTION: 1, MM: 2}\n"            # O.CONVOLUTION flagged
        "def f(x, rules):\n"
        "    ADDMM = 3\n"
        "    return x.T, rules.SUM, BATCHING.get(x), ADDMM\n")
    hits = vocabulary.record_uses(tmp_path, vocabulary.record_names(), ("func",))
    assert sorted(c for _, _, c in hits) == ["CONVOLUTION", "MM"]


@pytest.mark.parametrize("label", ["numpy", "recorded", "sympy", "matrix", "text"])
def test_backends_name_no_op_and_follow_the_protocol(label):
    backend = vocabulary.backends()[label]
    assert isinstance(backend, Backend)
    names = vocabulary.op_names()
    counted = vocabulary.backend_methods(names)[label]
    assert counted["named_after_ops"] == []
    assert counted["methods"] <= 22  # arithmetic, call, shapes, the engine's questions


def test_a_backend_runs_a_called_op_by_its_record():
    """Each interpretation of ``m.call``: numpy runs the forward, the recorded backend
    records the op's node, SymPy its mapping, text its template."""
    backends = vocabulary.backends()
    assert backends["numpy"].call(ops.COS, 0.0) == 1.0
    x = symgrad.tensor(0.5, requires_grad=True)
    assert type(backends["recorded"].call(ops.COS, x).grad_fn).__name__ == "CosBackward0"
    s = sympy.Symbol("s")
    assert backends["sympy"].call(ops.COS, np.array([s], dtype=object))[0] == sympy.cos(s)
    assert str(backends["text"].call(ops.SIGMOID, 1)) == "σ(1)"


def test_hand_written_c_is_counted():
    assert vocabulary.c_lines(ROOT) >= 0
