"""The transforms' shared state, per thread: how deeply transforms are nested, and the
randomness rule of the innermost ``vmap``.

A derivative transform (``grad``, ``vjp``, ``jvp``, ...) taken inside another one must
keep its result differentiable (``create_graph=True``) so the outer one can differentiate
it; at the outermost level the results are plain tensors, as PyTorch's are.

Examples
--------
>>> depth()
0
>>> with transform():
...     depth()
1
"""
from __future__ import annotations

import contextlib
import itertools
import os
import sys
import threading

import numpy as np

from ..api.core import VMAP, Tensor

__all__ = ["depth", "vmaps", "transform", "vmap_randomness", "vmapping", "mark_sample",
           "mark_wrapped",
           "RANDOM_ERROR", "WRAPPED_ERROR",
           "ITEM_ERROR",
           "CONTROL_FLOW_ERROR", "DATA_ERROR", "DYNAMIC_MASK_ERROR", "dynamic_error"]

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please "
                "either use the 'same' or 'different' randomness flags on vmap or perform "
                "the randomness operation out of vmap")


ITEM_ERROR = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
              "over calling .item() on a Tensor, please try to rewrite what you're doing with "
              "other operations. If error is occurring somewhere inside PyTorch internals, "
              "please file a bug report.")
CONTROL_FLOW_ERROR = ("vmap: It looks like you're attempting to use a Tensor in some "
                      "data-dependent control flow. We don't support that yet, please file an "
                      "issue at https://github.com/pytorch/pytorch/issues .")
WRAPPED_ERROR = (
    "vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to "
    "use a Tensor in some data-dependent control flow or (3) encountering this error in "
    "PyTorch internals. For (1): we don't support vmap over calling .item() on a Tensor, "
    "please try to rewrite what you're doing with other operations. For (2): we don't "
    "support data-dependent control flow in vmap yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues . For (3): please file an issue.")
DATA_ERROR = "Cannot access data pointer of Tensor that doesn't have storage"
_REFUSALS = {"item": ITEM_ERROR, "bool": CONTROL_FLOW_ERROR, "data": DATA_ERROR}
_TOKENS = itertools.count(1)


class _State(threading.local):
    def __init__(self) -> None:
        self.depth = 0
        self.randomness: list = []
        self.sizes: list = []  # the batch size of each running vmap (None: not a vmap's)
        self.level_of: dict = {}  # token -> the vmap's level among the transforms
        self.running: set = set()  # the tokens of the vmaps running in this thread
        self.entry_depth: dict = {}  # token -> how many transforms ran around that vmap


_STATE = _State()


def vmaps() -> int:
    """How many vmaps are running in this thread."""
    return len(_STATE.running)


def depth() -> int:
    """How many transforms are running around the caller."""
    return _STATE.depth


@contextlib.contextmanager
def transform():
    """One more level of transform while the block runs."""
    _STATE.depth += 1
    try:
        yield
    finally:
        _STATE.depth -= 1


@contextlib.contextmanager
def vmapping(randomness: str, size: int | None = None):
    """A ``vmap`` (of ``size`` samples) with this randomness rule while the block runs."""
    token = next(_TOKENS)
    _STATE.level_of[token] = depth() + len(_STATE.running) + 1  # (functorch's numbering)
    _STATE.sizes.append(size)
    _STATE.randomness.append(randomness)
    _STATE.running.add(token)
    _STATE.entry_depth[token] = depth()
    VMAP.running += 1  # (apply then gives results their marks)
    try:
        yield token
    finally:
        _STATE.sizes.pop()
        _STATE.randomness.pop()
        _STATE.running.discard(token)
        _STATE.level_of.pop(token, None)
        _STATE.entry_depth.pop(token, None)
        VMAP.running -= 1


def mark_sample(t, token: int):
    """``t`` (a sample given to the function) marked as depending on the vmap ``token``:
    results computed from it inherit the mark, and while that vmap runs they refuse
    ``.item()``, ``bool()`` and the like as PyTorch's BatchedTensor does."""
    if isinstance(t, Tensor):
        t._vmap = (t._vmap or frozenset()) | {token}
    return t


def mark_wrapped(source, t):
    """``t``, which a transform (``grad``, ``jvp``, ...) gives the function in place of
    ``source``, with ``source``'s marks and the note that a transform inside those vmaps
    wraps it (PyTorch's error then names both ``.item()`` and control flow)."""
    marks = getattr(source, "_vmap", None)
    if marks is not None and isinstance(t, Tensor):
        t._vmap = marks | {-m for m in marks if m in _STATE.running}
    return t


def _propagate(args, out) -> None:
    marks = None
    for a in args:
        if isinstance(a, Tensor) and a._vmap is not None:
            marks = a._vmap if marks is None else marks | a._vmap
    if marks is not None:
        out._vmap = marks


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_CORE = sys.modules[Tensor.__module__].__file__


def _refuse(t, what: str) -> None:
    """PyTorch's error if ``t`` derives from a sample of a running vmap and the caller is
    the user's code (symgrad's own code reads values where PyTorch's kernels would)."""
    if t._vmap.isdisjoint(_STATE.running):
        return
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == _CORE:
        frame = frame.f_back
    if frame is None or not frame.f_code.co_filename.startswith(_PACKAGE):
        # (inside a transform inside the vmap every value is wrapped, as functorch's are)
        wrapped = what != "data" and any(
            -m in t._vmap or (m in t._vmap and depth() > _STATE.entry_depth.get(m, depth()))
            for m in _STATE.running)
        raise RuntimeError(WRAPPED_ERROR if wrapped else _REFUSALS[what])


