"""The update rules: ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``.

Each ``_update`` is PyTorch's single-tensor algorithm for one parameter, in the same
operations and order (see PyTorch's documentation of each optimizer for the formulas).
"""
from __future__ import annotations

import math

from ..api.creation import full_like, zeros_like
from ..api.construct import tensor
from ..api.methods import maximum
from ..ops.dtypes import float32
from .optimizer import Optimizer, check

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]


_LR = ("lr", "learning rate")
_EPS = ("eps", "epsilon value")
_WD = ("weight_decay", "weight_decay value")
_MOMENTUM = ("momentum", "momentum value")


class SGD(Optimizer):
    """Stochastic gradient descent, with momentum, dampening, Nesterov momentum and L2
    weight decay.

    Examples
    --------
    >>> import symgrad as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    _nonnegative = (_LR, _MOMENTUM, _WD)

    def _check(self, g: dict) -> None:
        super()._check(g)
        check(not g["nesterov"] or (g["momentum"] > 0 and g["dampening"] == 0),
              "Nesterov momentum requires a momentum and zero dampening")

    def _update(self, p, grad, state, g) -> None:
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        if g["momentum"] != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.clone().detach()
            else:
                buf.mul_(g["momentum"]).add_(grad, alpha=1 - g["dampening"])
            grad = grad.add(buf, alpha=g["momentum"]) if g["nesterov"] else buf
        p.add_(grad, alpha=-g["lr"])


class Adam(Optimizer):
    """Adam (Kingma and Ba 2015), with L2 ``weight_decay`` (or decoupled, as AdamW),
    ``amsgrad`` and ``maximize``."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused=None, decoupled_weight_decay: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused, decoupled_weight_decay=decoupled_weight_decay))

    _nonnegative = (_LR, _EPS)

    def _check(self, g: dict) -> None:
        super()._check(g)
        for i, b in enumerate(g["betas"]):
            check(0.0 <= b < 1.0, f"Invalid beta parameter at index {i}: {b}")
        check(g["weight_decay"] >= 0, f"Invalid weight_decay value: {g['weight_decay']}")

    def _update(self, p, grad, state, g) -> None:
        beta1, beta2 = g["betas"]
        if not state:
            state["step"] = tensor(0.0, dtype=float32)
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
            if g["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_like(p)
        state["step"].add_(1)
        if g["weight_decay"] != 0:
            if g["decoupled_weight_decay"]:
                p.mul_(1 - g["lr"] * g["weight_decay"])
            else:
                grad = grad.add(p, alpha=g["weight_decay"])
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
        step = state["step"].item()
        step_size = g["lr"] / (1 - beta1 ** step)
        correction2_sqrt = math.sqrt(1 - beta2 ** step)
        if g["amsgrad"]:
            state["max_exp_avg_sq"].copy_(maximum(state["max_exp_avg_sq"], exp_avg_sq))
            denom = (state["max_exp_avg_sq"].sqrt() / correction2_sqrt).add_(g["eps"])
        else:
            denom = (exp_avg_sq.sqrt() / correction2_sqrt).add_(g["eps"])
        p.add_(exp_avg / denom, alpha=-step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter 2019)."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach=None, capturable: bool = False, differentiable: bool = False,
                 fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture 6e), with ``momentum``, ``centered`` and L2 weight decay."""

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    _nonnegative = (_LR, _EPS, _MOMENTUM, _WD, ("alpha", "alpha value"))

    def _update(self, p, grad, state, g) -> None:
        if not state:
            state["step"] = tensor(0.0, dtype=float32)
            state["square_avg"] = zeros_like(p)
            if g["momentum"] > 0:
                state["momentum_buffer"] = zeros_like(p)
            if g["centered"]:
                state["grad_avg"] = zeros_like(p)
        state["step"].add_(1)
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        alpha = g["alpha"]
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
        if g["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.add(grad_avg * grad_avg, alpha=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(g["eps"])
        if g["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.mul_(g["momentum"]).add_(grad / avg)
            p.add_(buf, alpha=-g["lr"])
        else:
            p.add_(grad / avg, alpha=-g["lr"])


class Adagrad(Optimizer):
    """Adagrad (Duchi et al. 2011), with ``lr_decay`` and L2 weight decay."""

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None) -> None:
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))

    _nonnegative = (_LR, ("lr_decay", "lr_decay value"), _WD,
                    ("initial_accumulator_value", "initial_accumulator_value value"), _EPS)

    def _init_group(self, g: dict) -> None:
        for p in g["params"]:
            self.state[p] = {"step": tensor(0.0, dtype=float32),
                             "sum": full_like(p, g["initial_accumulator_value"])}

    def _update(self, p, grad, state, g) -> None:
        state["step"].add_(1)
        step = state["step"].item()
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        clr = g["lr"] / (1 + (step - 1) * g["lr_decay"])
        state["sum"].add_(grad * grad)
        std = state["sum"].sqrt().add_(g["eps"])
        p.add_(grad / std, alpha=-clr)
