"""Loss functions with PyTorch's signatures, checks and messages.

The ones PyTorch runs as one op are records of :mod:`symgrad.ops.losses`; the others are
built from ops as PyTorch builds them (``cross_entropy`` is ``nll_loss`` of
``log_softmax``, ``l1_loss`` the mean of ``|input - target|``).
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import ops as O
from ...api.apply import apply
from ...api.core import Tensor
from ...api.messages import _SCALAR_NAMES
from ...ops.dtypes import int64

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy", "kl_div"]


def _reduction(reduction: str, size_average=None, reduce=None) -> str:
    """PyTorch's reduction from the new argument or the two deprecated ones."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
    if reduction not in O.REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _size(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"


def _paired(name: str, input: Tensor, target: Tensor) -> tuple:
    """``input`` and ``target`` of one dtype and one shape, with PyTorch's warning when
    their sizes differ (the usual sign of a mistake)."""
    # (mse_loss and smooth_l1_loss take an integer target, as in the 60-minute blitz's
    # ``torch.arange(1, 11)``: PyTorch's kernel converts it)
    if target.dtype is not input.dtype and name != "l1_loss" and not (
            name in ("mse_loss", "smooth_l1_loss") and not target.dtype.is_floating_point):
        raise RuntimeError(f"Found dtype {_SCALAR_NAMES[target.dtype.name]} but expected "
                           f"{_SCALAR_NAMES[input.dtype.name]}")
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({_size(target)}) that is different to the input "
                      f"size ({_size(input)}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)
        # (broadcast as PyTorch's broadcast_tensors: a tensor of the full shape stays)
        shape = tuple(np.broadcast_shapes(input.shape, target.shape))
        input, target = (t if t.shape == shape else t.expand(shape) for t in (input, target))
    return input, target


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight=None) -> Tensor:
    """Mean (or sum) of squared differences (``MseLossBackward0``).

    Examples
    --------
    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> F.mse_loss(x, torch.tensor([0.0, 0.0]))
    tensor(2.5000, grad_fn=<MseLossBackward0>)
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _paired("mse_loss", input, target)
    if weight is not None:
        return _reduce((input - target) ** 2 * weight, reduction)
    return apply(O.MSE_LOSS, (input, target), (O.REDUCTIONS[reduction],))


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean", weight=None) -> Tensor:
    """Mean (or sum) of absolute differences, as PyTorch composes it."""
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _paired("l1_loss", input, target)
    loss = (input - target).abs()
    return _reduce(loss if weight is None else loss * weight, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Squared below ``beta``, absolute above (``SmoothL1LossBackward0``)."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:  # PyTorch's own shortcut
        return l1_loss(input, target, size_average, reduce, reduction)
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _paired("smooth_l1_loss", input, target)
    return apply(O.SMOOTH_L1_LOSS, (input, target), (beta, O.REDUCTIONS[reduction]))


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
               delta: float = 1.0, weight=None) -> Tensor:
    """Squared within ``delta``, linear beyond (``HuberLossBackward0``)."""
    reduction = _reduction(reduction)
    input, target = _paired("huber_loss", input, target)
    return apply(O.HUBER_LOSS, (input, target), (delta, O.REDUCTIONS[reduction]))


def _array(weight) -> np.ndarray | None:
    """A weight tensor as the op's attribute (it broadcasts in the op's arithmetic)."""
    return None if weight is None else np.asarray(weight.detach().numpy())


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """``-(t log p + (1 - t) log(1 - p))``, each log at least -100
    (``BinaryCrossEntropyBackward0``)."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({_size(target)}) that is different to the "
                         f"input size ({_size(input)}) is deprecated. Please ensure they have "
                         "the same size.")
    _paired("binary_cross_entropy", input, target)
    p = input.detach().numpy()
    if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    w = None if weight is None else np.broadcast_to(_array(weight), input.shape)  # as PyTorch
    return apply(O.BINARY_CROSS_ENTROPY, (input, target), (w, O.REDUCTIONS[reduction]))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                     size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)``, computed stably
    (``BinaryCrossEntropyWithLogitsBackward0``); ``pos_weight`` weighs the positives."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({_size(target)}) must be the same as input size "
                         f"({_size(input)})")
    return apply(O.BINARY_CROSS_ENTROPY_WITH_LOGITS, (input, target),
                 (_array(weight), _array(pos_weight), O.REDUCTIONS[reduction]))


