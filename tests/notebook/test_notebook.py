"""The lesson notebook (``examples/lesson.ipynb``) executed headless in a real IPython kernel
with nbclient, every output checked: no errors, the printed values PyTorch's (run for real
where it is installed), the inline drawing's visible labels, two inline step players.

The checks themselves live in ``lesson_check.py`` beside this file, which
``tools/wheel_smoke.py`` also runs in a fresh environment made from the wheel.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
_MISSING = [m for m in ("nbclient", "nbformat", "ipykernel")
            if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(
    bool(_MISSING), reason=f"running a notebook needs {', '.join(_MISSING)} "
                           "(pip install -e '.[test]')")

sys.path.insert(0, str(HERE))
import lesson_check  # noqa: E402


@pytest.fixture(scope="module")
def nb(tmp_path_factory):
    """The lesson, executed once in a kernel whose working directory is a temporary one."""
    return lesson_check.execute(lesson_check.NOTEBOOK, tmp_path_factory.mktemp("lesson"))


def _problems(nb, start: str) -> list[str]:
    return [p for p in lesson_check.problems(nb) if p.startswith(start)]


def test_every_cell_runs_without_error(nb):
    bad = [p for p in lesson_check.problems(nb)
           if p.startswith("cell ") and (" raised " in p or " did not run" in p
                                         or " stderr" in p)]
    assert not bad, "\n".join(bad)


def test_printed_values_are_the_expected_ones(nb):
    bad = [p for p in lesson_check.problems(nb)
           if p.startswith("labels printed") or "expected: " in p]
    assert not bad, "\n".join(bad)


def test_printed_values_match_pytorch(nb, torch):
    """The ``values`` cells run under real PyTorch print the same numbers (and so
    ``EXPECTED`` is PyTorch's)."""
    script = lesson_check.torch_source(nb)
    assert "import torch" in script and "symgrad" not in script
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(script, "<lesson under torch>", "exec"), {})
    want = lesson_check.printed_values(out.getvalue())
    got = [v for c in nb.cells if "values" in c.get("metadata", {}).get("tags", [])
           for v in lesson_check.printed_values(lesson_check._stream_text(c))]
    assert len(want) == sum(lesson_check.REPEATS.get(k, 1) for k in lesson_check.EXPECTED)
    assert not lesson_check.compare_values(got, want, "torch")
    expected = [(label, lesson_check.EXPECTED[label]) for label, _ in want]
    assert not lesson_check.compare_values(want, expected, "EXPECTED")


def test_drawing_displays_inline_with_visible_node_names(nb):
    bad = [p for p in lesson_check.problems(nb)
           if p.startswith("drawing cell") or "tagged 'drawing'" in p]
    assert not bad, "\n".join(bad)


def test_two_step_players_display_inline_side_by_side(nb):
    """Depends on StepFrames displaying inline (``_repr_html_``) and on players that are
    self-contained (their own element ids)."""
    bad = _problems(nb, "player")  # "player k: ...", "players j and k share ..."
    assert not bad, "\n".join(bad)


def test_step_players_leave_the_gradients_alone(nb):
    """``x.grad``/``y.grad`` printed after the two players are still ``f.backward()``'s 40
    and 3 (``draw_steps`` never changes the user's tensors)."""
    after = [c for c in nb.cells if "values" in c.get("metadata", {}).get("tags", [])
             and "players" in c.source]
    assert len(after) == 1
    got = lesson_check.printed_values(lesson_check._stream_text(after[0]))
    assert got == [("x.grad", [40.0]), ("y.grad", [3.0])]


def test_checks_catch_what_they_claim():
    """The checker is not vacuous: an error, a wrong value, a drawing without labels and a
    player shown as its repr are all reported."""
    import nbformat  # why: optional test dependency (the module is skipped without it)

    nb = nbformat.read(str(lesson_check.NOTEBOOK), as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.execution_count = 1
        tags = cell.metadata.get("tags", [])
        if "values" in tags:
            text = "\n".join(f"{k} = {v}" for k, v in lesson_check.EXPECTED.items())
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        elif "drawing" in tags:
            svg = "<svg><title>AddBackward0</title><text>fn0_op</text></svg>"
            cell.outputs = [nbformat.v4.new_output("display_data",
                                                   data={"image/svg+xml": svg})]
        elif "player" in tags:
            cell.outputs = [nbformat.v4.new_output(
                "execute_result", data={"text/plain": "<StepFrames at 0x1>"},
                execution_count=1)]
    cell.outputs.append(nbformat.v4.new_output("error", ename="ValueError", evalue="boom",
                                               traceback=[]))
    found = lesson_check.problems(nb)
    assert any("raised ValueError: boom" in p for p in found)
    assert any(p.startswith("labels printed") for p in found)  # x.grad printed once each
    assert any(p.startswith("drawing cell: visible text lacks") and "fn0_op" in p
               for p in found)
    assert sum(p.startswith("player ") and "no text/html" in p for p in found) == 2
    assert lesson_check.compare_values([("f", [80.5])], [("f", [80.0])], "torch")
