"""What a view keeps of how it was made, as PyTorch's view metadata.

Two things PyTorch keeps for a view and symgrad keeps here:

* memory shared with its base also where numpy hands back a copy: a 0-d view (``x[1]``,
  ``x.select(0, 1)``, ``x.unbind()[k]``) and a view of a 0-d base (``x.view(1)``) hold a
  numpy array into the base's storage, so that a later write to the base shows in the
  view (and one through the view in the base);
* how it was made (PyTorch's ``CreationMeta``): a piece of ``split``, ``chunk`` or
  ``unbind`` (functions that return several views), a view made in no_grad mode, and
  any plain view of one, may not be changed in place while autograd records, nor used
  with grad mode on once its base (or another view of it) was changed in place.  The
  errors are PyTorch's.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor([1., 2., 3.])
>>> p = x.unbind()[1]
>>> x.add_(10)
tensor([11., 12., 13.])
>>> p, p._version
(tensor(12.), 1)
>>> y = torch.ones(4, requires_grad=True) * 1
>>> y.split(2)[1].mul_(2)
Traceback (most recent call last):
...
RuntimeError: Output 1 of Split is a view and is being modified inplace. This view is ...
"""
from __future__ import annotations

import weakref

import numpy as np

from .. import ops as O
from ..ir.cores import TensorCore
from ..ir.node import GRAD_MODE
from ..ops.indexing import _select_index

__all__: list = []

_ndarray = np.ndarray

MULTI = "multi-output"  # a piece of split/chunk/unbind made with grad mode on
NO_GRAD = "no_grad"  # a view made in no_grad mode
INFERENCE = "inference"  # a view made in inference mode

#: The ``grad_fn`` field itself (``Tensor.grad_fn`` is a property that regenerates a stale
#: view's node first, as PyTorch's does).
RAW_GRAD_FN = TensorCore.grad_fn

_MULTI_TAIL = (" This view is the output of a function that returns multiple views. Such "
               "functions do not allow the output views to be modified inplace. You should "
               "replace the inplace operation by an out-of-place one.")
_NO_GRAD_TAIL = (" Given that this use case is ambiguous and error-prone, it is forbidden. You "
                 "can clarify your code by moving both the view and the inplace either both "
                 "inside the no_grad block (if you don't want the inplace to be tracked) or "
                 "both outside (if you want the inplace to be tracked).")


def shared(base, op, attrs: tuple, data):
    """The data of the view ``op(base, *attrs)`` (computed: ``data``) as memory of
    ``base``'s storage where either is 0-d (numpy computes those on a scalar, a copy);
    ``data`` itself where no view of the storage can be taken."""
    storage = base._data
    if op is O.SELECT and storage.ndim:
        d = _element(storage, *attrs)
        return data if d is None or d.dtype != data.dtype else d
    if storage.ndim:
        return data
    storage = base._storage()  # (a 0-d base held as a numpy scalar becomes an array)
    d = op.forward(storage, *attrs)  # reshape, expand, unsqueeze ... of a 0-d array
    if (d.__class__ is not _ndarray or d.dtype != data.dtype
            or not np.may_share_memory(d, storage)):
        return data
    return d


def share_piece(piece, base, dim: int, k: int) -> None:
    """The 0-d piece ``k`` of ``base.unbind(dim)`` as memory of ``base``'s storage."""
    d = _element(base._storage(), dim, k)
    if d is not None:
        piece._data = d


def _element(storage: np.ndarray, dim: int, index: int) -> np.ndarray | None:
    """``storage`` at ``index`` along ``dim`` as a view, 0-d too (basic indexing ending in
    ``...``); None for an element of an expanded tensor (numpy's read-only memory, which
    symgrad does not write into)."""
    d = storage[_select_index(storage.shape, dim, index) + (Ellipsis,)]
    return d if d.flags.writeable else None


