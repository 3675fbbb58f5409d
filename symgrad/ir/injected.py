"""What the graph IR and the engine use from the layers above them, handed down once.

Layers 2 and 3 record and run graphs of tensors, but the tensor class lives in layer 4
(:mod:`symgrad.api`), which imports them; they may not import it back.  So the layer
that owns each name hands it down here, once, at import time, and the IR and the engine
read it from :data:`INJECTED`:

- :mod:`symgrad.engine.rules` provides ``call_node`` (what calling a ``grad_fn`` by
  hand runs: ``Node.__call__``);
- :mod:`symgrad.api.tensor` provides ``Tensor`` (the class hooks receive and saved
  values are checked against), ``make`` (``make(array, dtype)``: a new tensor around an
  array), ``tensor`` (:func:`symgrad.tensor`, for saved numbers and index arrays shown as
  tensors), ``legacy_names`` (dtype name -> ``"FloatTensor"``, for messages) and
  ``recorded`` (the backend that gradient rules run on under ``create_graph=True``: they
  record tensor operations, so it calls ``apply``).

Examples
--------
>>> import symgrad
>>> INJECTED.Tensor is symgrad.Tensor
True
"""
from __future__ import annotations

__all__ = ["INJECTED", "inject"]


class _Injected:
    __slots__ = ("Tensor", "make", "tensor", "legacy_names", "recorded", "call_node")

    def __repr__(self) -> str:
        return f"<injected: {', '.join(n for n in self.__slots__ if hasattr(self, n))}>"


INJECTED = _Injected()


def inject(**names) -> None:
    """Hand names down to the IR and the engine (each once, from the layer that owns it)."""
    for name, value in names.items():
        setattr(INJECTED, name, value)
