"""One op declared in the table alone reaches every surface.

A throwaway op, registered here with no other edit anywhere, must work as
``symgrad.<name>``, as a Tensor method, in the expression language and the CLI, in
drawings (with its PyTorch-style node name), in ``to_sympy``, in forward mode (dual
numbers, ``jvp``, ``jacfwd``: its tangent from its own gradient rule) and under
``vmap(grad)`` (the batched path, no batching rule of its own), and pass the op-table
checks (finite differences and SymPy to second order).  Also: the surfaces the existing
ops get from their records.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy
from click.testing import CliRunner

import symgrad
import symgrad.autograd.forward_ad as fwAD
from symgrad import ops
from symgrad.func import grad, hessian, jacfwd, jvp, pergrad, vmap
from symgrad.ops import dtype_rules, jvp as jvp_table, tables
from symgrad.symbolic import parser
from symgrad.symbolic.vectors import vector_gradient
from symgrad_cli.main import cli

import test_op_table

NAME = "probe_softsign"


@pytest.fixture
def probe():
    """x / (1 + |x|), declared once, as any op of the table is; taken out afterwards."""
    op = ops.Op(NAME, dtype=dtype_rules.floating, forward=lambda a: a / (1 + np.abs(a)),
                saves=("self",), domain=(0.2, 4.0),
                grads=(lambda m, grad, self:
                       grad / ((m.call(ops.ABS, self) + 1) * (m.call(ops.ABS, self) + 1)),),
                local=("1/(1 + |{self}|)²",), method=NAME, function=NAME, expr=NAME,
                doc="self / (1 + |self|)")
    yield op
    ops.unregister(op)
    assert not hasattr(symgrad, NAME) and not hasattr(symgrad.Tensor, NAME)
    assert NAME not in parser.FUNCTIONS and op.key not in ops.OPS


def test_function_method_and_node(probe):
    x = symgrad.tensor([1.0, -3.0], requires_grad=True)
    y = getattr(symgrad, NAME)(x)
    assert type(y.grad_fn).__name__ == "ProbeSoftsignBackward0"
    assert y.grad_fn.name() == "ProbeSoftsignBackward0"
    np.testing.assert_allclose(y.detach().numpy(), [0.5, -0.75])
    np.testing.assert_array_equal(getattr(x, NAME)().detach().numpy(), y.detach().numpy())
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.25, 1 / 16])
    assert NAME in symgrad.__all__
    assert getattr(symgrad.Tensor, NAME).__name__ == NAME


def test_expression_language_and_cli(probe):
    e = symgrad.parse(f"{NAME}(x) * 2")
    assert e.variables == ["x"]
    result = CliRunner().invoke(cli, ["diff", f"{NAME}(x)", "--at", "x=2", "--json"])
    assert result.exit_code == 0, result.output
    assert "0.1111" in result.output  # d/dx x/(1+|x|) = 1/(1+|x|)² = 1/9 at x = 2
    # constant folding uses the op's own forward
    assert parser.parse(f"{NAME}(1)") is not None


def test_drawing_and_sympy(probe):
    x = symgrad.tensor(2.0, requires_grad=True)
    x.name = "x"
    y = getattr(symgrad, NAME)(x)
    assert "ProbeSoftsignBackward0" in symgrad.draw(y).source
    assert NAME in symgrad.draw(y, kind="forward").source
    s = sympy.Symbol("x", real=True)
    got = symgrad.to_sympy(y)
    assert sympy.simplify(got - s / (1 + sympy.Abs(s))) == 0


def test_op_table_checks(probe):
    cases = test_op_table.cases_for(probe)
    assert cases
    for case in cases:
        case.sympy_second_order = True
        test_op_table.test_vjp(case)


CALLER = "probe_logcosh"


@pytest.fixture
def caller():
    """log(cosh(x)), whose rule calls another op of the table (tanh): one record, taken
    out afterwards.  Its drawing label, its vector form and its second derivative all come
    from that rule."""
    op = ops.Op(CALLER, dtype=dtype_rules.floating, elementwise=True,
                forward=lambda a: np.log(np.cosh(a)), saves=("self",), domain=(-3.0, 3.0),
                sym=lambda a: np.frompyfunc(lambda e: sympy.log(sympy.cosh(e)), 1, 1)(a),
                grads=(lambda m, grad, self: grad * m.call(ops.TANH, self),),
                method=CALLER, function=CALLER, expr=CALLER, doc="log(cosh(self))")
    yield op
    ops.unregister(op)
    assert not hasattr(symgrad, CALLER) and CALLER not in parser.FUNCTIONS


def test_a_rule_calling_an_op_works_on_every_surface(caller):
    x = symgrad.tensor([0.5, -1.0], requires_grad=True)
    y = getattr(x, CALLER)()
    assert type(y.grad_fn).__name__ == "ProbeLogcoshBackward0"
    (g,) = symgrad.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), np.tanh([0.5, -1.0]))
    assert type(g.grad_fn).__name__ == "MulBackward0"  # grad * tanh(x), recorded
    (h,) = symgrad.autograd.grad(g.sum(), x)  # second order: 1 - tanh²
    np.testing.assert_allclose(h.numpy(), 1 - np.tanh([0.5, -1.0]) ** 2)
    result = CliRunner().invoke(cli, ["diff", f"{CALLER}(x)", "--at", "x=0.5", "--json"])
    assert result.exit_code == 0, result.output
    assert f"{np.tanh(0.5):.4f}" in result.output


def test_a_rule_calling_an_op_labels_its_drawing(caller):
    assert caller.local == ("tanh({self})",)  # printed from the rule: no label written
    x = symgrad.tensor(0.5, requires_grad=True)
    x.name = "x"
    source = symgrad.draw(getattr(symgrad, CALLER)(x), show_local=True).source
    assert "ProbeLogcoshBackward0" in source and "∂/∂x = tanh(x)" in source
    assert caller.describe()["derivative"] == ["∂/∂self: tanh({self})"]


def test_a_rule_calling_an_op_has_a_vector_form(caller):
    expr = symgrad.parse(f"sum({CALLER}(A @ x))")
    assert vector_gradient(expr, "x", A=[[1.0, 2.0], [3.0, 4.0]], x=[0.1, 0.2]) == \
        "A.T @ tanh(A @ x)"


def test_a_rule_calling_an_op_passes_the_op_table_checks(caller):
    cases = test_op_table.cases_for(caller)
    assert cases
    for case in cases:
        case.sympy_second_order = True
        test_op_table.test_vjp(case)


def _dual_tangent(f, x, t):
    """``f``'s tangent at ``x`` along ``t`` through forward_ad's dual numbers."""
    with fwAD.dual_level():
        return fwAD.unpack_dual(f(fwAD.make_dual(x, t))).tangent


X = np.array([0.5, -1.0, 2.0])
T = np.array([1.0, -2.0, 0.5])


def test_a_rule_calling_an_op_in_forward_mode(caller):
    """The tangent is the op's own rule run on the tangent (auto_element_wise): no JVP
    written, no side entry; to second order (forward over reverse)."""
    assert jvp_table.kind(caller) == jvp_table.ELEMENT_WISE
    assert caller not in tables.JVP and caller not in tables.BATCHING
    # (its tangent printed from the same rule as its drawing's label)
    assert jvp_table.tangent_formula(caller) == "{self_t}·tanh({self})"
    x, t = symgrad.tensor(X), symgrad.tensor(T)
    f = getattr(symgrad, CALLER)
    want = np.tanh(X) * T
    np.testing.assert_allclose(_dual_tangent(f, x, t).numpy(), want)
    value, tangent = jvp(f, (x,), (t,))
    np.testing.assert_allclose(value.numpy(), np.log(np.cosh(X)))
    np.testing.assert_allclose(tangent.numpy(), want)
    np.testing.assert_allclose(jacfwd(f)(x).numpy(), np.diag(np.tanh(X)))  # batched
    np.testing.assert_allclose(hessian(lambda v: f(v).sum())(x).numpy(),
                               np.diag(1 - np.tanh(X) ** 2))


def test_a_rule_calling_an_op_under_vmap_grad(caller):
    """Per-sample gradients on the batched path (traced once, replayed on the batch: the
    op is point-wise, so it runs once on every sample)."""
    w = symgrad.tensor(X)
    rows = symgrad.tensor(np.array([[1.0, 2.0, 0.5], [-1.0, 0.25, 3.0]]))
    before = pergrad.STATS["batched"]
    got = vmap(grad(lambda w, x: getattr(w * x, CALLER)().sum()), in_dims=(None, 0))(w, rows)
    assert pergrad.STATS["batched"] == before + 1
    np.testing.assert_allclose(got.numpy(), np.tanh(X * rows.numpy()) * rows.numpy())


def test_an_op_without_a_jvp_in_forward_mode_and_vmap_grad(probe):
    """An op with no derivation (not declared element-wise): forward mode transposes its
    gradient rule, vmap's replay runs it sample by sample; nothing registered for it."""
    assert jvp_table.kind(probe) is None and probe not in tables.BATCHING
    x, t = symgrad.tensor(X), symgrad.tensor(T)
    f = getattr(symgrad, NAME)
    slope = 1 / (1 + np.abs(X)) ** 2
    np.testing.assert_allclose(_dual_tangent(f, x, t).numpy(), slope * T)
    np.testing.assert_allclose(jacfwd(f)(x).numpy(), np.diag(slope))
    rows = symgrad.tensor(np.array([[1.0, 2.0, 0.5], [-1.0, 0.25, 3.0]]))
    before = pergrad.STATS["batched"]
    got = vmap(grad(lambda w, x: f(w * x).sum()), in_dims=(None, 0))(x, rows)
    assert pergrad.STATS["batched"] == before + 1
    r = rows.numpy()
    np.testing.assert_allclose(got.numpy(), r / (1 + np.abs(X * r)) ** 2)


def test_every_named_surface_exists():
    """Each name a record declares is callable on its surface."""
    for op in ops.OPS.values():
        for name in op.methods + ((op.inplace,) if op.inplace else ()):
            assert callable(getattr(symgrad.Tensor, name)), (op.key, name)
        if op.function:
            assert callable(getattr(symgrad, op.function)), (op.key, op.function)
        if op.expr:
            assert parser.FUNCTIONS[op.expr] == op.arity, op.key


def test_expression_functions_come_from_the_table():
    assert set(parser.FUNCTIONS) == ({n for op in ops.OPS.values() for n in op.exprs}
                                     | {n for op in ops.OPS.values() for n in op.expr_with}
                                     | set(parser.COMPOSITIONS))
