"""The ``symgrad`` command as a new user meets it (README, ``--help``), driven through click's
CliRunner and a few real subprocesses.

Oracles: SymPy (``sympy.diff`` of the text read by SymPy's own parser, here in the
tests only), PyTorch 2.13 autograd (the same text run on torch tensors), and the
README's and ``--help`` texts themselves (every example shown must run).
"""
from __future__ import annotations

import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner

import symgrad
from symgrad_cli.main import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz dot")


def run(*args: str, cwd: pathlib.Path | None = None):
    runner = CliRunner()
    if cwd is None:
        return runner.invoke(cli, list(args))
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(cli, list(args))
    finally:
        os.chdir(old)


def no_crash(r) -> None:
    """Exit status of the contract, and never an exception escaping into click."""
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code in (0, 1, 2, 3), (r.exit_code, r.output)
    assert "Traceback" not in r.output


# --------------------------------------------------------------------------- examples
def _help_examples(command: str) -> list[list[str]]:
    import shlex
    r = run(*([command] if command else []), "--help")
    assert r.exit_code == 0
    block = r.output.split("Examples:", 1)[1]
    out = []
    for line in block.splitlines()[1:]:
        line = line.strip()
        if not line.startswith("symgrad "):
            break
        out.append(shlex.split(line)[1:])
    assert out, f"no examples in symgrad {command} --help"
    return out


# (check --batch over examples/problems.toml is run by test_check_batch_problem_set)
HELP_EXAMPLES = [args for c in ("", "diff", "draw", "check", "ops")
                 for args in _help_examples(c) if "--batch" not in args]


@pytest.mark.parametrize("args", HELP_EXAMPLES, ids=[" ".join(a)[:60] for a in HELP_EXAMPLES])
def test_every_help_example_runs(args, tmp_path):
    (tmp_path / "problems.toml").write_text(
        (ROOT / "examples" / "problems.toml").read_text(encoding="utf-8"), encoding="utf-8")
    r = run(*args, cwd=tmp_path)
    no_crash(r)
    # An example either works or (a check of a wrong gradient) reports it as wrong.
    assert r.exit_code in (0, 1), r.output
    if args[0] == "check" and "--batch" not in args:
        assert r.output.split(":")[0] in ("correct", "WRONG", "{\n  \"verdict\"")
    if args[0] == "draw":
        out = args[args.index("-o") + 1]
        if out == "-":  # standard output
            assert len(r.stdout_bytes) > 100 and not (tmp_path / "-").exists()
        else:
            assert (tmp_path / out).stat().st_size > 100


def test_every_command_has_help_with_an_example_and_json():
    for c in ("diff", "draw", "check", "trace", "ops"):
        r = run(c, "--help")
        assert r.exit_code == 0 and "Examples:" in r.output and "--json" in r.output, c


def test_readme_diff_output_is_what_the_command_prints():
    shown = re.search(r"\$ symgrad diff \"5\*x\*\*2 \+ 3\*sin\(y\)\" --at x=4 --at y=0\n"
                      r"(.*?)```", README, re.S).group(1)
    r = run("diff", "5*x**2 + 3*sin(y)", "--at", "x=4", "--at", "y=0")
    assert r.exit_code == 0, r.output
    assert r.output.strip() == shown.strip()
    # and what it says (so that an edit of the README cannot weaken the test)
    assert "∂f/∂x = 10*x" in r.output and "∂f/∂y = 3*cos(y)" in r.output
    assert r.output.count("✓ agrees") == 2
    assert "f = 80" in r.output


def test_readme_check_example_and_its_python_form():
    r = run("check", "sin(x**2)", "--grad", "x=cos(x**2)")
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert lines[:3] == ["WRONG: gradient of sin(x**2)", "  d/dx: claimed cos(x**2)",
                         "        true    2*x*cos(x**2)"]
    assert "  diagnosis: x: missing factor 2*x" in lines
    # README: symgrad.check("sin(dot(x,y))", {"x": "cos(dot(x,y))*y"}) -- no values
    # given, so x and y must be taken as vectors.
    report = symgrad.check("sin(dot(x,y))", {"x": "cos(dot(x,y))*y"})
    assert report.verdict == "correct"


