"""``symgrad.autograd.graph``: the graph-node base class under PyTorch's name, and the
hooks on saved tensors (``saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks``).

Every ``grad_fn`` (op nodes, ``AccumulateGrad``, custom Functions' nodes) is a
:class:`Node`, so ``isinstance(t.grad_fn, torch.autograd.graph.Node)`` holds as in PyTorch.

Inside ``saved_tensors_hooks(pack_hook, unpack_hook)`` every tensor an op saves for
backward is handed to ``pack_hook`` and the graph keeps what it returns (any object);
``unpack_hook`` turns that back into a tensor each time the saved value is read (by the
backward pass, or ``grad_fn._saved_*``).  The hooks belong to the thread that opened the
block; blocks nest, the innermost wins.

Examples
--------
>>> import symgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> isinstance((x * 2).grad_fn, torch.autograd.graph.Node)
True
>>> seen = []
>>> with torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t * 4,
...                                               lambda t: t / 4):
...     y = x.pow(2)
>>> y.sum().backward()
>>> len(seen), x.grad
(1, tensor([2., 2.]))
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..ir.node import GRAD_MODE, Node

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class saved_tensors_hooks:
    """Pack and unpack every tensor saved for backward inside the block."""

    def __init__(self, pack_hook: Callable[[Any], Any],
                 unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> "saved_tensors_hooks":
        if _DISABLED.message is not None:
            raise RuntimeError(_DISABLED.message)
        GRAD_MODE.saved_hooks = GRAD_MODE.saved_hooks + [(self.pack_hook, self.unpack_hook)]
        return self

    def __exit__(self, *exc) -> None:
        GRAD_MODE.saved_hooks = GRAD_MODE.saved_hooks[:-1]  # (replaced: see GRAD_MODE)


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors kept on the CPU (where symgrad's already are) and brought back to
    their device when read; ``pin_memory`` is accepted and changes nothing here."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: (t.device, t.cpu()), lambda packed: packed[1].to(packed[0]))


class _Disabled(threading.local):
    message = None


_DISABLED = _Disabled()


class disable_saved_tensors_hooks:
    """Inside the block, opening ``saved_tensors_hooks`` raises ``RuntimeError(message)``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self._prev, _DISABLED.message = _DISABLED.message, self.error_message

    def __exit__(self, *exc) -> None:
        _DISABLED.message = self._prev
