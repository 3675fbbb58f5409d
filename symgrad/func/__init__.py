"""``symgrad.func``: PyTorch's function transforms (``torch.func``) over symgrad.

``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` (:mod:`.reverse`); ``jvp``, ``jacfwd``,
``linearize``, ``hessian`` (:mod:`.forward`, through ``symgrad.autograd.forward_ad``);
``vmap`` (:mod:`.mapping`); ``functional_call``, ``stack_module_state`` (:mod:`.modules`).
Nested containers of tensors are handled by :mod:`.pytree`.

May import: ``symgrad.ops``, ``symgrad.api``, ``symgrad.autograd``.

Examples
--------
>>> import symgrad as torch
>>> torch.func.vmap(torch.func.grad(lambda x: (x ** 2).sum()))(torch.tensor([[1., 2.]]))
tensor([[2., 4.]])
"""
from __future__ import annotations

from .reverse import grad, grad_and_value, jacrev, vjp
from .forward import hessian, jacfwd, jvp, linearize
from .modules import functional_call, stack_module_state
from .mapping import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "jvp", "jacfwd", "linearize", "hessian",
           "vmap", "functional_call", "stack_module_state"]