def made_without_grad(view, base) -> None:
    """Note that ``view`` (of ``base``) was made with grad mode off.  As PyTorch's, it
    requires grad when the tensor its views lead to does (it stays a leaf without a node
    of its own: an op on it records no edge to it)."""
    view._created = INFERENCE if GRAD_MODE.inference else NO_GRAD
    while base._view_of is not None:
        base = base._view_of[0]
    if base._requires_grad or RAW_GRAD_FN.__get__(base) is not None:
        view._requires_grad = True


def regenerated(t, fn) -> None:
    """Give ``t`` the node ``fn`` in place of its own (an in-place change of ``t`` or of
    its base): as PyTorch's ``update_tensor_hooks_on_new_gradfn``, a tensor that retains
    its grad retains it at ``fn`` (its hooks stay with the old node)."""
    old = RAW_GRAD_FN.__get__(t)
    RAW_GRAD_FN.__set__(t, fn)
    if not t._retains_grad or fn is None or fn is old:
        return
    if old is not None and old._retain is not None and old._retain() is t:
        old._retain = None
    fn._retain = weakref.ref(t)
    fn._plain = False


def without_edge(t) -> bool:
    """Is ``t`` a view made with grad mode off (which autograd reaches through no edge)?"""
    return t._view_of is not None and t.__dict__.get("_created") in (NO_GRAD, INFERENCE)


def mark_pieces(pieces) -> None:
    """Note that ``pieces`` come from a function that returns several views."""
    made = MULTI if GRAD_MODE.enabled else NO_GRAD
    for t in pieces:
        t._created = made


def creation(t) -> str | None:
    """How the view ``t`` was made, as far as in-place changes care: :data:`MULTI`,
    :data:`NO_GRAD` or None; a view of such a view made plainly is made as it was (the
    nearest mark along the views to the base counts, as PyTorch propagates it)."""
    while t._view_of is not None:
        made = getattr(t, "_created", None)
        if made is not None:
            return made
        t = t._view_of[0]
    return None


def _rebase_error(t, made: str, indirect: bool) -> RuntimeError:
    """PyTorch's error for a view made as ``made`` that is changed in place (or whose
    base was, ``indirect``)."""
    what = "its base or another view of its base has been" if indirect else "is being"
    fn = RAW_GRAD_FN.__get__(t)  # (not the property: it would regenerate t first)
    name = None if fn is None else fn.name().rsplit("Backward", 1)[0]
    if made != MULTI or fn is None:
        prefix = ("A view was created in" if fn is None else
                  f"Output {t._output_nr} of {name} is a view of a view which was created in")
        if made == INFERENCE:
            text = f"{prefix} inference mode and {what} modified inplace in normal mode."
            return RuntimeError(text + _NO_GRAD_TAIL.replace("no_grad", "inference_mode"))
        text = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        text = f"Output {t._output_nr} of {name} is a view and {what} modified inplace."
    return RuntimeError(text + (_MULTI_TAIL if made == MULTI else _NO_GRAD_TAIL))


def check_in_place(t, others=()) -> None:
    """Raise PyTorch's error if the view ``t`` may not be changed in place with
    ``others`` while autograd records (grad mode on, ``t`` or one of ``others`` requiring
    grad)."""
    if not GRAD_MODE.enabled or t._view_of is None:
        return
    made = creation(t)
    if made is None:
        return
    base = t._view_of[0]
    while base._view_of is not None:
        base = base._view_of[0]
    # (PyTorch: a view of a base that requires grad requires grad, made in no_grad too)
    if t.requires_grad or base.requires_grad or any(
            getattr(o, "requires_grad", False) for o in others):
        raise _rebase_error(t, made, indirect=False)


def check_rebased(v) -> None:
    """Raise PyTorch's error if the view ``v``, whose base requires grad and changed in
    place since ``v`` was taken, may not be regenerated (a piece of a function that
    returns several views, a view made in no_grad mode)."""
    made = creation(v)
    if made is not None:
        raise _rebase_error(v, made, indirect=True)
