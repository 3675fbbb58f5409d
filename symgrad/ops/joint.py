"""One node for the several gradients of one backward, as PyTorch records them.

PyTorch computes a convolution's (a batch norm's) gradients in the input, the weight and
the bias with one call, ``convolution_backward`` (``native_batch_norm_backward``), and
under ``create_graph=True`` records that call as one node with three outputs,
``ConvolutionBackwardBackward0`` (``NativeBatchNormBackwardBackward0``).  The op table's
rules are one per input, so the first-order rules of such an op ask for their gradient
through :func:`gradient`: on a recorded backend the first rule to run calls the
several-output op once for every gradient the node's inputs can want, and the others
take their output from that call (one node); elsewhere (numpy, SymPy) each rule computes
its own output alone.

The several-output ops are in the side table ``EVERY_OUTPUT``: their forward returns a
tuple (None for an output not asked for) and their rules take a list of gradients, one per
output (None where undefined).

Layer 1: numpy only.
"""
from __future__ import annotations

import threading

__all__ = ["gradient", "one_hot"]


class _Last(threading.local):
    """The last several-output call of this thread: its operands (by identity), its
    attributes, its outputs, and how many of them are still to be taken."""

    key: tuple | None = None
    outputs: tuple = ()
    left: int = 0


_LAST = _Last()


def one_hot(k: int, n: int) -> tuple:
    """``(False, ..., True, ..., False)``: output ``k`` of ``n`` only."""
    return tuple(i == k for i in range(n))


def gradient(m, op, which: int, operands: tuple, attrs: tuple, mask: tuple, run=None):
    """Output ``which`` of the several-output ``op`` on ``operands`` (then ``attrs`` and an
    output mask).  On a recorded backend, ``mask`` (the outputs the node's rules will ask
    for) is computed by one call whose outputs the following rules of the same node take
    (one node, as PyTorch's); on others, output ``which`` alone.  ``run(m, *operands,
    *attrs, mask)``, if given, is called instead of ``op`` (a composite: PyTorch's
    formula of several ops whose intermediate values the outputs share)."""
    call = m.call if run is None else (lambda _, *args: run(m, *args))
    if not m.records:
        return call(op, *operands, *attrs, one_hot(which, len(mask)))[which]
    last = _LAST
    key = last.key
    given = tuple(operands) + tuple(attrs)  # (the same objects: one node's saved values)
    if (key is not None and key[0] is op and len(key[1]) == len(given)
            and all(a is b for a, b in zip(key[1], given)) and last.outputs[which] is not None):
        out = last.outputs[which]
        last.left -= 1
        if last.left <= 0:
            last.key, last.outputs = None, ()
        return out
    mask = tuple(bool(b) or i == which for i, b in enumerate(mask))
    outputs = call(op, *operands, *attrs, mask)
    last.key, last.outputs, last.left = (op, given), outputs, sum(mask) - 1
    if last.left <= 0:
        last.key, last.outputs = None, ()
    return outputs[which]
