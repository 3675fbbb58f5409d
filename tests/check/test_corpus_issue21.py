"""Issue 21: a fresh outside-style corpus of hand-derived gradients, each verdict and
diagnosis asserted.

Calculus answer keys (chain, product and quotient rules, logarithms, exponentials,
inverse trigonometric functions), kinks (relu, abs, max, clamp, Huber, leaky ReLU, hinge,
in one variable and in several), machine-learning losses (softmax cross-entropy, MSE with
1/N, logistic, SVM) and matrix calculus (dot, sum, matmul, transposes, trace): right
answers in other but equivalent forms, and wrong ones with the mistakes students make
(the sign of the gradient or of a term, a dropped term, a missing chain-rule factor, 1/N,
a transpose, the wrong or swapped variable, a dropped branch, a region).  Measured as
command runs before these tests were written: 0 false verdicts, 0 undecided.

A wrong verdict's counterexample is checked against central finite differences of the
function (an independent witness); every proof finishes within its budget (no
"timeout": bounded work).  Every wrong answer's diagnosis names the mistake (a sign
inside a sigmoid, a missing σ' factor inside a matmul, cross-entropy as if sum(y) = 1,
a missing A.T: :mod:`symgrad.checking.slips`), never a wrong name.  The budget is 5 s
of CPU time so that a busy machine gives the verdicts an idle one gives in 1.5 s.
"""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from symgrad.checking.sampling import central_differences

BUDGET = 5.0

