"""`symgrad trace` of the course's models (a LeNet, an MLP with batch norm): the drawing
has PyTorch's backward nodes, one for one, and names every parameter."""
from __future__ import annotations

import collections
import re
import runpy
from pathlib import Path

import pytest
from click.testing import CliRunner

from symgrad_cli.main import cli

torch = pytest.importorskip("torch")

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
SCRIPTS = ["lenet.py", "batchnorm_mlp.py"]


def _torch_nodes(script: Path) -> collections.Counter:
    """The backward nodes PyTorch builds for the script's ``loss``."""
    loss = runpy.run_path(str(script))["loss"]
    seen, stack, names = set(), [loss.grad_fn], collections.Counter()
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        names[type(fn).__name__] += 1
        stack.extend(f for f, _ in fn.next_functions)
    return names


@pytest.mark.parametrize("name", SCRIPTS)
def test_trace_draws_pytorchs_nodes_and_parameter_names(tmp_path, name):
    script = MODELS / name
    out = tmp_path / "g.dot"
    r = CliRunner().invoke(cli, ["trace", str(script), "--var", "loss", "-o", str(out)])
    assert r.exit_code == 0, r.output
    dot = out.read_text()
    expected = _torch_nodes(script)
    drawn = collections.Counter(re.findall(
        r'tooltip="([A-Z][A-Za-z0-9]*Backward\d|AccumulateGrad)"', dot))
    assert drawn == expected
    module = runpy.run_path(str(script))
    model = module.get("net") or module.get("model")
    prefix = "net" if "net" in module else "model"
    for pname, _ in model.named_parameters():
        assert f"{prefix}.{pname}" in dot, pname
