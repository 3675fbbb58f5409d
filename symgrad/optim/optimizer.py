"""``optim.Optimizer``: parameter groups, per-parameter state, ``zero_grad``, ``step``,
``state_dict``, printing; the algorithms (``sgd``, ``adam`` ...) say how one parameter moves.

Each algorithm is written as PyTorch's single-tensor (for-loop) implementation is, with the
same operations in the same order on the parameter's dtype, so that from the same weights
and gradients the updates agree with PyTorch's to the last bits of float rounding.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable

from ..api.core import Tensor
from ..api.messages import _LEGACY_NAMES
from ..autograd.grad_mode import enable_grad, no_grad
from ..nn.parameter import zero_grads

__all__ = ["Optimizer", "required"]


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: ``params`` is an iterable of tensors or of dicts (parameter groups, each
    with its own options); ``defaults`` fill what a group does not set.

    Subclasses set :attr:`defaults`' keys in PyTorch's order, validate them in
    :meth:`_check`, and move one parameter in :meth:`_update`.
    """

    def __init__(self, params: Iterable, defaults: dict) -> None:
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list = []
        self._step_count = 0
        if isinstance(params, Tensor):
            raise TypeError(f"params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got torch.{_LEGACY_NAMES[params.dtype.name]}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__module__}.{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {k}")
            group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self._check(group)
        self.param_groups.append(group)
        self._init_group(group)

    #: ``(option, how PyTorch's message names it)`` for options that must be >= 0, in
    #: the order PyTorch checks them.
    _nonnegative: tuple = ()

    def _check(self, group: dict) -> None:
        """Raise PyTorch's ValueError for an invalid option."""
        for key, label in self._nonnegative:
            check(group[key] >= 0, f"Invalid {label}: {group[key]}")

    def _init_group(self, group: dict) -> None:
        """State created with the group (Adagrad's sums); most create it on first step."""

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        raise NotImplementedError

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads((p for g in self.param_groups for p in g["params"]), set_to_none)

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; ``closure`` re-evaluates
        the loss first (and its value is returned)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = -p.grad if group.get("maximize") else p.grad
                    self._update(p, grad, self.state[p], group)
        self._step_count += 1
        return loss

    # ---------------------------------------------------------------- state
    def state_dict(self) -> dict:
        index, groups = {}, []
        for g in self.param_groups:
            for p in g["params"]:
                index.setdefault(id(p), len(index))
            groups.append({**{k: v for k, v in g.items() if k != "params"},
                           "params": [index[id(p)] for p in g["params"]]})
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index and s}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        by_index = {i: p for a, b in zip(groups, self.param_groups)
                    for i, p in zip(a["params"], b["params"])}
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            p = by_index[i]
            # (as PyTorch: tensors already of the parameter's dtype are shared, not copied)
            self.state[p] = {k: v.to(p.dtype) if isinstance(v, Tensor) and k != "step"
                             and v.is_floating_point() else v for k, v in s.items()}
        for a, b in zip(groups, self.param_groups):
            b.update({k: v for k, v in a.items() if k != "params"})

    def __repr__(self) -> str:
        out = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for k in sorted(g):
                if k != "params":
                    out += f"    {k}: {g[k]}\n"
        return out + ")"

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}


def check(ok: bool, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``ok`` (PyTorch's option checks)."""
    if not ok:
        raise ValueError(message)
