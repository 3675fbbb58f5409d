"""The expression language's function names: every op's names and aliases from the table,
the calculus spellings (``ln``, ``arcsin``, ``sec``), derivatives against SymPy."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner

import symgrad
from symgrad import ops
from symgrad.symbolic import parser
from symgrad_cli.main import cli

x = sp.Symbol("x", real=True)

# name in the expression language -> the SymPy function a textbook means by it
TEXTBOOK = {
    "ln": sp.log, "log": sp.log, "arcsin": sp.asin, "arccos": sp.acos, "arctan": sp.atan,
    "arcsinh": sp.asinh, "arccosh": sp.acosh, "arctanh": sp.atanh, "sinh": sp.sinh,
    "cosh": sp.cosh, "asinh": sp.asinh, "acosh": sp.acosh, "atanh": sp.atanh,
    "sec": sp.sec, "csc": sp.csc, "cot": sp.cot, "erf": sp.erf, "erfc": sp.erfc,
    "log2": lambda u: sp.log(u, 2), "log10": lambda u: sp.log(u, 10),
    "log1p": lambda u: sp.log(1 + u), "expm1": lambda u: sp.exp(u) - 1,
    "exp2": lambda u: 2 ** u, "rsqrt": lambda u: 1 / sp.sqrt(u),
}
POINT = {"acosh": 1.7, "arccosh": 1.7}


@pytest.mark.parametrize("name", sorted(TEXTBOOK))
def test_textbook_names_differentiate_as_sympy(name):
    expr = symgrad.parse(f"{name}(x)")
    at = POINT.get(name, 0.3)
    want = sp.diff(TEXTBOOK[name](x), x)
    # reverse mode, and the symbolic derivative, against SymPy's own
    assert np.isclose(expr.gradient(x=at)["x"], float(want.subs(x, at)), rtol=1e-12)
    sym = expr.diff("x")
    (ours,) = sym.free_symbols
    for t in (at, at + 0.25, at + 0.5):
        assert np.isclose(float(sym.subs(ours, t)), float(want.subs(x, t)), rtol=1e-12)


def test_every_alias_names_its_op():
    for op in ops.OPS.values():
        for name in op.exprs:
            assert parser.FUNCTION_OPS[name] is op
    assert parser.FUNCTION_OPS["ln"] is parser.FUNCTION_OPS["log"] is ops.LOG


@pytest.mark.parametrize("name, body", sorted(parser.COMPOSITIONS.items()))
def test_compositions_are_their_bodies(name, body):
    assert (symgrad.parse(f"{name}(2*y + 1)").tree
            == symgrad.parse(body.replace("x", "(2*y + 1)")).tree)


def test_composition_arity_is_checked():
    with pytest.raises(symgrad.SymgradError, match=r"sec\(\) takes 1 argument but 2"):
        symgrad.parse("sec(x, y)")


@pytest.mark.parametrize("args, expect", [
    (["diff", "atan(x)*cosh(y)", "--at", "x=1", "--at", "y=2"],
     ["cosh(y)/(x**2 + 1)", "sinh(y)*atan(x)"]),
    (["diff", "arcsin(x) + exp2(x)", "--at", "x=0.5"], ["2**x*log(2)", "1/sqrt(1 - x**2)"]),
    (["check", "sec(x)", "--grad", "x=sec(x)*tan(x)"], ["correct"]),
    (["check", "ln(x)", "--grad", "x=1/x"], ["correct"]),
    (["check", "softplus(x)", "--grad", "x=sigmoid(x)"], ["correct"]),
    (["check", "silu(x)", "--grad", "x=sigmoid(x)*(1 + x*(1 - sigmoid(x)))"], ["correct"]),
    (["check", "softsign(x)", "--grad", "x=1/(1 + abs(x))**2"], ["correct"]),
    (["diff", "gelu(x) + elu(x) + mish(x) + leaky_relu(x)", "--at", "x=0.5"], ["erf"]),
    (["check", "log1p(x)", "--grad", "x=1/x"], ["WRONG", "1/(x + 1)"]),
])
def test_cli_takes_the_names(args, expect):
    out = CliRunner().invoke(cli, args)
    for text in expect:
        assert text in out.output, out.output