WRONG = [  # (expression, claims, shapes, the diagnosis's words)
    ("sin(x**3)", {"x": "cos(x**3)"}, {},
     ["x: missing factor 3*x**2",
      "x: the chain rule: 3*x**2 is the derivative of the inner x**3"]),
    ("exp(sin(x))", {"x": "exp(sin(x))"}, {},
     ["x: missing factor cos(x)",
      "x: the chain rule: cos(x) is the derivative of the inner sin(x)"]),
    ("sqrt(1 + x**2)", {"x": "1/(2*sqrt(1 + x**2))"}, {},
     ["x: missing factor 2*x",
      "x: the chain rule: 2*x is the derivative of the inner x**2 + 1"]),
    ("(x**2 + 1)**(1/3)", {"x": "(x**2 + 1)**(-2/3)/3"}, {},
     ["x: missing factor 2*x",
      "x: the chain rule: 2*x is the derivative of the inner x**2 + 1"]),
    ("erf(3*x)", {"x": "2*exp(-9*x**2)/sqrt(pi)"}, {},
     ["x: missing factor 3",
      "x: the chain rule: 3 is the derivative of the inner 3*x"]),
    ("log(sin(x))", {"x": "1/sin(x)"}, {},
     ["x: missing factor cos(x)",
      "x: the chain rule: cos(x) is the derivative of the inner sin(x)"]),
    ("atan(2*x)", {"x": "1/(1 + 4*x**2)"}, {},
     ["x: missing factor 2",
      "x: the chain rule: 2 is the derivative of the inner 2*x"]),
    ("atan(1/x)", {"x": "1/(1 + 1/x**2)"}, {},
     ["x: missing factor -1/x**2",
      "x: the chain rule: -1/x**2 is the derivative of the inner 1/x"]),
    ("log(cosh(x))", {"x": "1/cosh(x)"}, {},
     ["x: missing factor sinh(x)",
      "x: the chain rule: sinh(x) is the derivative of the inner cosh(x)"]),
    ("x**2*exp(x)", {"x": "2*x*exp(x)"}, {},
     ["x: missing term x**2*exp(x)",
      "x: the product rule: the claim has 2*x*exp(x) (u′v) but lacks x**2*exp(x) (uv′); f′ "
      "= u′v "]),
    ("x*log(x)", {"x": "1/x"}, {},
     ["x: the product rule: the claim has neither log(x) (u′v) nor 1 (uv′): it is u′v′ = "
      "1/x, the product of the derivatives; f′ = u′v + uv′ for f = u*v (u ="]),
    ("x**2*log(x)", {"x": "2*x*log(x)"}, {},
     ["x: missing term x",
      "x: the product rule: the claim has 2*x*log(x) (u′v) but lacks x (uv′); f′ = u′v + "
      "uv′ for "]),
    ("relu(x)*x", {"x": "relu(x)"}, {},
     ["x: right for x < 0, wrong for x > 0 (for x > 0 the true gradient is 2*x, the claim "
      "x)",
      "x: for x > 0: missing factor 2"]),
    ("(x + y)**2*(x - y)", {"x": "2*(x + y)*(x - y)"}, {},
     ["x: the product rule: the claim has (x - y)*(2*x + 2*y) (u′v) but lacks (x + y)**2 "
      "(uv′); f′ = u′v + uv′ for f = u*v (u = (x + y)**2, v = x - y)"]),
    ("exp(x**2)*cos(x)", {"x": "2*x*exp(x**2)*cos(x)"}, {},
     ["x: missing term -exp(x**2)*sin(x)",
      "x: the product rule: the claim has 2*x*exp(x**2)*cos(x) (uv′) but lacks "
      "-exp(x**2)*sin(x) "]),
    ("sum(x*log(x))", {"x": "log(x)"}, {"x": ("n",)},
     ["x: missing term 1",
      "x: the product rule: the claim has log(x_0) (u′v) but lacks 1 (uv′); (u*v)′ = u′v + "
      "uv′ fo"]),
    ("cos(x)**2", {"x": "2*sin(x)*cos(x)"}, {},
     ["x: wrong sign: the claimed gradient is the negative of the true one"]),
    ("exp(-x**2/2)", {"x": "x*exp(-x**2/2)"}, {},
     ["x: wrong sign: the claimed gradient is the negative of the true one"]),
    ("sin(cos(x))", {"x": "sin(x)*cos(cos(x))"}, {},
     ["x: wrong sign: the claimed gradient is the negative of the true one"]),
    ("1/x**2", {"x": "2/x**3"}, {},
     ["x: wrong sign: the claimed gradient is the negative of the true one"]),
    ("logsumexp(z) - dot(y, z)", {"z": "y - softmax(z)"}, {"z": ("n",), "y": ("n",)},
     ["z: wrong sign: the claimed gradient is the negative of the true one"]),
    ("log(1 + exp(-y*dot(w, x)))", {"w": "-y*x*sigmoid(y*dot(w, x))"}, {"w": ("n",), "x": ("n",)},
     ["w: sign inside sigmoid: the claim has sigmoid(y*dot(w, x)) where the true gradient "
      "has sigmoid(-y*dot(w, x))"]),
    ("(w*x + b - y)**2", {"w": "2*x*(w*x + b - y)", "b": "2*(y - w*x - b)"}, {},
     ["b: wrong sign: the claimed gradient is the negative of the true one"]),
    ("x/y", {"y": "x/y**2"}, {},
     ["y: wrong sign: the claimed gradient is the negative of the true one"]),
    ("x/(x**2 + 1)", {"x": "(1 + x**2 + 2*x**2)/(x**2 + 1)**2"}, {},
     ["x: wrong sign of the term -2*x**2/(x**4 + 2*x**2 + 1)"]),
    ("sin(x)*cos(x)", {"x": "cos(x)**2 + sin(x)**2"}, {},
     ["x: wrong sign of the term -sin(x)**2"]),
    ("log(exp(x) + exp(-x))", {"x": "(exp(x) + exp(-x))/(exp(x) + exp(-x))"}, {},
     ["x: wrong sign of the term -1/(exp(2*x) + 1)"]),
    ("sqrt(x)*exp(-x)", {"x": "exp(-x)*(1 + 2*x)/(2*sqrt(x))"}, {},
     ["x: wrong sign of the term -sqrt(x)*exp(-x)"]),
    ("x*sin(y) + y*cos(x)", {"x": "sin(y) + y*sin(x)"}, {},
     ["x: wrong sign of the term -y*sin(x)"]),
    ("x*y/(x + y)", {"x": "(y*(x + y) + x*y)/(x + y)**2"}, {},
     ["x: wrong sign of the term -x*y/(x**2 + 2*x*y + y**2)"]),
    ("sinh(x)*cosh(x)", {"x": "cosh(x)**2 - sinh(x)**2"}, {},
     ["x: wrong sign of the term sinh(x)**2"]),
    ("x**x", {"x": "x*x**(x - 1)"}, {},
     ["x: missing term x**x*log(x)"]),
    ("cosh(x)**2", {"x": "2*cosh(x)*sinh(x) + 1"}, {},
     ["x: extra term 1"]),
    ("-dot(y, log_softmax(z))", {"z": "softmax(z) - y"}, {"z": ("n",), "y": ("n",)},
     ["z: assumes sum(y) = 1: the true gradient has softmax(z)*sum(y) where the claim has "
      "softmax(z)"]),
    ("x**2*y + y**3", {"y": "3*y**2"}, {},
     ["y: missing term x**2"]),
    ("x/sqrt(x**2 + 1)", {"x": "1/sqrt(x**2 + 1)"}, {},
     ["x: the product rule: the claim has 1/sqrt(x**2 + 1) (u′v) but lacks"]),
    ("dot(x, x)/2 + dot(b, x)", {"x": "x"}, {"x": ("n",), "b": ("n",)},
     ["x: missing term b: the true gradient is x + b"]),
    ("(x - y)**2/y", {"y": "-2*(x - y)/y"}, {},
     ["y: the product rule: the claim has (-2*x + 2*y)/y (uv′) but lacks -(x - y)**2/y**2 "
      "(u′v); f′ = u′v + uv′ for f = u*v (u = 1/y, v = (x - y)**2)"]),
    ("x**4", {"x": "4*x**4"}, {},
     ["x: power rule: the claim has x**4 where the true gradient has x**3"]),
    ("x**5/5", {"x": "5*x**4"}, {},
     ["x: extra factor 5"]),
    ("log(sqrt(x**2 + 1))", {"x": "2*x/(x**2 + 1)"}, {},
     ["x: extra factor 2"]),
    ("log10(x)", {"x": "1/x"}, {},
     ["x: missing factor 1/log(10)"]),
    ("dot(x, x)**2", {"x": "2*dot(x, x)*x"}, {"x": ("n",)},
     ["x: missing factor 2"]),
    ("sqrt(sin(x))", {"x": "cos(x)/sqrt(sin(x))"}, {},
     ["x: extra factor 2"]),
    ("x*y**2*z**3", {"z": "x*y**2*z**2"}, {},
     ["z: missing factor 3"]),
    ("2**x", {"x": "x*2**(x - 1)"}, {},
     ["x: the power rule applied to an exponential: d/du a**u = a**u*log(a)"]),
    ("acosh(x)", {"x": "1/sqrt(x**2 + 1)"}, {},
     ["x: wrong sign: the claim has x**2 + 1 where the true gradient has x**2 - 1"]),
    ("log(1 + exp(x))", {"x": "1/(1 + exp(x))"}, {},
     ["x: missing factor exp(x)",
      "x: the chain rule: exp(x) is the derivative of the inner exp(x) + 1"]),
    ("log_sigmoid(x)", {"x": "sigmoid(x)"}, {},
     ["x: sign inside sigmoid: the claim has sigmoid(x) where the true gradient has "
      "sigmoid(-x)"]),
    ("abs(x)**3", {"x": "3*x**2"}, {},
     ["x: right for x > 0, wrong for x < 0 (for x < 0 the true gradient is -3*x**2, the "
      "claim 3*x**2): the claim drops a branch of the piecewise gradient"]),
    ("leaky_relu(x)", {"x": "(sign(x) + 1)/2"}, {},
     ["x: right for x > 0, wrong for x < 0 (for x < 0 the true gradient is 1/100, the claim "
      "0)"]),
    ("abs(x*y)", {"x": "y"}, {},
     ["x: right where x*y > 0, wrong where x*y < 0 (for x*y < 0 the true gradient is -y, "
      "the claim y): the claim drops a branch of the piecewise gradient"]),
    ("abs(x) + x", {"x": "2"}, {},
     ["x: right for x > 0, wrong for x < 0 (for x < 0 the true gradient is 0, the claim 2): "
      "the claim drops a branch of the piecewise gradient"]),
    ("minimum(x, 0)**2", {"x": "2*x"}, {},
     ["x: right for x < 0, wrong for x > 0 (for x > 0 the true gradient is 0, the claim "
      "2*x): the claim drops a branch of the piecewise gradient"]),
    ("relu(x)**3", {"x": "3*x**2"}, {},
     ["x: right for x > 0, wrong for x < 0 (for x < 0 the true gradient is 0, the claim "
      "3*x**2): the claim drops a branch of the piecewise gradient"]),
    ("relu(x + y)**2", {"x": "2*(x + y)"}, {},
     ["x: right where x + y > 0, wrong where x + y < 0 (for x + y < 0 the true gradient is "
      "0, the claim 2*x + 2*y): the claim drops a branch of the piecewise"]),
    ("relu(1 - x*y)", {"x": "-y"}, {},
     ["x: right where x*y < 1, wrong where x*y > 1 (for x*y > 1 the true gradient is 0, the "
      "claim -y): the claim drops a branch of the piecewise gradient"]),
    ("abs(x - 3)", {"x": "1"}, {},
     ["x: right for x > 3, wrong for x < 3 (for x < 3 the true gradient is -1, the claim "
      "1): the claim drops a branch of the piecewise gradient",
      "x: for x < 3: wrong sign: the claimed gradient is the negative of the true one"]),
    ("abs(sin(x))", {"x": "cos(x)"}, {},
     ["x: right where sin(x) > 0, wrong where sin(x) < 0 (for sin(x) < 0 the true gradient "
      "is -cos(x), the claim cos(x)): the claim drops a branch of the pie"]),
    ("sqrt(x**2)", {"x": "1"}, {},
     ["x: right for x > 0, wrong for x < 0 (for x < 0 the true gradient is -1, the claim "
      "1): the claim drops a branch of the piecewise gradient"]),
    ("maximum(x, y)", {"x": "1", "y": "0"}, {},
     ["x: right where x > y, wrong where x < y (for x < y the true gradient is 0, the claim "
      "1): the claim drops a branch of the piecewise gradient"]),
    ("relu(x)*relu(y)", {"x": "relu(y)"}, {},
     ["x: right where x > 0 or y < 0, wrong where x < 0 and y > 0 (for x < 0 and y > 0 the "
      "true gradient is 0, the claim y)"]),
    ("relu(1 - y*dot(w, x))", {"w": "-y*x"}, {"w": ("n",), "x": ("n",)},
     ["w: right where y*(w_0*x_0 + w_1*x_1) < 1, wrong where y*(w_0*x_0 + w_1*x_1) > 1 (for "
      "y*(w_0*x_0 + w_1*x_1) > 1 the true gradient is 0, the claim -x_0*"]),
    ("mean((w*x - y)**2)", {"w": "2*dot(w*x - y, x)"}, {"x": ("n",), "y": ("n",)},
     ["w: missing factor 1/numel(x) (the number of elements of x, 2 at the counterexample "
      "and 3 at another size)"]),
    ("mean((A @ w - b)**2)",
     {"w": "2*A.T @ (A @ w - b)"}, {"A": ("n", "m",), "w": ("m",), "b": ("n",)},
     ["w: missing factor 1/numel(b) (the number of elements of b, 2 at the counterexample "
      "and 3 at another size)"]),
    ("mean(log(1 + exp(-y*(X @ w))))",
     {"w": "-X.T @ (y*sigmoid(-y*(X @ w)))"}, {"X": ("n", "m",), "w": ("m",), "y": ("n",)},
     ["w: missing factor 1/numel(y) (the number of elements of y, 2 at the counterexample "
      "and 3 at another size)"]),
    ("sum(log_softmax(z))", {"z": "1 - softmax(z)"}, {"z": ("n",)},
     ["z: missing factor numel(z) on softmax(z): the true gradient has "
      "softmax(z)*numel(z)"]),
    ("mean(x**2)", {"x": "2*x"}, {"x": ("n",)},
     ["x: missing factor 1/numel(x) (the number of elements of x, 2 at the counterexample "
      "and 3 at another size)"]),
    ("mean(abs(x - y))", {"x": "sign(x - y)"}, {"x": ("n",), "y": ("n",)},
     ["x: missing factor 1/numel(x) (the number of elements of x, 2 at the counterexample "
      "and 3 at another size)"]),
    ("mean((A @ w - b)**2)",
     {"w": "2*A @ (A @ w - b)/numel(b)"}, {"A": ("n", "n",), "w": ("n",), "b": ("n",)},
     ["w: missing transpose: the claim has 2*A @ (A @ w - b) where the true gradient has "
      "2*A.T @ (A @ w - b)"]),
    ("trace(A @ B)", {"A": "B"}, {"A": ("n", "n",), "B": ("n", "n",)},
     ["A: transposed: the claimed gradient is the transpose of the true one"]),
    ("dot(y, A @ x)", {"x": "A @ y"}, {"A": ("n", "n",), "x": ("n",), "y": ("n",)},
     ["x: transposed A: the claim has A where the true gradient has A.T (it is right with A "
      "replaced by A.T)"]),
    ("dot(y, A @ x)", {"A": "outer(x, y)"}, {"A": ("n", "n",), "x": ("n",), "y": ("n",)},
     ["A: transposed: the claimed gradient is the transpose of the true one"]),
    ("trace(A @ A)", {"A": "2*A"}, {"A": ("n", "n",)},
     ["A: transposed: the claimed gradient is the transpose of the true one"]),
    ("0.5*sum((W @ x - t)**2)",
     {"W": "outer(x, W @ x - t)"}, {"W": ("n", "n",), "x": ("n",), "t": ("n",)},
     ["W: transposed: the claimed gradient is the transpose of the true one"]),
    ("sum(exp(A @ x))", {"x": "A @ exp(A @ x)"}, {"A": ("n", "n",), "x": ("n",)},
     ["x: missing transpose: the claim has A @ exp(A @ x) where the true gradient has "
      "A.T @ exp(A @ x)"]),
    ("-(y*log(sigmoid(z)) + (1 - y)*log(1 - sigmoid(z)))",
     {"z": "sigmoid(z)*(1 - sigmoid(z))*(sigmoid(z) - y)"}, {},
     ["z: extra factor sigmoid(z)*(1 - sigmoid(z)) (sigmoid's derivative): the claim is "
      "right without it"]),
    ("norm(x)", {"x": "x/norm(x)**2"}, {"x": ("n",)},
     ["x: extra factor norm(x): the claim has norm(x)**2 where the true gradient has "
      "norm(x)"]),
    ("sqrt(x**2 + y**2)", {"x": "x/(x**2 + y**2)"}, {},
     ["x: missing factor sqrt(x**2 + y**2)"]),
    ("x.T @ A @ x", {"x": "2*A @ x"}, {"A": ("n", "n",), "x": ("n",)},
     ["x: right only when A is symmetric: the true gradient has both A and A.T"]),
    ("trace(A.T @ B @ A)", {"A": "2*B @ A"}, {"A": ("n", "m",), "B": ("n", "n",)},
     ["A: right only when B is symmetric: the true gradient has both B and B.T"]),
    ("trace(X @ A @ X.T)", {"X": "2*X @ A"}, {"X": ("n", "m",), "A": ("m", "m",)},
     ["X: right only when A is symmetric: the true gradient has both A and A.T"]),
    ("dot(x, y)**2", {"x": "2*dot(x, y)*x"}, {"x": ("n",), "y": ("n",)},
     ["x: wrong variable: this is the derivative with respect to y, not x"]),
    ("sin(x*y)", {"x": "x*cos(x*y)"}, {},
     ["x: wrong variable: this is the derivative with respect to y, not x"]),
    ("log(x**2 + y**2)", {"x": "2*y/(x**2 + y**2)"}, {},
     ["x: wrong variable: this is the derivative with respect to y, not x"]),
    ("cos(x)*sin(y)", {"x": "cos(x)*cos(y)"}, {},
     ["x: wrong variable: this is the derivative with respect to y, not x"]),
    ("hypot(x, y)", {"x": "y/hypot(x, y)"}, {},
     ["x: wrong variable: this is the derivative with respect to y, not x"]),
    ("dot(x, A @ y)", {"y": "A @ y"}, {"A": ("n", "n",), "x": ("n",), "y": ("n",)},
     ["y: wrong variable: this is the derivative with respect to x, not y"]),
    ("x**y", {"y": "y*x**(y - 1)"}, {},
     ["y: wrong variable: this is the derivative with respect to x, not y"]),
    ("x*y*z", {"z": "y*z"}, {},
     ["z: wrong variable: this is the derivative with respect to x, not z"]),
    ("exp(x)*cos(y)", {"y": "exp(x)*cos(y)"}, {},
     ["y: wrong variable: this is the derivative with respect to x, not y"]),
    ("sigmoid(w*x)", {"w": "x*sigmoid(w*x)"}, {},
     ["w: missing factor 1 - sigmoid(w*x) of sigmoid's derivative"]),
    ("sum(sigmoid(W @ x))", {"x": "W.T @ sigmoid(W @ x)"}, {"W": ("n", "m",), "x": ("m",)},
     ["x: missing factor 1 - sigmoid(W @ x) of sigmoid's derivative"]),
    ("logsumexp(A @ x)", {"x": "softmax(A @ x)"}, {"A": ("n", "n",), "x": ("n",)},
     ["x: missing A.T @ from the chain rule through A @ x: the true gradient is "
      "A.T @ softmax(A @ x)"]),
]

