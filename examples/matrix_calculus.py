"""Matrix calculus with symgrad: gradients in matrix form for every size, their Hessians,
and a claimed gradient checked for every size.

    python examples/matrix_calculus.py
"""
import symgrad
from symgrad.symbolic.hessians import hessian_text

f = symgrad.parse("sum((A @ x - b)**2)")           # least squares
point = {"A": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "x": [1.0, -1.0], "b": [0.5, 0.5, 0.5]}
print("d/dx :", f.vector_gradient("x", **point))   # 2 * A.T @ (A @ x - b)
print("d/dA :", f.vector_gradient("A", **point))   # 2 * outer(A @ x - b, x)
print("d2/dx2:", hessian_text(f, "x", "x", point))  # 2 * A.T @ A

# A student's answer for the quadratic form, checked for every size n:
shapes = {"x": ("n",), "A": ("n", "n")}
for claim in ["2 * A @ x", "(A + A.T) @ x"]:
    report = symgrad.check("x.T @ A @ x", {"x": claim}, shapes=shapes)
    print(f"\n{claim}:", report.verdict)
    print(report.text())
