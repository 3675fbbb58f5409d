"""The :class:`Tensor` class itself: storage, properties, gradients and hooks, conversions.

What every tensor is and holds, without the operations: those call :func:`~symgrad.api.apply.apply`,
which needs this class, so they are defined in the modules above (``views``,
``indexing``, ``inplace``, ``linalg``, ``methods``, ``reductions``, ...) and
:mod:`symgrad.api.tensor` attaches them to the class with :func:`attach`.
"""
from __future__ import annotations

import builtins
import warnings
import weakref
from typing import Callable

import numpy as np

from ..ops import dtypes as _dt
from ..ops.dtypes import dtype as _dtype
from ..ir.cores import COMPILED, TENSOR_DEFAULTS, TensorCore, new_tensor
from ..ir.node import AccumulateGrad, RemovableHandle
from .messages import _SCALAR_GRAD_WARNING, _c_name, _SCALAR_NAMES, _type_name, _warn_once
from .device import CPU as _CPU, NO_CUDA
from .dual import DUAL, tangent
from .printing import tensor_repr
from .shapes import Size, _contiguous, _strides, _wrap_dim
from .viewmeta import RAW_GRAD_FN, without_edge

__all__ = ["Tensor", "attach", "VMAP"]


class _Vmap:
    """``symgrad.func.vmap``'s hooks (installed by :mod:`symgrad.func.levels`): while a
    vmap runs (``running``), :func:`~symgrad.api.apply.apply` gives each result the vmap
    marks of its operands (``propagate``), and the conversions to Python values refuse a
    marked tensor of a running vmap with PyTorch's error (``refuse``)."""

    running = 0
    propagate: Callable | None = None  # (args, out) -> None
    refuse: Callable | None = None  # (tensor, what) -> None


VMAP = _Vmap()

_ndarray = np.ndarray


class _TensorMeta(type):
    """Shows symgrad's classes under PyTorch's names: ``<class 'torch.Tensor'>``.

    Teaching notebooks print ``type(x)``; the names come from ``_torch_name`` (a subclass
    without one shows its own module).
    """

    def __repr__(cls) -> str:
        name = cls.__dict__.get("_torch_name")
        return f"<class '{name}'>" if name else super().__repr__()


class _TensorType(_TensorMeta):
    """Tensor's metaclass: ``Tensor(data)``, ``Tensor(*sizes)`` is PyTorch's legacy
    constructor (the class's ``_legacy_new``, then a subclass's ``__init__``), unless the
    class has a ``__new__`` of its own (``nn.Parameter``, a user's subclass, whose
    ``super().__new__(cls, data)`` is the legacy constructor too, as in PyTorch).  ``apply``
    allocates its results through the core (:func:`~symgrad.ir.cores.new_tensor`)."""

    def __call__(cls, *args, **kwargs):
        if cls.__new__ is not _legacy:
            return super().__call__(*args, **kwargs)
        t = cls._legacy_new(cls, *args, **kwargs)
        init = type(t).__init__
        if isinstance(t, cls) and init is not object.__init__:
            init(t, *args, **kwargs)  # (as type.__call__ does)
        return t


