"""The command line, driven through click's CliRunner and one real subprocess."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner

from symgrad_cli.main import cli

EXAMPLES = __import__("pathlib").Path(__file__).resolve().parent.parent / "examples"


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_diff_text_matches_sympy_and_reverse_mode():
    r = run("diff", "5*x**2 + 3*sin(y)", "--at", "x=4", "--at", "y=0")
    assert r.exit_code == 0, r.output
    assert "∂f/∂x = 10*x" in r.output and "∂f/∂y = 3*cos(y)" in r.output
    assert r.output.count("✓ agrees") == 2
    assert "f = 80" in r.output


def test_diff_json_schema_and_values():
    r = run("diff", "sin(dot(x, y))", "--at", "x=[1,2,3]", "--at", "y=[5,6,7]", "--json")
    assert r.exit_code == 0, r.output
    obj = json.loads(r.output)
    assert set(obj) >= {"expression", "variables", "at", "value", "gradient", "agree"}
    x, y = np.array([1., 2, 3]), np.array([5., 6, 7])
    assert obj["value"] == pytest.approx(np.sin(x @ y))
    assert obj["gradient"]["x"]["value"] == pytest.approx(list(np.cos(x @ y) * y))
    assert obj["gradient"]["y"]["value"] == pytest.approx(list(np.cos(x @ y) * x))
    assert obj["agree"] is True


def test_diff_hessian_against_sympy():
    r = run("diff", "x**3*y + exp(x*y)", "--order", "2", "--at", "x=0.5", "--at", "y=2",
            "--json")
    assert r.exit_code == 0, r.output
    h = json.loads(r.output)["hessian"]
    x, y = sp.symbols("x y")
    f = x ** 3 * y + sp.exp(x * y)
    want = np.array(sp.hessian(f, (x, y)).subs({x: 0.5, y: 2}).evalf(), dtype=float)
    assert np.allclose(h["value"], want) and h["agree"] is True


def test_diff_steps_and_latex():
    r = run("diff", "tanh(1.1*tanh(x) + 0.1)", "--steps", "--latex", "--wrt", "x")
    assert r.exit_code == 0, r.output
    assert "v̄" in r.output and "TanhBackward0" in r.output and "\\tanh" in r.output


@pytest.mark.parametrize("args, fragment", [
    (("diff", "5*x**2 +"), "column"),
    (("diff", "sin(x", "--at", "x=1"), "expected ')'"),
    (("diff", "__import__('os')"), "error"),
    (("diff", "x + 1", "--at", "z=3"), "'z' is not a variable"),
    (("diff", "x + 1", "--at", "x=[1,"), "--at x"),
    (("diff", "x + 1", "--wrt", "q"), "--wrt q"),
    (("diff", "x*y", "--at", "x=[1,2]", "--at", "y=[1,2,3]"), "error"),
    (("check", "x**2"), "--grad"),
    (("check", "x**2", "--grad", "x=2*"), "--grad x"),
])
def test_bad_input_is_one_clear_error_exit_2(args, fragment):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert fragment in r.output
    assert "Traceback" not in r.output


def test_parse_error_has_a_caret_under_the_column():
    r = run("diff", "sin(x) + + cos(")
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    caret = next(ln for ln in lines if ln.strip() == "^")
    text = lines[lines.index(caret) - 1]
    assert text.strip() == "sin(x) + + cos("
    assert caret.index("^") == len(text) - len(text.lstrip()) + len("sin(x) + + cos(")


@pytest.mark.parametrize("grad, code, verdict", [
    ("x=cos(dot(x,y))*y", 0, "correct"),
    ("x=sin(dot(x,y))*y", 1, "wrong"),
])
def test_check_verdicts_and_exit_codes(grad, code, verdict):
    r = run("check", "sin(dot(x,y))", "--grad", grad, "--at", "x=[1,2,3]",
            "--at", "y=[5,6,7]", "--json")
    assert r.exit_code == code, r.output
    obj = json.loads(r.output)
    assert obj["verdict"] == verdict
    if verdict == "wrong":
        assert obj["counterexample"] is not None


def test_check_batch_problem_set():
    r = run("check", "--batch", str(EXAMPLES / "problems.toml"), "--json")
    assert r.exit_code == 1
    verdicts = {p["name"]: p["verdict"] for p in json.loads(r.output)["problems"]}
    assert verdicts["1a product rule"] == "correct"
    assert verdicts["1b chain rule"] == "wrong"
    assert verdicts["2a dot product"] == "correct"


def test_ops_lists_the_table():
    from symgrad.ops import OPS
    r = run("ops", "--json")
    assert r.exit_code == 0
    rows = {row["op"]: row for row in json.loads(r.output)["ops"]}
    assert rows["mul"]["node"] == "MulBackward0"
    assert {k for k, op in OPS.items() if op.grads is not None} == set(rows)
    assert rows["sin"]["methods"] == ["sin"] and rows["sin"]["expr"] == "sin"
    every = {row["op"] for row in json.loads(run("ops", "--all", "--json").output)["ops"]}
    assert every == set(OPS) and "matmul" in every


def test_draw_writes_dot_without_graphviz_program(tmp_path):
    out = tmp_path / "g.dot"
    r = run("draw", "5*x**2 + 3*sin(y)", "--at", "x=4", "--at", "y=0", "-o", str(out))
    assert r.exit_code == 0, r.output
    src = out.read_text()
    for name in ("MulBackward0", "PowBackward0", "SinBackward0", "AccumulateGrad"):
        assert name in src


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")
def test_draw_png_and_steps(tmp_path):
    out = tmp_path / "g.png"
    r = run("draw", "x**2*y", "--at", "x=3", "--at", "y=2", "-o", str(out), "--steps",
            str(tmp_path / "frames"))
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert list((tmp_path / "frames").glob("step_*.svg"))


def test_draw_unknown_suffix_is_bad_input(tmp_path):
    r = run("draw", "x*2", "-o", str(tmp_path / "g.xyz"))
    assert r.exit_code == 2 and not (tmp_path / "g.xyz").exists()


def test_trace_runs_a_torch_script(tmp_path):
    script = tmp_path / "lesson.py"
    script.write_text("import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
                      "f = x ** 3\nf.backward()\n")
    out = tmp_path / "f.dot"
    r = run("trace", str(script), "--var", "f", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "PowBackward0" in out.read_text()


def test_help_has_examples():
    for cmd in ("diff", "draw", "check", "ops", "trace"):
        r = run(cmd, "--help")
        assert r.exit_code == 0 and "Example" in r.output


def test_installed_console_script_and_module():
    exe = shutil.which("symgrad")
    cmds = [[sys.executable, "-m", "symgrad"]] + ([[exe]] if exe else [])
    for cmd in cmds:
        p = subprocess.run(cmd + ["diff", "x**2", "--at", "x=3", "--json"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["gradient"]["x"]["value"] == 6.0
        p = subprocess.run(cmd + ["diff", "x**"], capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 2 and "Traceback" not in p.stderr
        assert p.stderr.startswith("symgrad: error:")


def test_diff_of_a_deep_nest_falls_back_to_the_raw_form_and_still_agrees():
    deep = "x"
    for _ in range(6):
        deep = f"tanh(1.1*{deep} + 0.1)"
    r = run("diff", deep, "--at", "x=0.3", "--timeout", "1", "--json")
    assert r.exit_code == 0, r.output
    obj = json.loads(r.output)
    assert obj["agree"] is True
    x = 0.3
    grad = 1.0
    for _ in range(6):
        x = np.tanh(1.1 * x + 0.1)
        grad *= 1.1 * (1 - x * x)
    assert obj["gradient"]["x"]["value"] == pytest.approx(grad)
