"""makemore's batch-norm lesson (Karpathy, "Activations & Gradients, BatchNorm"), on a
small word list and 30 steps: its own Linear/BatchNorm1d/Tanh classes, a seeded
``torch.Generator``, ``retain_grad`` on every layer, the update-to-data ratios and
``torch.histogram(t, density=True)``.  The script runs unchanged under ``import torch``
and under ``import symgrad as torch`` and prints the same text (same seed, same draws)."""
from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

pytest.importorskip("torch")

LESSON = (Path(__file__).with_name("makemore_batchnorm_lesson.txt")).read_text()


def _printed(source: str) -> str:
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        warnings.simplefilter("ignore")
        exec(compile(source, "makemore_batchnorm_lesson", "exec"), {"__name__": "lesson"})
    # a mean that is 0 to the printed digits may carry either sign (summation order)
    return re.sub(r"[+-](0\.0+)\b", r"\1", out.getvalue())


def test_the_lesson_prints_what_pytorch_prints():
    want = _printed(LESSON)
    ours = LESSON.replace("import torch\n", "import symgrad as torch\n", 1).replace(
        "import torch.nn.functional as F\n", "import symgrad.nn.functional as F\n", 1)
    assert ours != LESSON
    got = _printed(ours)
    assert "grad:data ratio" in want and "30: " not in want.splitlines()[0]
    assert got == want
