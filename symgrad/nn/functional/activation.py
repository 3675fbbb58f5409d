"""Activation functions with PyTorch's signatures (options, ``inplace=``).

Each is one op of the table (:mod:`symgrad.ops.activations`), or the composition PyTorch
itself builds (``softsign`` is ``x / (|x| + 1)``, ``tanhshrink`` ``x - tanh(x)``).
"""
from __future__ import annotations

from ... import ops as O
from ...api.apply import apply
from ...api.core import Tensor

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu",
           "selu_", "celu", "celu_", "gelu", "silu", "mish", "softplus", "softsign",
           "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "tanhshrink"]


def _run(op: O.Op, input: Tensor, attrs: tuple, inplace: bool, inplace_op: O.Op | None = None):
    if inplace:
        return input._in_place(inplace_op or op, (), attrs)
    return apply(op, (input,), attrs)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` elementwise (``ReluBackward0``); ``inplace`` writes into ``input``.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.nn.functional import relu
    >>> relu(torch.tensor([-1.0, 0.5], requires_grad=True))
    tensor([0.0000, 0.5000], grad_fn=<ReluBackward0>)
    """
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    return input.relu_()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``input`` clipped to ``[min_val, max_val]`` (``HardtanhBackward0``)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _run(O.HARDTANH, input, (min_val, max_val), inplace)


def hardtanh_(input: Tensor, min_val: float = -1, max_val: float = 1) -> Tensor:
    # (PyTorch's own binding: integer defaults, which its node shows)
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(input, 0), 6)``: PyTorch's ``hardtanh(input, 0, 6)``.

    Examples
    --------
    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> F.relu6(torch.tensor([-1.0, 3.0, 7.0], requires_grad=True))
    tensor([0., 3., 6.], grad_fn=<HardtanhBackward0>)
    """
    return _run(O.HARDTANH, input, (0, 6), inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    return _run(O.LEAKY_RELU, input, (negative_slope,), inplace, O.LEAKY_RELU_)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``alpha * (exp(input) - 1)`` elsewhere (``EluBackward0``)."""
    return _run(O.ELU, input, (alpha, 1, 1), inplace, O.ELU_)


def elu_(input: Tensor, alpha: float = 1) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU with PyTorch's constants (``EluBackward0`` with its alpha and scale)."""
    return _run(O.ELU, input, (O.activations.SELU_ALPHA, O.activations.SELU_SCALE, 1),
                inplace, O.ELU_)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``alpha * (exp(input / alpha) - 1)`` elsewhere."""
    return _run(O.CELU, input, (alpha,), inplace, O.CELU_)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``input * Φ(input)`` (``approximate="tanh"``: its tanh approximation)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return apply(O.GELU, (input,), (approximate,))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)`` (``SiluBackward0``)."""
    return _run(O.SILU, input, (), inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * tanh(softplus(input))`` (``MishBackward0``)."""
    return _run(O.MISH, input, (), inplace)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """``log(1 + exp(beta * input)) / beta``, ``input`` itself past ``threshold``.

    Examples
    --------
    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> F.softplus(torch.tensor([0.0, 30.0], requires_grad=True))
    tensor([ 0.6931, 30.0000], grad_fn=<SoftplusBackward0>)
    """
    return apply(O.SOFTPLUS, (input,), (beta, threshold))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _run(O.HARDSIGMOID, input, (), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _run(O.HARDSWISH, input, (), inplace)


def softsign(input: Tensor) -> Tensor:
    """``input / (|input| + 1)``, the composition PyTorch builds (``DivBackward0``)."""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """``input - tanh(input)`` (``SubBackward0``)."""
    return input - input.tanh()
