"""The graph IR: immutable nodes recording op, ordered inputs and attributes.

A :class:`Node` is both a node of the IR (``op``, ``inputs``, ``attrs``) and the
``grad_fn`` that PyTorch users see (``name()``, ``next_functions``, hooks, ``_saved_*``).
Each op gets its own subclass named as PyTorch names it (``MulBackward0``), derived from
the op table, so ``type(t.grad_fn).__name__`` and ``repr`` read as in PyTorch.

Inputs are kept in order, one entry per operand: ``x * x`` has two edges to the same
node.  An input that needs no gradient is recorded as the constant itself (a tensor or
a Python number); it appears as ``(None, 0)`` in ``next_functions``.
"""
from __future__ import annotations

import threading
import re
from typing import Any, Callable

import numpy as np

from ..ops import Op, dtypes, subscribe
from ..ops.record import INT64_NAMES
from .cores import COMPILED, NODE_DEFAULTS, NodeCore
from .injected import INJECTED

__all__ = ["Node", "MultiOutput", "AccumulateGrad", "node_class", "GRAD_MODE", "UNUSUAL",
           "RemovableHandle",
           "Packed", "SavedTensor"]


#: How many threads have grad modes other than the default (recording, no saved-tensor
#: hooks).  While none has, ``apply`` need not read its own thread's modes (one element,
#: kept by ``_GradMode``; ``apply`` reads it at C speed where compiled).
UNUSUAL = [0]
_UNUSUAL_LOCK = threading.Lock()


class _GradMode(threading.local):
    """The modes that decide what is recorded, one set per thread as in PyTorch: a
    ``no_grad`` block or a ``backward()`` in one thread changes nothing in another.
    ``enabled``: record ops; ``inference``: inside ``inference_mode``; ``stashed``: the
    grad mode users set inside ``inference_mode`` (nothing records there); ``saved_hooks``:
    the (pack, unpack) pairs of saved_tensors_hooks, innermost last (replaced, never
    changed in place, so that :data:`UNUSUAL` follows it)."""

    def __init__(self) -> None:
        d = self.__dict__
        d["enabled"] = True
        d["inference"] = False
        d["stashed"] = False
        d["saved_hooks"] = []
        d["_unusual"] = False

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        d[name] = value
        unusual = not d["enabled"] or bool(d["saved_hooks"])
        if unusual is not d["_unusual"]:
            d["_unusual"] = unusual
            with _UNUSUAL_LOCK:
                UNUSUAL[0] += 1 if unusual else -1


GRAD_MODE = _GradMode()


class Packed:
    """A saved tensor as a ``saved_tensors_hooks`` pack hook returned it: the hook's
    object, turned back into a tensor by the unpack hook each time it is read.  With
    ``origin`` (``grad_fn._raw_saved_*.register_hooks``, whose pack hook gets the tensor
    detached), the unpacked tensor takes the saved tensor's place in the graph again:
    ``(grad_fn, output number, multi-output, leaf accumulator)``."""

    __slots__ = ("value", "unpack", "origin")

    def __init__(self, value, unpack: Callable, origin: tuple | None = None) -> None:
        self.value, self.unpack, self.origin = value, unpack, origin

    def get(self):
        t = self.unpack(self.value)
        if not isinstance(t, INJECTED.Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but "
                            f"got result of type {type(t).__name__}")
        if self.origin is None:
            return t
        fn, nr, multi, accumulator = self.origin
        alias = INJECTED.make(t._data, t._dtype)
        alias._vc = t._vc
        if fn is not None:
            alias.grad_fn, alias._output_nr, alias._multi_output = fn, nr, multi
        elif accumulator is not None:
            alias._requires_grad, alias._accum = True, accumulator
        return alias