def _check_targets(input: Tensor, target: Tensor, ignore_index: int) -> None:
    if target.dtype is not int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_SCALAR_NAMES[target.dtype.name]}")
    if input.ndim < 1 or input.ndim > 1 and input.shape[0] != (target.shape[0]
                                                               if target.ndim else -1):
        raise ValueError(f"Expected input batch_size ({input.shape[0] if input.ndim else 0}) "
                         f"to match target batch_size "
                         f"({target.shape[0] if target.ndim else 0}).")
    classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    t = target.numpy()
    bad = t[(t != ignore_index) & ((t < 0) | (t >= classes))]
    if bad.size:
        raise IndexError(f"Target {int(bad.flat[0])} is out of bounds.")


def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of class indices (``NllLossBackward0``): ``input`` holds
    log-probabilities, classes along dim 1 (dim 0 for one sample)."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_targets(input, target, ignore_index)
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_SCALAR_NAMES[input.dtype.name]} but found "
                           f"{_SCALAR_NAMES[weight.dtype.name]}")
    return apply(O.NLL_LOSS, (input, target),
                 (_array(weight), O.REDUCTIONS[reduction], ignore_index))


def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy of logits: ``nll_loss(log_softmax(input))`` for class indices, or
    ``-(target * log_softmax(input)).sum(class dim)`` for class probabilities, with
    ``label_smoothing`` as PyTorch mixes it in.

    Examples
    --------
    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> x = torch.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
    >>> F.cross_entropy(x, torch.tensor([0]))
    tensor(0.2413, grad_fn=<NllLossBackward0>)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    class_dim = 1 if input.ndim >= 2 else 0
    classes = input.shape[class_dim]
    logp = input.log_softmax(class_dim)
    if target.dtype.is_floating_point:  # class probabilities
        if target.shape != input.shape:
            raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                               f"{list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        terms = logp * target
        if weight is not None:
            shape = [1] * input.ndim
            shape[class_dim] = classes
            terms = terms * weight.view(shape)
        if reduction == "none":
            return -terms.sum(class_dim)
        if reduction == "sum":
            return -terms.sum()
        # (a division by a number inside PyTorch's C++: DivBackward1)
        n = input.numel() // classes if input.ndim >= 2 else 1
        return apply(O.DIV_SCALAR, (-terms.sum(),), (n,))
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    keep = target != ignore_index
    if weight is not None:
        shape = [1] * input.ndim
        shape[class_dim] = classes
        smooth = -(logp * weight.view(shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(~keep, 0.0)
    if reduction == "mean":
        if weight is not None:
            denominator = weight[target[keep]].sum()
        else:
            denominator = keep.sum()
        smooth = smooth.sum() / denominator
    elif reduction == "sum":
        smooth = smooth.sum()
    # (products with numbers inside PyTorch's C++: MulBackward1)
    return (apply(O.MUL_SCALAR, (nll,), (1 - label_smoothing,))
            + apply(O.MUL_SCALAR, (smooth,), (label_smoothing / classes,)))


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence of ``target`` from ``input`` (log-probabilities)."""
    reduction = _reduction(reduction, size_average, reduce) if reduction != "batchmean" \
        else "batchmean"
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                      "the support size.'batchmean' divides only by the batch size, and "
                      "aligns with the KL div math definition.'mean' will be changed to "
                      "behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = apply(O.XLOGY, (target, target)) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)