class _LegacyMeta(_TensorType):
    """``FloatTensor`` and friends: ``isinstance(t, torch.FloatTensor)`` asks the dtype."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is _LEGACY_DTYPE.get(cls)


# The legacy typed classes (FloatTensor, ...), made by the package: class -> dtype.
_LEGACY_DTYPE: dict[type, _dtype] = {}


class Tensor(TensorCore, metaclass=_TensorType):
    """A multi-dimensional array that records the operations applied to it.

    ``Tensor(data)`` is PyTorch's legacy constructor: it makes a tensor of the default
    dtype (``float32``).  Use :func:`symgrad.tensor` to infer the dtype from the data.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.Tensor([4])
    >>> x.requires_grad_()
    tensor([4.], requires_grad=True)
    >>> f = 5 * x ** 2 + 3
    >>> f.backward()
    >>> x.grad
    tensor([40.])
    """

    # (the fields every tensor has are TensorCore's: _data, _dtype, grad_fn,
    # _requires_grad, _vc, and those of TENSOR_DEFAULTS)
    __slots__ = ("__weakref__", "__dict__")
    # Rarely set: class-level defaults keep tensor creation cheap.
    _grad = None
    _hooks = None
    _post_accumulate_hooks = None
    _vmap = None  # the vmaps whose samples it derives from (symgrad.func.vmap)
    _retains_grad = False
    _name = None
    __array_ufunc__ = None  # numpy defers to our operators: np.float64(2) * t is a Tensor
    __array_priority__ = 1000
    _torch_name = "torch.Tensor"
    _prints_as_parameter = False  # nn.Parameter's repr: "Parameter containing:"

    def __new__(cls, *args, **kwargs):
        """PyTorch's legacy constructor, also as a subclass's ``super().__new__(cls, data)``."""
        return cls._legacy_new(cls, *args, **kwargs)


    # -- attributes ------------------------------------------------------------------
    @property
    def data(self) -> "Tensor":
        if self._vmap is not None and VMAP.running:
            VMAP.guard("data", self)
        return _make(self._storage(), self._dtype)

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(value).__name__}")
        if self.requires_grad and not value._dtype.is_floating_point:
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self._data = value._data
        self._dtype = value._dtype

    @property
    def dtype(self) -> _dtype:
        return self._dtype

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def device(self):
        return _CPU

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        # (PyTorch's: a view also when the tensor its views lead to requires grad)
        return self._requires_grad or _grad_fn_field(self) is not None or (
            self._view_of is not None and _root(self).requires_grad)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if flag.__class__ is not builtins.bool:
            raise RuntimeError("requires_grad must be a bool")
        if flag and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        self._set_requires_grad(flag, "only Tensors of floating point and complex dtype "
                                      "can require gradients")

    def _set_requires_grad(self, flag, int_message):
        if self.grad_fn is not None:
            if flag:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach().")
        if flag and not self._dtype.is_floating_point:
            raise RuntimeError(int_message)
        if not flag and without_edge(self):
            return  # (PyTorch's: it requires grad as long as its base does)
        self._requires_grad = bool(flag)

    def requires_grad_(self, *args, **kwargs) -> "Tensor":
        """Set ``requires_grad`` (``True`` by default) of this leaf in place; returns it."""
        requires_grad = kwargs.pop("requires_grad", True) if not args else args[0]
        if len(args) > 1 or (args and "requires_grad" in kwargs):
            raise TypeError(f"requires_grad_() takes from 0 to 1 positional arguments but "
                            f"{len(args)} were given")
        for k in kwargs:
            raise TypeError(f"requires_grad_() got an unexpected keyword argument '{k}'")
        if requires_grad.__class__ is not builtins.bool:
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {_type_name(requires_grad)}")
        self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can "
                                               "require gradients")
        return self

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being "
                "accessed. Its .grad attribute won't be populated during "
                "autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
                "access the non-leaf Tensor by mistake, make sure you access the leaf "
                "Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
                "information. (Triggered internally at /__w/pytorch/pytorch/build/aten/"
                "src/ATen/core/TensorBody.h:493.)", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"grad of type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_c_name(value.dtype)}'"
                    f" to a tensor with grad_dtype '{_SCALAR_NAMES[self.dtype.name]}'. The "
                    "gradient must match the tensor's grad_dtype (defaults to the tensor's "
                    "dtype). You can set the tensor's grad_dtype attribute with a specific "
                    "dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging "
                    "the dtypes of a tensor and its gradient may break downstream systems that "
                    "assume they match.")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def _version(self) -> int:
        return self._vc[0]

    @_version.setter
    def _version(self, value) -> None:
        raise AttributeError("attribute '_version' of 'torch._C.TensorBase' objects is not "
                             "writable")

    @property
    def name(self) -> str | None:
        """symgrad's own: the leaf's name in symbolic output and drawings."""
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = value

    # -- autograd ----------------------------------------------------------------------
    def _accumulator(self) -> AccumulateGrad:
        acc = self._accum
        if acc is None:
            if without_edge(self):  # (a view made in no_grad mode: no edge, as PyTorch's)
                return None
            acc = self._accum = AccumulateGrad(self)
        return acc


    def register_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(grad)`` runs when this tensor's gradient is computed; may replace it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is not None:
            if self._multi_output:
                return self.grad_fn._register_tensor_hook(hook, self._output_nr)
            return self.grad_fn._register_tensor_hook(hook)
        return self._accumulator()._register_tensor_hook(hook)

    def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(tensor)`` runs after a gradient was accumulated into this leaf's ``.grad``.

        Examples
        --------
        >>> import symgrad as torch
        >>> x = torch.tensor([1., 2.], requires_grad=True)
        >>> h = x.register_post_accumulate_grad_hook(lambda t: print("grad", t.grad))
        >>> (x * 3).sum().backward()
        grad tensor([3., 3.])
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = []
        self._post_accumulate_hooks.append(hook)
        return RemovableHandle(self._post_accumulate_hooks, hook)

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn._retain = weakref.ref(self)
        self.grad_fn._plain = False

    def detach(self) -> "Tensor":
        t = _make(self._storage(), self._dtype)
        t._vc = self._vc
        if self._vmap is not None:
            t._vmap = self._vmap  # still derived from a vmap's sample
        return t

    def _storage(self) -> np.ndarray:
        """The data as an array that other tensors may share (``.data``, ``detach()``,
        ``numpy()``): a 0-d result kept as a numpy scalar becomes a 0-d array first, so
        that in-place changes through either tensor show in both, as in PyTorch."""
        d = self._data
        if d.__class__ is not _ndarray:
            d = self._data = np.array(d)
        return d

    def detach_(self) -> "Tensor":
        if self._view_of is not None or (self.grad_fn is not None and self.grad_fn.op is not
                                         None and self.grad_fn.op.view):
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
                "set as True, gradients are views of DDP buckets, and hence detach_() cannot "
                "be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
                "solution.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    # -- conversion ----------------------------------------------------------------------
    def size(self, dim: int | None = None):
        if dim is None:
            return self.shape
        if not isinstance(dim, (builtins.int, np.integer)) or isinstance(dim, builtins.bool):
            raise TypeError(f"size(): argument 'dim' (position 1) must be int, not "
                            f"{_type_name(dim)}")
        if not self._data.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return self._data.shape[_wrap_dim(dim, self.ndim)]

    def stride(self, dim: int | None = None):
        """The strides in elements, as PyTorch reports them."""
        s = _strides(self)
        return s if dim is None else s[_wrap_dim(dim, self.ndim)]

    def is_contiguous(self) -> bool:
        return _contiguous(self._data)

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._dtype.itemsize * int(self._data.size)

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def output_nr(self) -> int:
        return self._output_nr

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._dtype.itemsize

    def item(self):
        if self._vmap is not None:
            VMAP.refuse(self, "item")
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be "
                               "converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        if self._vmap is not None:
            VMAP.refuse(self, "data")
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._vmap is not None:
            VMAP.refuse(self, "data")
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._storage()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (PyTorch's, which torchviz asks)."""
        return self._view_of is not None

    @property
    def _base(self) -> "Tensor | None":
        """The tensor a view views, followed to the one that is not a view (or None)."""
        base = None
        t = self
        while t._view_of is not None:
            base = t = t._view_of[0]
        return base

    def cpu(self, memory_format=None) -> "Tensor":
        return self

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> "Tensor":
        raise AssertionError(NO_CUDA)

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return True

    def get_device(self) -> int:
        return -1

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def __repr__(self) -> str:
        try:
            fn = self.grad_fn
        except RuntimeError:  # (torch's repr: a view that may not be regenerated)
            fn, name = None, "Invalid"
        else:
            name = None if fn is None else type(fn).__name__
        if name == "CppFunction":  # (as torch's repr: a C++ node shows its name's last part)
            name = fn.name().rsplit("::", 1)[-1]
        cls = type(self)
        return tensor_repr(np.asarray(self._data), self._dtype.name,
                           requires_grad=self.requires_grad and name is None,
                           grad_fn=name,
                           prefix="tensor(" if cls is Tensor or self._prints_as_parameter
                           else cls.__name__ + "(",
                           default_dtype=_dt.get_default_dtype().name,
                           parameter=self._prints_as_parameter,
                           tangent=None if not DUAL.levels or "_fw" not in self.__dict__
                           else _tangent_text(self))

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self.ndim == 0 and type(self) is Tensor:  # (PyTorch's: not a subclass's)
            return format(self.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string passed to {type(self).__name__}."
                            "__format__")
        return str(self)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter([self[i] for i in range(self._data.shape[0])])

    def __bool__(self) -> bool:
        if self._vmap is not None:
            VMAP.refuse(self, "bool")
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with "
                               f"{'no values' if not self._data.size else 'more than one value'}"
                               f" is ambiguous")
        return builtins.bool(self._data.reshape(()))

    def __float__(self) -> float:
        if self.requires_grad:
            _warn_once(_SCALAR_GRAD_WARNING)
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def _scalar(self):
        if self._vmap is not None:
            VMAP.refuse(self, "item")
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._data.reshape(()).item()

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted "
                            "to an index")
        return int(self.item())

    __hash__ = object.__hash__

    def _write(self, values, op) -> None:
        values = np.asarray(values)
        if self._data.__class__ is not _ndarray:
            self._data = np.array(self._data)  # a 0-d result held as a numpy scalar
        if values.shape != self._data.shape:
            shape = np.broadcast_shapes(values.shape, self._data.shape)
            if shape != self._data.shape:
                raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                                   f"broadcast shape {list(shape)}")
        if (values.dtype.kind == "f" and self._dtype.np.kind in "biu") or (
                values.dtype.kind in "iu" and self._dtype.np.kind == "b"):
            raise RuntimeError(f"result type {_SCALAR_NAMES[_dt.from_numpy(values.dtype).name]}"
                               f" can't be cast to the desired output type "
                               f"{_SCALAR_NAMES[self._dtype.name]}")
        np.copyto(self._data, values, casting="unsafe")