RIGHT = [  # (expression, claims, shapes): right in another form
    ("x**x", {"x": "x**x*(log(x) + 1)"}, {}),
    ("log(log(x))", {"x": "1/(x*log(x))"}, {}),
    ("2**x", {"x": "log(2)*2**x"}, {}),
    ("relu(x)**2", {"x": "2*relu(x)"}, {}),
    ("abs(x)**3", {"x": "3*x*abs(x)"}, {}),
    ("maximum(x, 2*x)", {"x": "1.5 + 0.5*sign(x)"}, {}),
    ("minimum(maximum(x, -1), 1)", {"x": "(sign(x + 1) - sign(x - 1))/2"}, {}),
    ("0.5*x**2 - 0.5*relu(abs(x) - 1)**2", {"x": "minimum(maximum(x, -1), 1)"}, {}),
    ("leaky_relu(x)", {"x": "0.505 + 0.495*sign(x)"}, {}),
    ("relu(1 - x*y)", {"x": "-y*(sign(1 - x*y) + 1)/2"}, {}),
    ("abs(x - 3)", {"x": "sign(x - 3)"}, {}),
    ("relu(x) - relu(-x)", {"x": "1"}, {}),
    ("abs(sin(x))", {"x": "sign(sin(x))*cos(x)"}, {}),
    ("maximum(x**2, 1)", {"x": "x*(1 + sign(x**2 - 1))"}, {}),
    ("relu(x)*x", {"x": "2*relu(x)"}, {}),
    ("hardtanh(2*x)", {"x": "sign(2*x + 1) - sign(2*x - 1)"}, {}),
    ("maximum(x, y)", {"x": "(1 + sign(x - y))/2", "y": "(1 - sign(x - y))/2"}, {}),
    ("abs(x*y)", {"x": "y*sign(x*y)"}, {}),
    ("relu(x)*relu(y)", {"x": "relu(y)*(1 + sign(x))/2"}, {}),
    ("relu(x - 2)", {"x": "(1 + sign(x - 2))/2"}, {}),
    ("x*abs(x)", {"x": "2*abs(x)"}, {}),
    ("relu6(x)", {"x": "(sign(x) - sign(x - 6))/2"}, {}),
    ("minimum(x, 0)**2", {"x": "2*minimum(x, 0)"}, {}),
    ("logsumexp(z) - dot(y, z)", {"z": "softmax(z) - y"}, {"z": ("n",), "y": ("n",)}),
    ("-dot(y, log_softmax(z))", {"z": "sum(y)*softmax(z) - y"}, {"z": ("n",), "y": ("n",)}),
    ("mean((w*x - y)**2)", {"w": "2*dot(w*x - y, x)/numel(x)"}, {"x": ("n",), "y": ("n",)}),
    ("sum((A @ w - b)**2)/numel(b)",
     {"w": "2*A.T @ (A @ w - b)/numel(b)"},
     {"A": ("n", "m",), "w": ("m",), "b": ("n",)}),
    ("log(1 + exp(-y*dot(w, x)))",
     {"w": "-y*x*sigmoid(-y*dot(w, x))"},
     {"w": ("n",), "x": ("n",)}),
    ("softplus(-y*dot(w, x))", {"w": "-y*x/(1 + exp(y*dot(w, x)))"}, {"w": ("n",), "x": ("n",)}),
    ("relu(1 - y*dot(w, x))",
     {"w": "-y*x*(1 + sign(1 - y*dot(w, x)))/2"},
     {"w": ("n",), "x": ("n",)}),
    ("mean(log(1 + exp(-y*(X @ w))))",
     {"w": "-X.T @ (y*sigmoid(-y*(X @ w)))/numel(y)"},
     {"X": ("n", "m",), "w": ("m",), "y": ("n",)}),
    ("logsumexp(z)", {"z": "softmax(z)"}, {"z": ("n",)}),
    ("sum(log_softmax(z))", {"z": "1 - numel(z)*softmax(z)"}, {"z": ("n",)}),
    ("0.5*lam*dot(w, w) + sum(relu(1 - y*(X @ w)))",
     {"w": "lam*w - X.T @ (y*(1 + sign(1 - y*(X @ w)))/2)"},
     {"X": ("n", "m",), "w": ("m",), "y": ("n",)}),
    ("mean(x**2)", {"x": "2*x/numel(x)"}, {"x": ("n",)}),
    ("dot(a, x)", {"x": "a"}, {"a": ("n",), "x": ("n",)}),
    ("x.T @ A @ x", {"x": "A @ x + A.T @ x"}, {"A": ("n", "n",), "x": ("n",)}),
    ("trace(A @ B)", {"A": "B.T"}, {"A": ("n", "m",), "B": ("m", "n",)}),
    ("trace(A.T @ A)", {"A": "2*A"}, {"A": ("n", "m",)}),
    ("dot(y, A @ x)", {"x": "A.T @ y"}, {"A": ("n", "m",), "x": ("m",), "y": ("n",)}),
    ("dot(y, A @ x)", {"A": "outer(y, x)"}, {"A": ("n", "m",), "x": ("m",), "y": ("n",)}),
    ("sum((A @ x - b)**2)",
     {"x": "2*A.T @ (A @ x - b)"},
     {"A": ("n", "m",), "x": ("m",), "b": ("n",)}),
    ("norm(x)", {"x": "x/norm(x)"}, {"x": ("n",)}),
    ("dot(x, x)**2", {"x": "4*dot(x, x)*x"}, {"x": ("n",)}),
    ("sum(exp(x))", {"x": "exp(x)"}, {"x": ("n",)}),
    ("log(sum(exp(x)))", {"x": "exp(x)/sum(exp(x))"}, {"x": ("n",)}),
    ("trace(A @ A)", {"A": "2*A.T"}, {"A": ("n", "n",)}),
    ("sum(A*B)", {"A": "B"}, {"A": ("n", "m",), "B": ("n", "m",)}),
    ("trace(A.T @ B @ A)", {"A": "B @ A + B.T @ A"}, {"A": ("n", "m",), "B": ("n", "n",)}),
    ("dot(x, y)**2", {"x": "2*dot(x, y)*y"}, {"x": ("n",), "y": ("n",)}),
    ("sum(tanh(W @ x))", {"W": "outer(1 - tanh(W @ x)**2, x)"}, {"W": ("n", "m",), "x": ("m",)}),
    ("mean(x)", {"x": "x*0 + 1/numel(x)"}, {"x": ("n",)}),
    ("dot(x, A @ y)", {"y": "A.T @ x"}, {"A": ("n", "n",), "x": ("n",), "y": ("n",)}),
    ("sum(sigmoid(W @ x))",
     {"x": "W.T @ (sigmoid(W @ x)*(1 - sigmoid(W @ x)))"},
     {"W": ("n", "m",), "x": ("m",)}),
    ("trace(X @ A @ X.T)", {"X": "X @ (A + A.T)"}, {"X": ("n", "m",), "A": ("m", "m",)}),
    ("relu(x)**3", {"x": "3*relu(x)**2"}, {}),
    ("abs(x**2 - 4)", {"x": "2*x*sign(x**2 - 4)"}, {}),
    ("maximum(0, x)*exp(x)", {"x": "relu(x)*exp(x) + exp(x)*(1 + sign(x))/2"}, {}),
    ("minimum(x, y)", {"y": "(1 + sign(x - y))/2"}, {}),
    ("abs(x - y)", {"x": "sign(x - y)", "y": "-sign(x - y)"}, {}),
    ("relu(x + y)**2", {"x": "2*relu(x + y)"}, {}),
    ("relu(x - 1) + relu(1 - x)", {"x": "sign(x - 1)"}, {}),
    ("sum(x*log(x))", {"x": "log(x) + 1"}, {"x": ("n",)}),
    ("mean(abs(x - y))", {"x": "sign(x - y)/numel(x)"}, {"x": ("n",), "y": ("n",)}),
    ("0.5*sum((W @ x - t)**2)",
     {"W": "outer(W @ x - t, x)"},
     {"W": ("n", "m",), "x": ("m",), "t": ("n",)}),
    ("dot(x, x)/2 + dot(b, x)", {"x": "x + b"}, {"x": ("n",), "b": ("n",)}),
    ("trace(A @ A.T)", {"A": "2*A"}, {"A": ("n", "m",)}),
    ("sum(exp(A @ x))", {"x": "A.T @ exp(A @ x)"}, {"A": ("n", "m",), "x": ("m",)}),
    ("logsumexp(A @ x)", {"x": "A.T @ softmax(A @ x)"}, {"A": ("n", "m",), "x": ("m",)}),
    ("sin(x**3)", {"x": "3*x**2*cos(x**3)"}, {}),
    ("sin(x)*cos(x)", {"x": "cos(2*x)"}, {}),
    ("asin(x) + acos(x)", {"x": "0"}, {}),
    ("atan(2*x)", {"x": "2/(1 + 4*x**2)"}, {}),
    ("atan(1/x)", {"x": "-1/(1 + x**2)"}, {}),
    ("log(cosh(x))", {"x": "tanh(x)"}, {}),
    ("log(sqrt(x**2 + 1))", {"x": "x/(x**2 + 1)"}, {}),
    ("-(y*log(sigmoid(z)) + (1 - y)*log(1 - sigmoid(z)))", {"z": "sigmoid(z) - y"}, {}),
    ("sqrt(x**2 + y**2)", {"x": "x/sqrt(x**2 + y**2)", "y": "y/hypot(x, y)"}, {}),
    ("x*y*z", {"z": "x*y", "x": "y*z"}, {}),
    ("log(x**3 + x)", {"x": "(3*x**2 + 1)/(x**3 + x)"}, {}),
    ("log(1 + sqrt(x))", {"x": "1/(2*sqrt(x)*(1 + sqrt(x)))"}, {}),
    ("sigmoid(x)**2", {"x": "2*sigmoid(x)**2*(1 - sigmoid(x))"}, {}),
]

