"""Every op of the table with a torch function name is in the expression language when the
language can call it (issue 20.5: ``reciprocal`` was not), under that name, and computes
what ``torch.<name>`` computes: values and gradients against PyTorch 2.13, walking the
table.  An op the language cannot call says why in its record (``Op.expressible``)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import symgrad
from symgrad import ops
from symgrad.symbolic import parser

WITH_FUNCTIONS = sorted((op for op in ops.OPS.values() if op.functions),
                        key=lambda op: op.key)
TORCH_NAMED = sorted(name for name, op in parser.FUNCTION_OPS.items() if name in op.functions)
A = np.array([[1.3, 0.2], [0.4, 1.1]])
B = np.array([[0.7, -0.3], [0.5, 0.9]])


def _why_not(op) -> str | None:
    """The record's reason the language cannot call ``op`` (None: it can)."""
    if op.infix is not None:
        return "spelled by an operator"
    if op.variadic:
        return "takes a list of tensors"
    if op.grads is None or any(g is None for g in op.grads):
        return "an operand without a gradient"
    if len(op.attrs) != len(op.expr_args):
        return "arguments the language has no syntax for"
    if op.sym is None:
        return "no SymPy meaning"
    return None


@pytest.mark.parametrize("op", WITH_FUNCTIONS, ids=lambda op: op.key)
def test_every_op_with_a_torch_name_is_callable_or_says_why(op):
    assert op.expressible == (_why_not(op) is None)
    if op.expressible:
        for name in op.functions:
            assert parser.FUNCTION_OPS[name] is op, name
            assert parser.FUNCTIONS[name] == op.arity
    else:
        assert not set(op.functions) & set(parser.FUNCTION_OPS) - set(op.exprs)


def test_the_names_of_issue_20_are_in_the_language():
    for name in ("reciprocal", "square", "relu6", "maximum", "minimum", "sgn", "max", "min"):
        assert name in parser.FUNCTIONS
    assert parser.FUNCTION_OPS["reciprocal"] is ops.RECIPROCAL


def _inputs(op, name, torch):
    """Values inside the op's domain: a number for an elementwise function, else 2x2
    matrices, or vectors where PyTorch takes only those."""
    lo, hi = op.domain
    point = 0.3 if lo < 0.3 < hi else lo + 0.6
    if op.elementwise:
        candidates = [[point] * op.arity]
    elif op.arity == 2 and op.ranks is None:
        candidates = [[0.3, 0.7], [A, B], [A[0], B[0]]]
    else:
        candidates = [[A] * op.arity, [A[0]] * op.arity]
    for values in candidates:
        tensors = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
        try:
            getattr(torch, name)(*tensors, *op.expr_args)
        except (RuntimeError, TypeError, IndexError):
            continue
        return values, tensors
    raise AssertionError(f"no inputs PyTorch's {name} takes")


@pytest.mark.parametrize("name", TORCH_NAMED)
def test_each_torch_named_function_computes_what_torch_computes(torch, name):
    op = parser.FUNCTION_OPS[name]
    values, tensors = _inputs(op, name, torch)
    variables = "xy"[:op.arity]
    want = getattr(torch, name)(*tensors, *op.expr_args)
    expr = symgrad.parse(f"sum({name}({', '.join(variables)}))")
    point = dict(zip(variables, values))
    got = expr.evaluate(**point)
    np.testing.assert_allclose(got.item(), want.sum().item(), rtol=1e-12)
    want.sum().backward()
    grads = expr.gradient(**point)
    for v, t in zip(variables, tensors):
        np.testing.assert_allclose(grads[v], to_numpy(t.grad), rtol=1e-12, atol=1e-15)


def test_square_is_pytorchs_pow_and_its_derivative(torch):
    expr = symgrad.parse("square(x) * 3")
    assert expr.tree == symgrad.parse("x**2 * 3").tree
    x = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    (torch.square(x) * 3).backward()
    assert np.isclose(expr.gradient(x=0.7)["x"], x.grad.item(), rtol=1e-14)
    assert str(expr.diff("x")) == "6*x"


@pytest.mark.parametrize("at", [-1.0, 0.0, 3.0, 6.0, 7.5])
def test_relu6_is_pytorchs_hardtanh_with_its_own_bounds(torch, at):
    """``relu6`` names hardtanh with the arguments ``F.relu6`` passes (``expr_with``):
    the same value, gradient (0 at the bounds), node and saved bounds as PyTorch's."""
    got = symgrad.parse("relu6(x)").evaluate(x=at)
    x = torch.tensor(at, dtype=torch.float64, requires_grad=True)
    want = torch.nn.functional.relu6(x)
    want.backward()
    assert got.item() == want.item()
    assert got.grad_fn.name() == want.grad_fn.name() == "HardtanhBackward0"
    assert (got.grad_fn._saved_min_val, got.grad_fn._saved_max_val) == (
        want.grad_fn._saved_min_val, want.grad_fn._saved_max_val)
    assert symgrad.parse("relu6(x)").gradient(x=at)["x"] == x.grad.item()
    assert parser.FUNCTION_OPS["relu6"] is ops.HARDTANH
    assert symgrad.parse("hardtanh(x)").evaluate(x=0.5 + at).item() == float(
        np.clip(0.5 + at, -1, 1))