def test_python_dash_m_the_installed_script_and_main():
    exe = shutil.which("symgrad")
    main = ("import sys; from symgrad_cli.main import main; "
            "sys.argv = ['symgrad'] + sys.argv[1:]; main()")
    cmds = [[sys.executable, "-m", "symgrad"], [sys.executable, "-c", main]] + (
        [[exe]] if exe else [])
    for cmd in cmds:
        p = subprocess.run(cmd + ["diff", "x**2", "--at", "x=3", "--json"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["gradient"]["x"]["value"] == 6.0
        for bad in (["diff", "x**"], ["diff", "sin(", "--at", "x=1"]):
            p = subprocess.run(cmd + bad, capture_output=True, text=True, timeout=120)
            assert p.returncode == 2 and p.stdout == "", (cmd, bad)
            assert p.stderr.startswith("symgrad: error: ") and "Traceback" not in p.stderr


# --------------------------------------------------------------------------- diff vs oracles
_SYMPY_NAMES = {"sigmoid": sp.Lambda(sp.Symbol("u"), 1 / (1 + sp.exp(-sp.Symbol("u")))),
                "relu": sp.Lambda(sp.Symbol("u"), sp.Max(0, sp.Symbol("u"))),
                "abs": sp.Abs, "pi": sp.pi, "e": sp.E}

# (expression, point): every function of the grammar, both constants, ^ and **.
SCALAR_CASES = [
    ("5*x**2 + 3*sin(y)", {"x": 4, "y": 0}),
    ("cos(x)*tan(y) - x/y", {"x": 0.3, "y": -0.7}),
    ("exp(-x^2) + log(y) * sqrt(y)", {"x": -0.5, "y": 2.5}),
    ("tanh(x*y) + sigmoid(x - y)", {"x": 1.5, "y": -0.25}),
    ("relu(x) * abs(y) + relu(-y)", {"x": 0.75, "y": -2}),
    ("pi*x + e^y - x^3/3", {"x": 2, "y": 0.5}),
    ("sin(cos(tan(x))) ** 2", {"x": 0.4}),
    ("x^y", {"x": 1.7, "y": 2.3}),
]
VECTOR_CASES = [
    ("sin(dot(x, y))", {"x": [1, 2, 3], "y": [5, 6, 7]}),
    ("x.T @ A @ x", {"x": [1, -2], "A": [[1, 2], [3, 4]]}),
    ("norm(A @ x) + sum(relu(x)) * mean(abs(x))", {"x": [0.5, -1.5], "A": [[2, 1], [0, 3]]}),
    ("sum(sigmoid(matmul(A, x)) * exp(x)) + sum(tanh(x)^2)",
     {"x": [0.1, -0.2], "A": [[1, 2], [0, -1]]}),
    ("sum(log(x) * sqrt(x) + cos(x) / tan(x))", {"x": [0.5, 1.5]}),
    ("mean(x*x) - dot(x, x.T)/pi", {"x": [1, 2, 4]}),
]


def _torch_value_and_grads(text: str, point: dict):
    torch = pytest.importorskip("torch")
    leaves = {k: torch.tensor(np.asarray(v, dtype=np.float64), requires_grad=True)
              for k, v in point.items()}
    ns = {"sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "exp": torch.exp,
          "log": torch.log, "sqrt": torch.sqrt, "tanh": torch.tanh,
          "sigmoid": torch.sigmoid, "relu": torch.relu, "abs": torch.abs,
          "sum": torch.sum, "mean": torch.mean, "dot": torch.dot, "matmul": torch.matmul,
          "norm": torch.linalg.vector_norm, "pi": math.pi, "e": math.e, **leaves}
    # Test oracle only: the text is trusted test data.
    code = text.replace("^", "**").replace(".T", ".t()")
    out = eval(code, {"__builtins__": {}}, ns)  # noqa: S307
    out = out if isinstance(out, torch.Tensor) else torch.tensor(float(out))
    grads = torch.autograd.grad(out, list(leaves.values()), allow_unused=True,
                                materialize_grads=True)
    return out.item(), {k: g.numpy() for k, g in zip(leaves, grads)}


def _diff_json(text: str, point: dict) -> dict:
    at = [a for k, v in point.items() for a in ("--at", f"{k}={json.dumps(v)}")]
    r = run("diff", text, *at, "--json", "--timeout", "2")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


@pytest.mark.parametrize("text, point", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
def test_diff_scalar_against_sympy_and_torch(text, point):
    obj = _diff_json(text, point)
    syms = {k: sp.Symbol(k, real=True) for k in point}
    from sympy.parsing.sympy_parser import convert_xor, parse_expr, standard_transformations
    f = parse_expr(text, local_dict={**_SYMPY_NAMES, **syms},
                   transformations=standard_transformations + (convert_xor,))
    value, grads = _torch_value_and_grads(text, point)
    assert obj["value"] == pytest.approx(value, rel=1e-12, abs=1e-12)
    assert obj["agree"] is True
    for k, s in syms.items():
        claimed = parse_expr(obj["gradient"][k]["symbolic"],
                             local_dict={**syms, "Heaviside": sp.Heaviside})
        want = sp.diff(f, s)
        subs = {syms[n]: v for n, v in point.items()}
        # equal as functions: at the point and at a second one (kinks aside)
        for pt in (subs, {q: v + 0.125 for q, v in subs.items()}):
            assert complex(claimed.subs(pt).evalf()) == pytest.approx(
                complex(want.subs(pt).evalf()), rel=1e-9, abs=1e-12), (k, claimed, want)
        assert obj["gradient"][k]["value"] == pytest.approx(float(grads[k]), rel=1e-12,
                                                             abs=1e-12)


@pytest.mark.parametrize("text, point", VECTOR_CASES, ids=[c[0] for c in VECTOR_CASES])
def test_diff_vectors_and_matrices_against_torch(text, point):
    obj = _diff_json(text, point)
    value, grads = _torch_value_and_grads(text, point)
    assert obj["value"] == pytest.approx(value, rel=1e-12)
    assert obj["agree"] is True  # symbolic-at-the-point == reverse mode
    for k in point:
        assert np.allclose(obj["gradient"][k]["value"], grads[k], rtol=1e-12, atol=1e-12)
    # the symbolic gradient's elements, read back by SymPy, give the same numbers
    e = symgrad.parse(text)
    prog = e.gradient_program(list(point), **point)
    for k, (syms, _) in prog.leaves.items():
        closed = prog.closed_form(simplify=False)[k]
        subs = {s: float(np.asarray(point[n], dtype=float)[ix])
                for n, (ss, _) in prog.leaves.items() for ix, s in np.ndenumerate(ss)}
        got = np.array([float(c.subs(subs)) for c in np.ravel(np.asarray(closed.tolist()
                        if isinstance(closed, sp.MatrixBase) else [closed], dtype=object))])
        assert np.allclose(got, np.ravel(grads[k]), rtol=1e-10)


def test_diff_steps_latex_hessian_and_wrt():
    r = run("diff", "x**3*y", "--order", "2", "--at", "x=1", "--at", "y=2", "--json",
            "--steps", "--latex", "--wrt", "x")
    obj = json.loads(r.output)
    assert list(obj["gradient"]) == ["x"] and obj["gradient"]["x"]["latex"] == "3 x^{2} y"
    assert obj["hessian"]["value"] == [[12.0]] and obj["hessian"]["agree"] is True
    assert any(line.startswith("x̄ =") for line in obj["steps"])


@pytest.mark.parametrize("text, order", [("x**5*y + sin(y)", 3), ("x", 3), ("3*x", 2),
                                         ("exp(-x^2)*y", 5)])
def test_diff_higher_orders_against_sympy_and_torch(text, order):
    torch = pytest.importorskip("torch")
    r = run("diff", text, "--order", str(order), "--at", "x=0.75", "--at", "y=-1.5",
            "--json") if "y" in text else run("diff", text, "--order", str(order), "--at",
                                              "x=0.75", "--json")
    assert r.exit_code == 0, r.output
    obj = json.loads(r.output)
    x, y = sp.symbols("x y", real=True)
    f = sp.sympify(text.replace("^", "**"), locals={"x": x, "y": y})
    pt = {"x": 0.75, "y": -1.5}
    tleaves = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
               for k, v in pt.items()}
    tf = eval(text.replace("^", "**"), {"exp": torch.exp, "sin": torch.sin}, tleaves)
    for name, s_ in (("x", x), ("y", y)):
        if name not in obj["variables"]:
            continue
        want = sp.diff(f, s_, order)
        if order == 2:
            got = sp.sympify(obj["hessian"]["symbolic"][0][0], locals={"x": x, "y": y})
            value = obj["hessian"]["value"][0][0]
        else:
            d = obj["derivatives"][name]
            got = sp.sympify(d["symbolic"], locals={"x": x, "y": y})
            value = d["value"]
            assert d["agree"] is True
        assert sp.simplify(got - want) == 0, (name, got, want)
        g = tf
        for _ in range(order):
            if not g.requires_grad:  # torch too: a constant has no further derivative
                g = torch.zeros(())
                continue
            (g,) = torch.autograd.grad(g, tleaves[name], create_graph=True,
                                       materialize_grads=True)
        assert value == pytest.approx(g.item(), rel=1e-12, abs=1e-12)


def test_diff_of_the_identity_and_of_a_constant():
    r = run("diff", "x", "--at", "x=1.5", "--order", "2")
    assert r.exit_code == 0 and "✓ agrees" in r.output and "DIFFERS" not in r.output
    r = run("diff", "3*pi", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["gradient"] == {}


def test_expressions_may_start_with_a_minus_sign():
    r = run("diff", "-x**2", "--at", "x=3", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["gradient"]["x"]["value"] == -6.0
    r = run("diff", "-x**2", "--jsn")
    assert r.exit_code == 2 and "--json" in r.output  # a misspelt option is still one


# --------------------------------------------------------------------------- commands
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


def test_a_closed_form_too_large_to_read_is_given_by_its_steps():
    # A tanh chain's closed form repeats the inner chains (quadratic in depth); past
    # MAX_SHOWN_OPS it is not built, and --steps gives the gradient line by line.
    from symgrad.symbolic.differentiation import MAX_SHOWN_OPS
    e = "x"
    for _ in range(24):
        e = f"tanh(1.1*{e} + 0.1)"
    r = run("diff", e, "--at", "x=0.3", "--steps", "--json")
    assert r.exit_code == 0, r.output
    obj = json.loads(r.output)
    grad = obj["gradient"]["x"]
    ops = int(grad["symbolic"].split("about ")[1].split(" operations")[0])
    assert ops > MAX_SHOWN_OPS and "--steps" in grad["symbolic"]
    assert sum(line.startswith("v̄") for line in obj["steps"]) >= 24
    u, want = 0.3, 1.0  # the chain rule by hand: a product of 1.1*(1 - tanh(.)**2)
    for _ in range(24):
        u = np.tanh(1.1 * u + 0.1)
        want *= 1.1 * (1 - u ** 2)
    assert abs(grad["value"] - want) < 1e-12 * abs(want)


def test_parse_error_has_a_caret_under_the_column():
    r = run("diff", "sin(x) + + cos(")
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    caret = next(ln for ln in lines if ln.strip() == "^")
    text = lines[lines.index(caret) - 1]
    assert text.strip() == "sin(x) + + cos("
    assert caret.index("^") == len(text) - len(text.lstrip()) + len("sin(x) + + cos(")


def test_check_batch_problem_set():
    r = run("check", "--batch", str(ROOT / "examples" / "problems.toml"), "--json")
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
    assert {k for k, op in OPS.items() if op.grads is not None or op.composite} == set(rows)
    assert rows["kron"]["expr"] == "kron"  # (a composition: listed with its names)
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


@needs_dot
def test_draw_png_and_steps(tmp_path):
    out = tmp_path / "g.png"
    r = run("draw", "x**2*y", "--at", "x=3", "--at", "y=2", "-o", str(out), "--steps",
            str(tmp_path / "frames"))
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert list((tmp_path / "frames").glob("step_*.svg"))


def test_trace_runs_a_torch_script(tmp_path):
    script = tmp_path / "lesson.py"
    script.write_text("import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
                      "f = x ** 3\nf.backward()\n")
    out = tmp_path / "f.dot"
    r = run("trace", str(script), "--var", "f", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "PowBackward0" in out.read_text()


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


# --------------------------------------------------------------------------- check
@pytest.mark.parametrize("claim, verdict, code", [
    ("cos(dot(x,y))*y", "correct", 0),
    ("y*cos(dot(y,x))", "correct", 0),
    ("cos(dot(x,y))*x", "wrong", 1),
    ("-cos(dot(x,y))*y", "wrong", 1),
])
@pytest.mark.parametrize("values", [("--at", "x=[1,2,3]", "--at", "y=[5,6,7]"), ()],
                         ids=["at", "inferred-shapes"])
def test_check_verdicts(claim, verdict, code, values):
    r = run("check", "sin(dot(x,y))", "--grad", f"x={claim}", *values, "--samples", "3",
            "--json")
    assert r.exit_code == code, r.output
    obj = json.loads(r.output)
    assert set(obj) == {"verdict", "expression", "variables", "points", "counterexample",
                        "diagnosis", "notes", "finite_differences"}
    assert obj["verdict"] == verdict
    if verdict == "wrong":
        c = obj["counterexample"]
        assert c is not None and c["variable"] == "x"
        x, y = (np.asarray(c["point"][k], dtype=float) for k in ("x", "y"))
        assert np.allclose(c["true"], np.cos(x @ y) * y)
        assert not np.allclose(c["claimed"], c["true"])
        assert obj["diagnosis"]
    else:
        assert obj["counterexample"] is None


def test_check_undecided_is_exit_3(monkeypatch):
    import time
    C = sys.modules["symgrad.checking.decision"]

    def slow(pairs, differ):
        time.sleep(30)
    monkeypatch.setattr(C, "symbolic_job", slow)
    r = run("check", "x**2*sin(x)", "--grad", "x=x*(2*sin(x) + x*cos(x))", "--timeout",
            "0.5", "--samples", "2")
    assert r.exit_code == 3 and r.output.startswith("undecided")


def test_check_wrong_text_has_a_counterexample():
    r = run("check", "x**3", "--grad", "x=3*x", "--at", "x=2")
    assert r.exit_code == 1
    assert "counterexample: at x=2: d/dx claimed 6, true 12" in r.output


# --------------------------------------------------------------------------- bad input
BAD = [
    (("diff", ""), "empty"),
    (("diff", "sin(x"), "column 6"),
    (("diff", "foo(x)"), "unknown function 'foo'"),
    (("diff", "bar + x"), None),  # fine: bar is a variable
    (("diff", "__import__('os').system('true')"), "'__'"),
    (("diff", "x; import os"), "';'"),
    (("diff", "x**10**10**10", "--at", "x=2"), "too large"),
    (("diff", "(" * 300 + "x" + ")" * 300), "nested"),
    (("diff", "x" * 20000), "too long"),
    (("diff", "x²"), "'**2'"),
    (("diff", "π*x"), "'pi'"),
    (("diff", "sin(x)\u200b"), "U+200B"),
    (("diff", "1/x", "--at", "x=0"), "division by zero"),
    (("diff", "x/(1-1)"), "division by zero"),
    (("diff", "log(x)", "--at", "x=-1"), "log of a negative number"),
    (("diff", "sqrt(x - 2)", "--at", "x=1"), "square root of a negative number"),
    (("diff", "exp(x)", "--at", "x=1000"), "overflow"),
    (("diff", "dot(x,y)", "--at", "x=[1,2]", "--at", "y=[1,2,3]"), "dot"),
    (("diff", "x @ A", "--at", "x=[1,2]", "--at", "A=[[1,2,3]]"), "'@'"),
    (("diff", "x", "--at", "x=[1,2]"), "scalar"),
    (("diff", "x", "--at", "x=[[1,2],[3]]"), "inconsistent"),
    (("diff", "x", "--at", "x=nan"), "nothing is evaluated"),
    (("diff", "x", "--at", "x="), "empty"),
    (("diff", "x", "--at", "y=1"), "'y' is not a variable"),
    (("diff", "x*y", "--wrt", "z"), "--wrt z"),
    (("diff", "x", "--order", "0"), "--order"),
    (("diff", "x", "--order", "11"), "--order"),
    (("diff", "dot(x, x)", "--order", "3"), "scalar variables"),
    (("check", "x**2", "--grad", "x="), "--grad x"),
    (("check", "x*y", "--grad", "x=y", "--grad", "x=x"), "given twice"),
    (("check", "x**2", "--grad", "x=2*x", "--at", "x=[1,2]"), "scalar"),
    (("check", "dot(x,y)", "--grad", "x=y", "--at", "x=[1,2]", "--at", "y=[1,2,3]"),
     "dot"),
    (("check", "--batch", "no-such-file.toml"), "No such file"),
    (("draw", "x +", "-o", "g.svg"), "column"),
    (("draw", "x", "-o", "g.xyz"), "unknown format .xyz"),
    (("draw", "x", "-o", "no/such/dir/g.svg"), "does not exist"),
    (("draw", "x", "--at", "x=[1,2]", "-o", "g.svg", "--steps", "frames"), "--steps"),
    (("draw", "log(x)", "--at", "x=-2", "-o", "g.svg"), "log of a negative"),
    (("trace", "no-such-script.py", "-o", "g.svg"), "does not exist"),
    (("diff", "sin(x", "--at", "x=1"), "expected ')'"),
    (("diff", "x + 1", "--at", "x=[1,"), "--at x"),
    (("diff", "x*y", "--at", "x=[1,2]", "--at", "y=[1,2,3]"), "error"),
    (("check", "x**2"), "--grad"),
    (("check", "x**2", "--grad", "x=2*"), "--grad x"),
]


@pytest.mark.parametrize("args, fragment", BAD, ids=[" ".join(a)[:50] for a, _ in BAD])
def test_bad_input_is_one_clear_line_and_exit_2(args, fragment, tmp_path):
    r = run(*args, cwd=tmp_path)
    no_crash(r)
    if fragment is None:
        assert r.exit_code == 0
        return
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    err = r.stderr.strip().splitlines()
    if err[0].startswith("Usage:"):  # click's own usage errors
        assert err[-1].startswith("Error: ") and fragment in err[-1]
    else:
        assert err[0].startswith("symgrad: error: ") and fragment in err[0]
        # one line, or one line plus the text and a caret under the column
        assert len(err) == 1 or (len(err) == 3 and err[2].strip() == "^"), err
    assert not list(tmp_path.iterdir()), "bad input must write nothing"


def test_no_hang_on_hostile_input():
    # Real processes with a timeout: a hang fails the test instead of blocking it.
    for args in (["diff", "2**2**2**2**2**2 * x"], ["check", "9**9**9", "--grad", "x=1"]):
        p = subprocess.run([sys.executable, "-m", "symgrad", *args], capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 2 and "Traceback" not in p.stderr, (args, p.stderr)


def test_random_expressions_never_crash(tmp_path):
    rng = np.random.default_rng(7)
    unary = ["sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs",
             "sum", "mean", "norm"]

    def gen(d):
        k = rng.random()
        if d == 0 or k < 0.2:
            return str(rng.choice(["x", "v", "A", "2", "0.5", "pi", "e", "0", "x.T", "A.T"]))
        if k < 0.5:
            return f"{rng.choice(unary)}({gen(d - 1)})"
        if k < 0.85:
            return f"({gen(d - 1)} {rng.choice(['+', '-', '*', '/', '**', '^', '@'])} " \
                   f"{gen(d - 1)})"
        if k < 0.92:
            return f"-{gen(d - 1)}"
        return f"{rng.choice(['dot', 'matmul'])}({gen(d - 1)}, {gen(d - 1)})"
    values = {"x": "x=-0.5", "v": "v=[1,-2]", "A": "A=[[1,2],[3,4]]"}
    for _ in range(25):
        text = gen(3)
        at = [a for k, v in values.items() if k in text for a in ("--at", v)]
        r = run("diff", text, *at, "--timeout", "2")
        no_crash(r)
        if r.exit_code == 0 and at:
            assert "DIFFERS" not in r.output, (text, r.output)
    assert not list(tmp_path.iterdir())


def test_python_api_errors_are_value_or_type_errors():
    for bad in ("", "sin(", "x..T", "foo(x)", "x = 1", "\x00", "x" * 20000):
        with pytest.raises(ValueError):
            symgrad.parse(bad)
    with pytest.raises(TypeError):
        symgrad.parse(None)
    with pytest.raises(ValueError):
        symgrad.check("x**2", {"y": "1"})
    with pytest.raises(ValueError):
        symgrad.check("dot(x, y)", {"x": "y"}, at={"x": [1, 2], "y": [1, 2, 3]})
    with pytest.raises(TypeError):
        symgrad.draw("x**2")
    e = symgrad.parse("1/x")
    assert e.domain_error(x=0.0).pos == 1 and e.domain_error(x=2.0) is None


def test_text_is_never_executed(tmp_path):
    flag = tmp_path / "executed"
    payload = f"__import__('os').system('touch {flag}')"
    for make in (lambda: symgrad.parse(payload),
                 lambda: symgrad.check("x**2", {"x": [payload]}),
                 lambda: symgrad.check("x**2", {"x": "2*x"}, at={"x": [payload]}),
                 lambda: symgrad.parse("x").evaluate(x=np.array([payload], dtype=object))):
        with pytest.raises(ValueError):
            make()
    for args in (("diff", payload), ("diff", "x", "--at", f"x={payload}"),
                 ("check", "x", "--grad", f"x={payload}")):
        assert run(*args).exit_code == 2
    assert not flag.exists()


# --------------------------------------------------------------------------- output files
def test_output_file_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    from symgrad.drawing.diagram import Diagram, RenderError
    target = tmp_path / "g.dot"
    target.write_text("old drawing")
    r = run("draw", "x +* 2", "-o", str(target))
    assert r.exit_code == 2 and target.read_text() == "old drawing"

    def broken(self, *a, **k):
        raise RenderError("layout failed")
    monkeypatch.setattr(Diagram, "pipe", broken)
    r = run("draw", "x**2", "-o", str(target))
    assert r.exit_code == 2 and "layout failed" in r.stderr
    assert target.read_text() == "old drawing"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dot"]  # no temporary left
    monkeypatch.undo()
    r = run("draw", "x**2", "--at", "x=3", "-o", str(target), "--json")
    assert r.exit_code == 0
    obj = json.loads(r.output)
    assert obj["output"] == str(target) and obj["format"] == "dot"
    assert target.read_text().startswith("digraph") and target.read_text().rstrip()[-1] == "}"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_output_directory(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        r = run("draw", "x", "-o", str(d / "g.svg"))
        assert r.exit_code == 2 and "not writable" in r.stderr
    finally:
        d.chmod(0o700)


def test_trace_script_error_is_one_line(tmp_path):
    script = tmp_path / "lesson.py"
    script.write_text("import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
                      "y = x * x\nraise ValueError('boom')\n")
    r = run("trace", str(script), "-o", str(tmp_path / "g.dot"))
    assert r.exit_code == 2 and r.stderr.strip() == (
        f"symgrad: error: {script}, line 4: ValueError: boom")
    script.write_text("import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
                      "f = torch.sin(x) * x\nprint(f)\n")
    r = run("trace", str(script), "-o", str(tmp_path / "g.dot"), "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout)["variables"] == ["f"]  # the script's print went to stderr


def test_a_wide_hessian_is_printed_one_pair_per_line():
    # A two-layer net's Hessian does not fit a screen as a matrix: one line per pair
    # (15 for 5 variables), each equal to SymPy's second derivative.
    r = run("diff", "tanh(w2*tanh(w1*x + b1) + b2)", "--order", "2")
    assert r.exit_code == 0, r.output
    pairs = [ln.strip() for ln in r.output.splitlines() if ln.strip().startswith("∂²f/")]
    assert len(pairs) == 15 and "one line per pair" in r.output
    names = sp.symbols("w2 w1 x b1 b2")
    w2, w1, x, b1, b2 = names
    f = sp.tanh(w2 * sp.tanh(w1 * x + b1) + b2)
    point = dict(zip(names, (0.7, -1.3, 0.4, 0.2, -0.5)))
    by_name = {str(s): s for s in names}
    for line in pairs:
        wrt, text = line[len("∂²f/"):].split(" = ", 1)
        if wrt.endswith("²"):
            a = b = by_name[wrt[1:-1]]
        else:
            a, b = (by_name[p] for p in wrt[1:].split("∂"))
        got = sp.sympify(text, locals=by_name).subs(point)
        want = sp.diff(f, a, b).subs(point)
        assert abs(float(got) - float(want)) < 1e-12, line


def test_named_sizes_give_forms_for_every_size_or_say_there_is_none():
    # With --shape x=n the traced size (2) must not pass for n: a scalar's gradient is
    # its form for every size, and a count of elements (mean's 1/n, n equal terms) that
    # the forms cannot name is said, not printed as 2.
    def grads(*args):
        r = run("diff", *args, "--json")
        assert r.exit_code == 0, r.output
        return json.loads(r.output)["gradient"]
    g = grads("s*dot(x, x)", "--shape", "x=n")
    assert g["s"]["vector"] == "dot(x, x)" and g["x"]["vector"] == "2 * s * x"
    g = grads("sum(s + x)", "--shape", "x=n")
    assert g["s"]["vector"] == "numel(x)"  # (n equal terms; was the traced 2)
    g = grads("mean(exp(x))", "--shape", "x=n")
    assert g["x"]["vector"] == "exp(x) / numel(x)"
    g = grads("mean((X @ w - y)**2)", "--shape", "X=n,d", "--shape", "w=d", "--shape", "y=n")
    assert g["w"]["vector"] == "2 * (X.T @ (X @ w - y)) / numel(y)"
    r = run("diff", "sum(relu(x))", "--shape", "x=n")
    assert "traced size 2, not for every size" in r.output
    r = run("diff", "sum(relu(s*x))", "--shape", "x=n")
    assert "∂f/∂s = (no form for every size" in r.output
    # With values the size is the values': 3 there.
    g = grads("sum(s + x)", "--at", "x=[1,2,3]", "--at", "s=1")
    assert g["s"]["vector"] == "3" and g["s"]["value"] == 3
