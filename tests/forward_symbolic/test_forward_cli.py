"""Forward mode on the command line and in drawings: ``diff --mode forward``,
``diff --jacobian``, ``check --jacobian``, ``draw --mode forward [--steps]``.

Oracles: reverse mode's own numbers (printed beside), the tangent values of
``symgrad.autograd.forward_ad`` against central differences, and real Graphviz output.
"""
from __future__ import annotations

import json
import shutil
import unicodedata

import numpy as np
import pytest
from click.testing import CliRunner

import symgrad
from symgrad.drawing import draw_tangent_steps, draw_tangents
from symgrad.drawing.dotwriter import esc
from symgrad.symbolic.tangents import dotted
from symgrad_cli.main import cli

DX, DY = dotted("x"), dotted("y")


def nfc(text: str) -> str:
    """Drawings write precomposed letters where Unicode has them (ẋ, ḟ)."""
    return unicodedata.normalize("NFC", text)


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_diff_forward_prints_the_tangent_program():
    r = run("diff", "sin(x*y)", "--mode", "forward")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    i = lines.index("v1 = x*y                # MulBackward0")
    assert lines[i:i + 4] == ["v1 = x*y                # MulBackward0",
                              f"v{dotted('')}1 = y·{DX} + x·{DY}",
                              "v2 = sin(v1)            # SinBackward0",
                              f"v{dotted('')}2 = cos(v1)·v{dotted('')}1"]
    assert f"seeds {DX}, {DY}" in r.output
    assert "reverse mode" not in r.output  # (no point: no numbers)


def test_diff_forward_numbers_agree_with_reverse_mode():
    r = run("diff", "sin(x*y)", "--mode", "forward", "--at", "x=1", "--at", "y=2")
    assert r.exit_code == 0
    assert "∂f/∂x = -0.8322936731   ✓ agrees" in r.output
    assert "∂f/∂y = -0.4161468365   ✓ agrees" in r.output
    r = run("diff", "sin(x*y)", "--mode", "forward", "--at", "x=1", "--at", "y=2",
            "--direction", "x=1", "--direction", "y=0.5", "--json")
    obj = json.loads(r.output)
    want = np.cos(2.0) * (2.0 * 1 + 1.0 * 0.5)
    assert obj["mode"] == "forward" and obj["agree"] is True
    assert np.isclose(obj["forward"][0], want) and np.isclose(obj["reverse"][0], want)
    assert obj["directions"] == [{"x": 1.0, "y": 0.5}]
    assert [s["kind"] for s in obj["steps"]] == ["forward", "tangent"] * 2


def test_diff_forward_vector_function_and_jacobian():
    r = run("diff", "sin(x)", "--mode", "forward", "--at", "x=[1,2,3]", "--jacobian")
    assert r.exit_code == 0, r.output
    assert "∂f/∂x = diag(cos(x))" in r.output
    assert "Jacobian by forward mode, one pass per column (3 passes)" in r.output
    assert "✓ agrees" in r.output and "✗" not in r.output
    r = run("diff", "tanh(W @ x + b)", "--mode", "forward", "--shape", "W=n,m",
            "--shape", "x=m", "--shape", "b=n", "--jacobian", "--wrt", "x")
    assert r.exit_code == 0, r.output
    assert f"J v   (forward):  {dotted('f')} = W @ {DX} * (1 - tanh(W @ x + b) ** 2)" \
        in r.output
    assert "x\u0304 = W.T @ (f\u0304 * (1 - tanh(W @ x + b) ** 2))" in r.output
    assert "∂f/∂x = diag(1 - tanh(W @ x + b) ** 2) @ W" in r.output
    assert "x_0" not in r.output  # (named sizes: nothing at the traced size)


@pytest.mark.parametrize("args,message", [
    (["--direction", "z=1"], "'z' is not a variable"),
    (["--direction", "x=[1,"], "--direction x=..."),
    (["--direction", "x=[1,2]", "--at", "x=1", "--at", "y=2"], "direction for x has shape"),
    (["--order", "2"], "--order with --mode forward"),
    (["--wrt", "q"], "--wrt q: not a variable"),
])
def test_diff_forward_bad_input_is_one_line(args, message):
    r = CliRunner().invoke(cli, ["diff", "sin(x*y)", "--mode", "forward", *args])
    assert r.exit_code == 2, r.output
    err = r.output.strip().splitlines()
    assert message in r.output and "Traceback" not in r.output
    assert len([line for line in err if line.startswith("symgrad: error")]) == 1


