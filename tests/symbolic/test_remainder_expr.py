"""``%`` (Python's and PyTorch's remainder, as tight as ``*`` and ``/``), ``remainder(x, y)``
and ``fmod(x, y)`` in the expression language: parsing and precedence, values and
gradients against PyTorch 2.13 and central finite differences, SymPy's ``Mod``, and the
``symgrad diff`` output."""
from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp

import symgrad
from symgrad.symbolic.parser import BinOp, Name, Neg, Num, ParseError, parse, to_text

torch = pytest.importorskip("torch")

X, Y = Name("x"), Name("y")


@pytest.mark.parametrize("text, tree", [
    ("x % y", BinOp("%", X, Y)),
    ("x % y * 2", BinOp("*", BinOp("%", X, Y), Num(2))),  # left to right, as Python
    ("x * y % 2", BinOp("%", BinOp("*", X, Y), Num(2))),
    ("x / y % 2", BinOp("%", BinOp("/", X, Y), Num(2))),
    ("x + y % 2", BinOp("+", X, BinOp("%", Y, Num(2)))),
    ("x % y ** 2", BinOp("%", X, BinOp("**", Y, Num(2)))),
    ("-x % 3", BinOp("%", Neg(X), Num(3))),
    ("x % y % 3", BinOp("%", BinOp("%", X, Y), Num(3))),
])
def test_precedence_is_pythons(text, tree):
    assert parse(text) == tree
    # (Python reads the same text the same way)
    x, y = 7.25, -2.5
    e = symgrad.parse(text)
    values = {k: v for k, v in (("x", x), ("y", y)) if k in e.variables}
    assert e.evaluate(**values).item() == pytest.approx(eval(text))


@pytest.mark.parametrize("text", ["x % (y * 2)", "x % (y % 3)", "(x + y) % 3", "x % y % 3",
                                  "-x % 3", "x % y ** 2"])
def test_text_round_trip_keeps_needed_parentheses(text):
    assert to_text(parse(text)) == text
    assert parse(to_text(parse(text))) == parse(text)


def test_bad_remainder_text_points_at_the_column():
    with pytest.raises(ParseError) as err:
        parse("x % ")
    assert err.value.column == 5 and "after '%'" in str(err.value)


POINTS = [(5.5, 2.0), (-5.5, 2.0), (5.5, -2.0), (-5.5, -2.0), (0.3, 0.7), (7.0, 2.5)]
FORMS = {"x % y": torch.remainder, "remainder(x, y)": torch.remainder, "fmod(x, y)": torch.fmod,
         "(x * y + 0.5) % y": lambda x, y: torch.remainder(x * y + 0.5, y)}


@pytest.mark.parametrize("text", list(FORMS))
def test_values_and_gradients_match_torch_and_finite_differences(text):
    e = symgrad.parse(text)
    for x, y in POINTS:
        tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        ty = torch.tensor(y, dtype=torch.float64, requires_grad=True)
        out = FORMS[text](tx, ty)
        gx, gy = torch.autograd.grad(out, (tx, ty))
        assert e.evaluate(x=x, y=y).item() == pytest.approx(out.item(), abs=1e-12)
        grads = e.gradient(x=x, y=y)
        assert float(grads["x"]) == pytest.approx(gx.item(), abs=1e-12)
        assert float(grads["y"]) == pytest.approx(gy.item(), abs=1e-12)
        h = 1e-6  # (the points are away from the jumps)
        fd_y = (e.evaluate(x=x, y=y + h).item() - e.evaluate(x=x, y=y - h).item()) / (2 * h)
        fd_x = (e.evaluate(x=x + h, y=y).item() - e.evaluate(x=x - h, y=y).item()) / (2 * h)
        assert float(grads["y"]) == pytest.approx(fd_y, abs=1e-6)
        assert float(grads["x"]) == pytest.approx(fd_x, abs=1e-6)


def test_the_graph_is_torchs():
    x = torch.tensor(5.5, requires_grad=True)
    y = torch.tensor(2.0, requires_grad=True)
    sx = symgrad.tensor(5.5, requires_grad=True)
    sy = symgrad.tensor(2.0, requires_grad=True)
    assert (sx % sy).grad_fn.name() == (x % y).grad_fn.name() == "RemainderBackward1"
    assert (sx % 2).grad_fn.name() == (x % 2).grad_fn.name() == "RemainderBackward0"
    e = symgrad.parse("x % y")
    assert e.evaluate(x=5.5, y=2.0).grad_fn.name() == "RemainderBackward1"


def test_sympy_side_is_mod_with_torchs_derivatives():
    e = symgrad.parse("x % y")
    f = e.to_sympy()
    x, y = f.args
    assert isinstance(f, sp.Mod) and (str(x), str(y)) == ("x", "y")
    assert sp.diff(f, x) == 1 and str(sp.diff(f, y)) == "-floor(x/y)"
    assert str(e.diff("y")) == "-floor(x/y)" and str(e.diff("x")) == "1"
    assert sp.latex(f) == r"x \bmod y"
    # fmod keeps the sign of x: not SymPy's Mod
    g = symgrad.parse("fmod(x, y)").to_sympy()
    assert g.subs({x: -5.5, y: 2}) == pytest.approx(-1.5)


def test_constants_fold_as_python():
    e = symgrad.parse("x + 7 % 3 - (-7) % 3")
    assert e.evaluate(x=0.0).item() == pytest.approx(7 % 3 - (-7) % 3)


def test_cli_diff_prints_the_remainder_and_its_gradient():
    main = pytest.importorskip("symgrad_cli.main")
    from click.testing import CliRunner

    r = CliRunner().invoke(main.cli, ["diff", "x % y", "--at", "x=-5.5", "--at", "y=2"])
    assert r.exit_code == 0, r.output
    assert "f(x, y) = Mod(x, y)" in r.output and "f = 0.5" in r.output
    assert "∂f/∂x = 1" in r.output and "∂f/∂y = -floor(x/y)" in r.output
    assert r.output.count("✓ agrees") == 2
    r = CliRunner().invoke(main.cli, ["diff", "fmod(x, y)", "--at", "x=-5.5", "--at", "y=2",
                                      "--json"])
    out = json.loads(r.output)
    assert out["value"] == -1.5 and out["gradient"]["y"]["value"] == 2.0  # -trunc(-2.75)
    r = CliRunner().invoke(main.cli, ["diff", "x %% y"])
    assert r.exit_code == 2 and "column 4" in r.output and "Traceback" not in r.output