def run(expr, grads, shapes):
    return symgrad.check(expr, grads, shapes=shapes, samples=3, timeout=BUDGET)


def case_id(case) -> str:
    text = f"{case[0]} | " + ", ".join(f"{k}={v}" for k, v in case[1].items())
    return text if len(text) <= 70 else text[:67] + "..."


@pytest.mark.parametrize("expr, grads, shapes, words", WRONG, ids=map(case_id, WRONG))
def test_wrong_answers_are_caught_and_explained(expr, grads, shapes, words):
    r = run(expr, grads, shapes)
    assert r.verdict == "wrong", r.text()
    assert all(v["symbolic"] != "timeout" for v in r.variables.values()), r.notes
    # the counterexample is real: finite differences of f (not reverse mode) agree with
    # the true gradient there, and the claim is not it
    c = r.counterexample
    point = {k: np.asarray(v, dtype=np.float64) for k, v in c["point"].items()}
    fd = central_differences(symgrad.parse(expr), point, c["variable"])
    np.testing.assert_allclose(fd, c["true"], rtol=1e-4, atol=1e-6)
    assert not np.allclose(np.broadcast_to(c["claimed"], np.shape(fd)), fd, rtol=1e-4,
                           atol=1e-9)
    for w in words:
        assert any(d.startswith(w) for d in r.diagnosis), (w, r.diagnosis)


@pytest.mark.parametrize("expr, grads, shapes", RIGHT, ids=map(case_id, RIGHT))
def test_right_answers_in_other_forms_are_proved(expr, grads, shapes):
    r = run(expr, grads, shapes)
    assert r.verdict == "correct", r.text()
    assert r.counterexample is None and not r.diagnosis