def _tangent_text(t) -> str | None:
    """A dual tensor's tangent at the current forward-mode level, as its repr shows it."""
    found = tangent(t, DUAL.levels[-1])
    return None if found is None else repr(found)


def _make(data: np.ndarray, dt: _dtype, requires_grad: bool = False) -> "Tensor":
    t = new_tensor(PROTO, data, dt, [0])
    if requires_grad:
        t._requires_grad = True
    return t


_new = TensorCore.__new__
_legacy = Tensor.__new__
#: A tensor whose class new tensors get (``new_tensor`` allocates through its type).
PROTO = _new(Tensor)

if not COMPILED:  # (a compiled TensorCore starts with these values itself)
    for _field, _value in TENSOR_DEFAULTS.items():
        setattr(Tensor, _field, _value)


_SKIPPED = frozenset(("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                      "__slots__"))


_grad_fn_field = RAW_GRAD_FN.__get__


def _root(t):
    """The tensor the views ``t`` is made by lead to."""
    while t._view_of is not None:
        t = t._view_of[0]
    return t


def attach(cls: type, group: type) -> None:
    """Copy the methods and properties defined in the class body of ``group`` onto ``cls``.

    The operations of :class:`Tensor` are written in groups, one per module above this one
    (they call ``apply``, which needs the class): each group is a plain class whose body
    holds the methods, attached once at import time by :mod:`symgrad.api.tensor`.

    Examples
    --------
    >>> class Point:
    ...     pass
    >>> class _Norms:
    ...     def norm1(self):
    ...         return abs(self.x) + abs(self.y)
    >>> attach(Point, _Norms)
    >>> p = Point(); p.x, p.y = 3, -4
    >>> p.norm1(), Point.norm1.__qualname__
    (7, 'Point.norm1')
    """
    for name, value in vars(group).items():
        if name in _SKIPPED or (name == "__hash__" and value is None):
            # (Python gives a class that defines __eq__ ``__hash__ = None``: a tensor keeps
            # its identity hash, as PyTorch's, for sets and dict keys.)
            continue
        if hasattr(value, "__code__"):  # a plain function: name it as the class's method
            value.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, value)