# The metadata (shape, dtype) a node keeps of a number operand, and of 0-d operands of each
# dtype: shared, so that the engine recognises them by identity.
_NUMBER_META = ((), None)
_META0 = {d: ((), d) for d in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int64,
                               dtypes.int32, dtypes.bool)}


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` takes the hook out again."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        for i, h in enumerate(self._hooks):
            if h is self._hook:
                del self._hooks[i]
                return

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def __repr__(self) -> str:
        # PyTorch's name, which notebooks print.
        return f"<torch.utils.hooks.RemovableHandle object at {id(self):#x}>"


class Node(NodeCore):
    """A recorded operation: the IR node and the ``grad_fn`` of its output.

    Attributes
    ----------
    op : Op
        The op-table record (class attribute of each generated subclass).
    inputs : tuple
        One entry per operand: the producing :class:`Node` (a ``grad_fn`` or an
        :class:`AccumulateGrad`) when the operand requires grad, else the constant.
    attrs : tuple
        The op's non-tensor arguments, in the order of ``op.attrs``.
    """

    # (the fields of every node are NodeCore's: inputs, attrs, _saved, _versions, _meta,
    # _seq; NodeCore.__init__ sets them)
    __slots__ = ("__weakref__", "__dict__")
    op: Op
    # Rarely set: class-level defaults keep node creation cheap.
    _tensor_pre_hooks = None
    _pre_hooks = None
    _hooks = None
    _retain = None
    _metadata = None
    # Multi-output nodes (custom Functions): how many outputs (the output number each
    # input came from is NodeCore's _input_nrs).
    _n_outputs = 1
    # A node class may run its own backward instead of the op table's rules (and wrap
    # another node whose saved values are freed with its own: NodeCore's _inner).
    _custom_backward = None
    # May the engine run a node of this class on its fast path (an op-table rule, one
    # output, no hooks, no retained gradient, no output numbers on its edges)?  Set by
    # __init_subclass__; each node starts with it (NodeCore's _plain), cleared on a node
    # wherever one of those is set.
    _plain_class = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        op = getattr(cls, "op", None)
        cls._plain_class = (cls._custom_backward is None and op is not None
                            and not op.variadic and cls._n_outputs == 1
                            and "_retain" not in vars(cls))

    # -- PyTorch's grad_fn API -------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        # An input the table gives no VJP (where's condition) is no edge at all in
        # PyTorch, not even a None entry.
        grads = self.op.grads
        nrs = self._input_nrs or (0,) * len(self.inputs)
        edges = tuple((x, nr) if isinstance(x, Node) else (None, 0)
                      for x, nr in zip(self.inputs, nrs))
        if self.op.variadic or None not in grads:
            return edges
        return tuple(e for e, rule in zip(edges, grads) if rule is not None)

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def requires_grad(self) -> bool:
        return True

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after the node; may return new inputs."""
        if self._hooks is None:
            self._hooks = []
        self._plain = False
        self._hooks.append(fn)
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before the node; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._plain = False
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)

    def _register_tensor_hook(self, fn: Callable) -> RemovableHandle:
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = []
        self._plain = False
        self._tensor_pre_hooks.append(fn)
        return RemovableHandle(self._tensor_pre_hooks, fn)

    def __call__(self, *grads):
        """Apply the node's gradient rule by hand, as calling a PyTorch node does."""
        return INJECTED.call_node(self, grads)  # the engine's (layer 3)

    def __dir__(self) -> list:
        # PyTorch lists a node's saved values: dir(fn) shows _saved_self, _saved_other.
        op = type(self).op
        saved = [] if op is None else ["_saved_" + s for s in op.saves + tuple(op.consts)
                                       if s[:1] != "_"]
        saved += ["_raw_saved_" + op.saves[k] for k in range(len(op.saves) if op else 0)
                  if _holds_tensor(self, k)]
        # (the slot holding the values is symgrad's own: PyTorch's dir shows _saved_* only)
        return sorted((set(super().__dir__()) - {"_saved", "_raws"}) | set(saved))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_raw_saved_"):
            raw = _raw_saved(self, name[11:])
            if raw is not None:
                return raw
        elif name.startswith("_saved_"):
            key = name[7:]
            names = type(self).op.saves
            if key in names and key[:1] != "_":  # "_name": kept for backward, not shown
                k = names.index(key)
                value = self._saved[k] if self._saved else FREED
                if value.__class__ is Packed:
                    return value.get()  # the unpack hook runs at each access, as PyTorch's
                if (self._versions and k < len(self._versions) and self._versions[k] is not None
                        and value is not FREED and value._vc[0] != self._versions[k]):
                    raise _version_error(self, k, value)  # as PyTorch's unpack
                if value is FREED:
                    raise RuntimeError(
                        "Trying to backward through the graph a second time (or directly "
                        "access saved tensors after they have already been freed). Saved "
                        "intermediate values of the graph are freed when you call "
                        ".backward() or autograd.grad(). Specify retain_graph=True if you "
                        "need to backward through the graph a second time or if you need "
                        "to access saved tensors after calling backward.")
                if type(value) in (int, float, bool) and _origin(self, key) == "input":
                    # A number operand is a wrapped scalar in PyTorch: a 0-d tensor.
                    kind = {int: dtypes.int64, float: dtypes.float64, bool: dtypes.bool}
                    return INJECTED.tensor(value, dtype=kind[type(value)])
                if key in INT64_NAMES:
                    return _as_uint64(_public(value))
                if value.__class__ is INJECTED.Tensor and _origin(self, key) == "result":
                    # A saved output unpacks as a new tensor on the same storage, as in
                    # PyTorch (``y.grad_fn._saved_result is y`` is False).
                    alias = INJECTED.make(value._data, value._dtype)
                    alias.grad_fn, alias._vc = value.grad_fn, value._vc
                    return alias
                return _public(value)
            if key in type(self).op.consts:
                return type(self).op.consts[key]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"


if not COMPILED:  # (a compiled NodeCore starts with these values itself)
    for _field, _value in NODE_DEFAULTS.items():
        setattr(Node, _field, _value)


def _holds_tensor(node: Node, k: int) -> bool:
    """Whether saved value ``k`` of ``node`` is a tensor in PyTorch (an operand, a result,
    a derived index buffer), which has a ``_raw_saved_*`` object; sizes and attributes
    have none."""
    op = type(node).op
    name = op.saves[k]
    if name[:1] == "_" or k >= len(op.plan):
        return False
    kind = op.plan[k][0]
    if kind in ("input", "result"):
        return True
    value = node._saved[k] if node._saved else None
    return kind == "derived" and isinstance(value, (np.ndarray, Packed))


def _raw_saved(node: Node, key: str) -> "SavedTensor | None":
    """``grad_fn._raw_saved_<key>``: one :class:`SavedTensor` per saved tensor, the same
    object at each access (None when ``key`` names no saved tensor)."""
    op = type(node).op
    if op is None or key not in op.saves or not _holds_tensor(node, op.saves.index(key)):
        return None
    raws = node.__dict__.setdefault("_raws", {})
    raw = raws.get(key)
    if raw is None:
        raw = raws[key] = SavedTensor(node, op.saves.index(key))
    return raw


class SavedTensor:
    """A saved tensor of a node, as PyTorch's ``grad_fn._raw_saved_self``: its
    :meth:`register_hooks` puts a pack/unpack pair on this one saved tensor (the pack hook
    runs at once; the unpack hook each time the value is read, by ``_saved_self`` or by
    the backward pass).

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x.pow(2)
    >>> y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 10, lambda t: t / 10)
    >>> y.grad_fn._saved_self
    tensor([1., 2.], requires_grad=True)
    """

    __slots__ = ("_node", "_k", "_unpack")
    __module__ = "torch._C._autograd"  # PyTorch's class, as repr and type() show it

    def __init__(self, node: Node, k: int) -> None:
        self._node, self._k, self._unpack = node, k, None

    def register_hooks(self, *args, **kwargs) -> None:
        """``register_hooks(pack_hook, unpack_hook)``: ``pack_hook(tensor)`` is called now
        and the node keeps what it returns; ``unpack_hook(packed)`` gives the tensor back
        whenever it is needed."""
        if len(args) != 2 or kwargs or not all(callable(a) for a in args):
            invoked = ", ".join([repr(self)] + [repr(a) for a in args])
            if kwargs:
                invoked += "; kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument "
                "types are supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
                "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\n"
                f"Invoked with: {invoked}")
        pack, unpack = args
        node, k = self._node, self._k
        value = node._saved[k] if node._saved else FREED
        if value.__class__ is Packed:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at "
                               "a time.")
        if value is FREED:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through "
                "the graph a second time or if you need to access saved variables after "
                "calling backward.")
        if value is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        tensor = self.unpack()  # (what _saved_<name> shows: a number as a 0-d tensor)
        origin = (tensor.grad_fn, tensor._output_nr, tensor._multi_output,
                  tensor._accumulator() if tensor.is_leaf and tensor.requires_grad else None)
        # PyTorch packs the saved tensor detached, without grad mode and without the
        # saved_tensors_hooks in force
        enabled, hooks = GRAD_MODE.enabled, GRAD_MODE.saved_hooks
        GRAD_MODE.enabled, GRAD_MODE.saved_hooks = False, []
        try:
            packed = Packed(pack(tensor.detach()), unpack, origin)
        finally:
            GRAD_MODE.enabled, GRAD_MODE.saved_hooks = enabled, hooks
        saved, versions = list(node._saved), list(node._versions)
        saved[k] = packed
        if k < len(versions):
            versions[k] = None  # (PyTorch checks no version once hooks hold the value)
        node._saved, node._versions = tuple(saved), tuple(versions)
        node._plain = False  # (the compiled backward reads saved tensors directly)
        self._unpack = unpack

    def unpack(self):
        """The saved tensor (through the unpack hook, if one is registered)."""
        return getattr(self._node, "_saved_" + type(self._node).op.saves[self._k])

    @property
    def unpack_hook(self):
        """The unpack hook registered by :meth:`register_hooks`, or None."""
        return self._unpack

    def __repr__(self) -> str:
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"


class _Freed:
    """Stands in for a saved tensor after backward freed it (numbers and sizes stay)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<freed>"


FREED = _Freed()


def _version_error(node: Node, i: int, tensor, is_output: bool = False) -> RuntimeError:
    """PyTorch's error for a saved tensor (``node._saved[i]``) changed in place since."""
    shape = list(tensor.shape)
    what = f"[torch.{INJECTED.legacy_names[tensor.dtype.name]} {shape}]"
    plan = node.op.plan
    # A saved output is named by the node that made it, even if it changed since.
    is_output = is_output or (i < len(plan) and plan[i][0] == "result")
    fn = node if is_output else tensor.grad_fn
    if fn is not None:
        name = re.sub(r'Backward[0-9]*$', '', fn.name())
        if not is_output and tensor._view_of is not None and \
                tensor._vc[0] != tensor._view_version:
            name = "AsStrided"  # PyTorch regenerates a view's grad_fn once its base changed
        what += f", which is output {tensor._output_nr} of {name},"
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {what} is at version {tensor._vc[0]}; expected version "
        f"{node._versions[i]} instead. Hint: enable anomaly detection to find the operation "
        "that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, "
        "check_nan=False).")




def _as_uint64(value):
    if type(value) is int and value < 0:
        return value + 2 ** 64
    if isinstance(value, tuple):
        return tuple(_as_uint64(v) for v in value)
    return value


def _origin(node: Node, key: str) -> str:
    """Where the node's saved value ``key`` came from: input, attr, result or derived."""
    op = type(node).op
    return op.plan[op.saves.index(key)][0]


def _public(value):
    """A saved value as PyTorch shows it: tuples and numbers as they are, index arrays
    and derived buffers as tensors (``None`` for a full slice)."""
    if isinstance(value, list) or (isinstance(value, tuple) and type(value) is not tuple):
        return tuple(value)  # sizes too: PyTorch shows (2, 3), not torch.Size([2, 3])
    if isinstance(value, tuple) and any(isinstance(v, (np.ndarray, slice)) for v in value):
        return tuple(_public(v) for v in value)
    if isinstance(value, slice) and value == slice(None):
        return None
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return INJECTED.tensor(value)
    return value


class AccumulateGrad(Node):
    """The node that adds incoming gradients into a leaf's ``.grad``."""

    __module__ = "builtins"  # as PyTorch's: type(fn) prints <class 'AccumulateGrad'>

    __slots__ = ("variable",)
    op = None  # type: ignore[assignment]

    def __init__(self, variable) -> None:
        super().__init__((), (), (), (), ())
        self.variable = variable
        # PyTorch runs AccumulateGrad as soon as it is ready: the highest priority.
        self._seq = float("inf")

    @property
    def next_functions(self) -> tuple:
        return ()

    def name(self) -> str:
        # PyTorch's C++ node reports its qualified name (the class is still AccumulateGrad).
        return "torch::autograd::AccumulateGrad"

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"'AccumulateGrad' object has no attribute '{name}'")


class MultiOutput:
    """What a node with several outputs adds (custom Functions; ops with ``outputs``): a
    tensor hook and ``retain_grad`` per output number (the engine runs them:
    ``engine.hooks.tensor_hooks``)."""

    __slots__ = ()

    @property
    def _retain(self):
        r = self.__dict__.get("_retains")
        return None if r is None or self._n_outputs != 1 else r.get(0)

    @_retain.setter
    def _retain(self, ref) -> None:
        # Tensor.retain_grad stores a weak reference to itself: remember its output number.
        t = ref() if ref is not None else None
        nr = 0 if t is None else t._output_nr
        self.__dict__.setdefault("_retains", {})[nr] = ref

    def _register_tensor_hook(self, fn, nr: int = 0) -> RemovableHandle:
        if self._n_outputs == 1:
            return Node._register_tensor_hook(self, fn)
        hooks = self.__dict__.setdefault("_output_hooks", {}).setdefault(nr, [])
        hooks.append(fn)
        self._plain = False
        return RemovableHandle(hooks, fn)


_CLASSES: dict[str, type] = {}


def node_class(op: Op) -> type:
    """The ``grad_fn`` class of ``op``, named as PyTorch names it."""
    cls = _CLASSES.get(op.key)
    if cls is None:
        # PyTorch's node classes live in no module: type(fn) prints <class 'MulBackward0'>.
        namespace = {"__slots__": (), "op": op, "__module__": "builtins"}
        qualified = op.node_name
        if "::" in qualified:
            # PyTorch's hand-written nodes (torch::autograd::CopyBackwards) report their
            # qualified name from name(); the Python class is still CopyBackwards.
            namespace["name"] = lambda self: qualified
        if op.outputs:
            namespace["_n_outputs"] = len(op.outputs)
        bases = (MultiOutput, Node) if op.outputs else (Node,)
        cls = type(qualified.rsplit("::", 1)[-1], bases, namespace)
        _CLASSES[op.key] = cls
        op.node_class = cls
    return cls


def _node_class_of(op: Op) -> None:
    if op.grads is not None:
        node_class(op)


subscribe(_node_class_of, lambda op: _CLASSES.pop(op.key, None))