def test_direction_needs_forward_mode():
    r = CliRunner().invoke(cli, ["diff", "x*y", "--direction", "x=1"])
    assert r.exit_code == 2 and "--direction is for --mode forward" in r.output


def test_check_jacobian_exit_codes():
    ok = run("check", "sin(x)", "--jacobian", "x=diag(cos(x))", "--shape", "x=n",
             "--samples", "2")
    assert ok.exit_code == 0 and ok.output.startswith("correct: Jacobian of sin(x)")
    wrong = CliRunner().invoke(cli, ["check", "sin(x)", "--jacobian", "x=cos(x)", "--at",
                                     "x=[1,2]", "--samples", "2"])
    assert wrong.exit_code == 1 and "the Jacobian is diag(cos(x))" in wrong.output
    bad = CliRunner().invoke(cli, ["check", "sin(x)", "--jacobian", "x=cos(x",
                                   "--grad", "x=cos(x)"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_tangents_in_drawings_are_forward_ads_and_match_differences():
    x = symgrad.tensor(0.7, dtype=symgrad.float64, requires_grad=True)
    y = symgrad.tensor(-1.3, dtype=symgrad.float64, requires_grad=True)
    f = symgrad.tanh(x * y) + x ** 2
    d = draw_tangents(f, {"x": 0.25, "y": 2.0}, names={"x": x, "y": y, "f": f})
    h = 1e-6

    def g(a, b):
        return np.tanh(a * b) + a * a
    fd = (g(0.7 + h * 0.25, -1.3 + h * 2.0) - g(0.7 - h * 0.25, -1.3 - h * 2.0)) / (2 * h)
    shown = float(d.source.split(nfc(f"tangent {dotted('f')} = "))[1].split("<")[0])
    assert np.isclose(shown, fd, rtol=1e-3)
    assert x.grad is None and f.grad_fn is not None  # the user's graph untouched
    assert "∂/∂x = y" in d.source and "∂/∂(x·y) = 1 - tanh(x·y)²" in d.source


def test_drawn_text_is_escaped():
    x = symgrad.tensor(1.0, requires_grad=True, name="<b>&x")
    f = symgrad.sin(x)
    src = draw_tangents(f, names=False, title='say "</TD>"').source
    assert "<b>&x" not in src and esc("<b>&x") in src
    assert "</TD>\"" not in src.replace("</TD></TR>", "")


def test_step_frames_in_evaluation_order():
    x = symgrad.tensor(2.0, requires_grad=True)
    y = symgrad.tensor(3.0, requires_grad=True)
    f = symgrad.exp(x * y) + y
    frames = draw_tangent_steps(f, direction={"y": 1.0}, names={"x": x, "y": y, "f": f})
    assert len(frames) == 4
    assert frames.captions[0].startswith("Step 0 of 3: forward mode starts")
    assert [c.split(": ")[1].split(" computes")[0] for c in frames.captions[1:]] == \
        ["×", "exp", "+"]
    assert frames.captions[1].endswith(nfc(f"(x·y)˙ = y·{DX} + x·{DY} = 3·0 + 2·1 = 2"))
    assert "= ?" in frames.sources[1] and "= ?" not in frames.sources[-1]


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")
def test_draw_forward_mode_writes_png_and_both_players(tmp_path):
    out = tmp_path / "fwd.png"
    r = run("draw", "sin(x*y)", "--mode", "forward", "--at", "x=1", "--at", "y=2",
            "-o", str(out), "--steps", str(tmp_path / "frames"))
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    frames = sorted(p.name for p in (tmp_path / "frames").glob("step_*.svg"))
    assert frames == ["step_00.svg", "step_01.svg", "step_02.svg"]
    assert len(list((tmp_path / "frames" / "reverse").glob("step_*.svg"))) == 5
    page = (tmp_path / "frames" / "steps.html").read_text(encoding="utf-8")
    assert page.count('class="symgrad-player"') == 2
    assert "Forward mode: tangents flow forward" in page
    assert "tangent " in (tmp_path / "frames" / "step_02.svg").read_text(encoding="utf-8")


def test_draw_forward_mode_needs_values():
    r = CliRunner().invoke(cli, ["draw", "sin(x*y)", "--mode", "forward", "--at", "x=1",
                                 "-o", "-", "--format", "dot"])
    assert r.exit_code == 2 and "give --at for y" in r.output
    r = CliRunner().invoke(cli, ["draw", "sin(x*y)", "--direction", "x=1", "--at", "x=1",
                                 "--at", "y=2", "-o", "-", "--format", "dot"])
    assert r.exit_code == 2 and "--direction is for --mode forward" in r.output
