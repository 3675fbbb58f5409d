"""Large arrays a backward pass on numpy owns: grown in place, and reused once dead.

A fresh array of tens of megabytes costs more than the arithmetic that fills it: the
operating system maps and zeroes new pages for it.  A backward pass makes many such
arrays that nobody else ever sees (the gradients its rules compute, the sums of
gradients) and frees saved values as it goes.  PyTorch's engine steals a gradient nobody
else holds instead of copying it (AccumulateGrad) and its caching allocator hands freed
blocks out again; numpy reuses a temporary operand in place when Python holds no other
reference to it.  This module does the same for a pass whose backend keeps numpy arrays
(``m.sums_in_place``), by the same test numpy uses, the reference count:

* :func:`sole`: an array is the pass's alone (its own memory, writeable, and no other
  reference to it, so no view of it either: a view references its base).  The engine
  then adds into it in place, or makes it a leaf's ``.grad`` without a copy.
* :func:`give`: a large array that died inside the pass (a node's incoming gradient once
  its rules have run, a saved value once released) goes to a small pool instead of back
  to the operating system.
* :func:`lend`: a large value a rule reads is handed to it as a :class:`Lent` view, whose
  numpy ufuncs write an elementwise result of the right shape and dtype into a pooled
  array (``out=``) instead of a fresh one.  The rule computes exactly what it computes on
  plain arrays (the same ufunc loop on the same operands): only where the result lives
  changes.  Its results come back plain (:func:`plain`).

The pool lives while a pass runs (:func:`start`, :func:`stop`) and holds at most
:data:`POOL_SIZE` arrays.  Reference counts are read in this module only, which always
runs as Python (it is not compiled), so that the count of a boxed array means the same
whichever caller hands it over: callers box the array in a one-element list and drop
their own references first.

Examples
--------
>>> import numpy as np
>>> box = [np.zeros(3)]
>>> sole(box)
True
>>> a = box[0]
>>> sole(box)  # ``a`` holds it too
False
"""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["LEND_BYTES", "POOL_SIZE", "POOL", "Lent", "sole", "give", "lend", "plain",
           "start", "stop"]

_ndarray = np.ndarray
_getrefcount = sys.getrefcount

#: Arrays of at least this many bytes are pooled and lent (below it, the allocator's
#: own free lists serve as well, and the bookkeeping would cost more than it saves).
LEND_BYTES = 1 << 20
#: At most this many dead arrays wait in the pool.
POOL_SIZE = 4

#: The dead arrays waiting for reuse, and (``POOL.depth``) how many passes are running.
class _Pool(list):
    __slots__ = ("depth",)


POOL = _Pool()
POOL.depth = 0


def _boxed_count() -> int:
    box = [np.empty(0)]
    return _getrefcount(box[0])  # (the count of an array that only a box holds)


_BOXED = _boxed_count()


def sole(box: list) -> bool:
    """Whether the array in the one-element list ``box`` is the caller's alone: it owns
    writeable memory and nothing but ``box`` references it (no name, no container, no
    view, no tensor)."""
    a = box[0]
    if type(a) is not _ndarray:
        return False
    flags = a.flags
    if not (flags.owndata and flags.writeable):
        return False
    del a, flags
    return _getrefcount(box[0]) == _BOXED


def give(box: list) -> None:
    """Pool the large array in ``box`` if it is dead (:func:`sole`, C-contiguous) and a
    pass is running; ``box`` is emptied either way."""
    if POOL.depth and len(POOL) < POOL_SIZE and sole(box):
        a = box[0]
        if a.nbytes >= LEND_BYTES and a.flags.c_contiguous:
            POOL.append(a)
    box.clear()


def start() -> None:
    """A pass on numpy arrays begins."""
    POOL.depth += 1


def stop() -> None:
    """A pass ends: the pool is emptied when no pass is running any more."""
    POOL.depth -= 1
    if not POOL.depth:
        POOL.clear()


def lend(a):
    """``a`` as a rule should see it: a :class:`Lent` view of a large array while some
    dead array waits in the pool, else ``a`` itself."""
    if POOL and type(a) is _ndarray and a.nbytes >= LEND_BYTES:
        return a.view(Lent)
    return a


def plain(a):
    """A rule's result as the pass carries it: a plain array (a view of a lent value
    that the rule returned stays a view of the same memory)."""
    return a.view(_ndarray) if type(a) is Lent else a


def _scalar_dtype(x):
    """The operand's part in a ufunc's type resolution, or None for one not handled."""
    t = type(x)
    if t is _ndarray:
        s = x.strides
        if not x.flags.c_contiguous and any(s):
            return None  # (a result's layout follows its operands': C order only)
        return x.dtype
    if t is float or t is int or t is bool or t is complex:
        return t  # (a Python number takes the array's dtype, NEP 50)
    if isinstance(x, np.generic):
        return x.dtype
    return None


def _pooled_out(ufunc, args: tuple):
    """A pooled array of the shape and dtype ``ufunc(*args)`` returns, taken out of the
    pool, or None."""
    if ufunc.signature is not None or ufunc.nout != 1 or ufunc.nin != len(args):
        return None
    dtypes = []
    shapes = []
    for x in args:
        d = _scalar_dtype(x)
        if d is None:
            return None
        dtypes.append(d)
        if type(x) is _ndarray:
            shapes.append(x.shape)
    try:
        shape = np.broadcast_shapes(*shapes)
        dt = ufunc.resolve_dtypes(tuple(dtypes) + (None,))[-1]
    except (TypeError, ValueError):
        return None  # (the plain call says why, or finds its own way)
    for i in range(len(POOL)):
        b = POOL[i]
        if b.shape == shape and b.dtype == dt:
            return POOL.pop(i)
    return None


class Lent(np.ndarray):
    """A large value lent to a gradient rule (:func:`lend`): an elementwise ufunc on it
    writes its result into a dead array of the pass when the pool has one of the right
    shape and dtype; everything else is plain numpy on plain arrays."""

    __slots__ = ()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        args = tuple([x.view(_ndarray) if type(x) is Lent else x for x in inputs])
        if kwargs:
            out = kwargs.get("out")
            if out is not None:
                kwargs["out"] = tuple([o.view(_ndarray) if type(o) is Lent else o
                                       for o in out])
        elif method == "__call__" and POOL:
            buf = _pooled_out(ufunc, args)
            if buf is not None:
                return ufunc(*args, out=buf)
        return getattr(ufunc, method)(*args, **kwargs)
