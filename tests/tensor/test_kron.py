"""torch.kron: values, gradients and the nodes PyTorch records (views, a product)."""
from __future__ import annotations

import numpy as np
import pytest

import symgrad

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("sa,sb", [((2, 2), (3, 2)), ((2,), (3,)), ((2, 3), (4,)),
                                   ((3,), (2, 2))])
def test_kron_matches_torch(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=sa), rng.normal(size=sb)
    A, B = symgrad.tensor(a, requires_grad=True), symgrad.tensor(b, requires_grad=True)
    TA, TB = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    k, tk = A.kron(B), torch.kron(TA, TB)
    np.testing.assert_allclose(k.detach().numpy(), tk.detach().numpy())
    assert k.grad_fn.name() == tk.grad_fn.name() == "UnsafeViewBackward0"
    assert [type(f).__name__ for f, _ in k.grad_fn.next_functions[0][0].next_functions] == \
        [type(f).__name__ for f, _ in tk.grad_fn.next_functions[0][0].next_functions]
    w = rng.normal(size=tk.shape)
    (k * symgrad.tensor(w)).sum().backward()
    (tk * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), TA.grad.numpy())
    np.testing.assert_allclose(B.grad.numpy(), TB.grad.numpy())


def test_kron_and_solve_in_the_expression_language():
    v = {"A": [[3.0, 1.0], [1.0, 2.0]], "b": [1.0, 2.0], "c": [1.0, -1.0]}
    f = symgrad.parse("c @ solve(A, b)")
    TA = torch.tensor(v["A"], dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(v["b"], dtype=torch.float64, requires_grad=True)
    (torch.tensor(v["c"], dtype=torch.float64) @ torch.linalg.solve(TA, tb)).backward()
    g = f.gradient(**v)
    np.testing.assert_allclose(g["A"], TA.grad.numpy())
    np.testing.assert_allclose(g["b"], tb.grad.numpy())
    assert f.vector_gradient("b", **v) == "solve(A.T, c)"
    k = symgrad.parse("sum(kron(A, B))").gradient(A=np.eye(2), B=np.ones((2, 3)))["A"]
    np.testing.assert_allclose(k, np.full((2, 2), 6.0))