def _user_code(skip: int) -> bool:
    """Whether the code that called into symgrad's tensor API (``skip`` frames up, past
    the API's own frames) is the user's (symgrad's own code may do what PyTorch's kernels
    would not be asked to)."""
    frame = sys._getframe(skip)
    while frame is not None and frame.f_code.co_filename.startswith(_API):
        frame = frame.f_back
    return frame is not None and not frame.f_code.co_filename.startswith(_PACKAGE)


_API = os.path.dirname(_CORE) + os.sep


def _marks(x) -> frozenset:
    """The running vmaps ``x`` is batched over."""
    marks = getattr(x, "_vmap", None) if isinstance(x, Tensor) else None
    return marks & _STATE.running if marks else frozenset()


def _batched(x) -> bool:
    return bool(_marks(x))


def _unbatched_self(t, others) -> int | None:
    """The level of a vmap some of ``others`` are batched over and ``t`` is not (the
    innermost), or None."""
    missing = frozenset().union(*(_marks(o) for o in others)) - _marks(t)
    return max((_STATE.level_of.get(m, 1) for m in missing), default=None)


#: In-place ops whose error PyTorch's vmap names as "inplace arithmetic", by their own
#: name, or (the others) as ``aten::<op>_`` at the vmap's level.
_ARITHMETIC = {"mul", "sub", "sub_alpha", "div", "copy", "masked_fill"}
_NAMED = {"fill3": "fill_", "index_put_": "index_put_", "copy_slices": "index_put_"}


def _in_place_error(name: str, level: int | None = None) -> RuntimeError:
    where = "in a vmap" if level is None else f"at level {level}"
    return RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor "
        "`other` in extra_args that has more elements than `self`. This happened due to "
        f"`other` being vmapped over but `self` not being vmapped over {where}. Please try "
        f"to use out-of-place operators instead of {name}. If said operator is being called "
        "inside the PyTorch framework, please file a bug report instead.")


DYNAMIC_MASK_ERROR = ("vmap: We do not support batching operators that can support dynamic "
                      "shape. Attempting to batch over indexing with a boolean mask.")


def dynamic_error(op: str) -> RuntimeError:
    """PyTorch's error for an op whose result's shape depends on the values."""
    return RuntimeError(
        "vmap: We do not support batching operators that can output dynamic shape. Attempted "
        f"to vmap over aten::{op}. Please file an issue at https://github.com/pytorch/pytorch/"
        "issues if you need this feature.")


def _mask(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(_batched(i) and i.dtype.name == "bool" for i in items)


def _guard(what: str, t, *extra) -> None:
    """PyTorch's vmap errors, raised for the user's code while a vmap runs:

    - ``("in_place", t, op, others)``: an in-place op writing values of the batch into a
      tensor that is not batched (``buf.copy_(x)``, ``buf.mul_(x)``);
    - ``("setitem", t, index, value)``: ``buf[i] = x`` likewise (``copy_`` or ``index_put_``
      by the index), or a boolean mask of the batch;
    - ``("getitem", t, index)``: ``x[mask]`` with a mask of the batch (its shape would
      depend on each sample's values), ``("where", condition)``: ``torch.where(c)``
      likewise;
    - ``("data", t)``: ``x.data`` of a batched ``x``.
    """
    if not _STATE.running or not _user_code(3):
        return
    if what == "data":
        if _batched(t):
            raise RuntimeError("accessing `data` under vmap transform is not allowed")
    elif what == "where":
        if _batched(t):
            raise dynamic_error("where")
    elif what == "getitem":
        if _mask(extra[0]):
            raise RuntimeError(DYNAMIC_MASK_ERROR)
    elif what == "setitem":
        index, value = extra
        if _mask(index):
            raise RuntimeError(DYNAMIC_MASK_ERROR)
        if _unbatched_self(t, (value,)) is not None:
            items = index if isinstance(index, tuple) else (index,)
            advanced = any(isinstance(i, (Tensor, list)) for i in items)
            raise _in_place_error("index_put_" if advanced else "inplace arithmetic")
    elif what == "in_place":
        op, others = extra
        level = _unbatched_self(t, others)
        if level is None:
            return
        if op.key in ("add", "add_alpha") and _STATE.sizes and _STATE.sizes[-1] is not None:
            other = next(o for o in others if _batched(o))
            shape = [_STATE.sizes[-1]] + list(np.broadcast_shapes(tuple(t.shape),
                                                                  tuple(other.shape)))
            raise RuntimeError(f"output with shape {list(t.shape)} doesn't match the "
                               f"broadcast shape {shape}")
        if op.key in _ARITHMETIC:
            raise _in_place_error("inplace arithmetic")
        if op.key in _NAMED:
            raise _in_place_error(_NAMED[op.key])
        raise _in_place_error(f"aten::{op.function or op.name}_", level)


VMAP.propagate = _propagate
VMAP.refuse = _refuse
VMAP.guard = _guard


def vmap_randomness() -> str | None:
    """The randomness rule of the innermost running ``vmap`` (``None`` outside one)."""
    return _STATE.randomness[-1] if _STATE.randomness else None


def check_random() -> None:
    """PyTorch's error for a random operation inside ``vmap(..., randomness='error')``."""
    if "error" in _STATE.randomness:
        raise RuntimeError(RANDOM_ERROR)
