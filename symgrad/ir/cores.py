"""The data-carrying cores of a tensor and of a graph node, as PyTorch has
``torch._C.TensorBase`` under its Python ``Tensor``.

:class:`TensorCore` holds what every tensor is made of (its array, dtype, ``grad_fn``,
version counter, view and output bookkeeping); :class:`NodeCore` what every recorded node
holds (its inputs, attributes, saved values and their versions, input metadata, sequence
number).  :class:`~symgrad.api.core.Tensor` and :class:`~symgrad.ir.node.Node` are Python
classes built on them (methods, metaclass, mixins and user subclasses stay Python).

Where ``pip install`` compiles symgrad (:mod:`symgrad.api.compiled`), Cython turns these
two classes into extension types from this very source, the fields typed by ``cores.pxd``
(declarations only), so that the compiled ``apply`` and engine read a field at a fixed
offset instead of looking it up by name.  In pure Python they are plain classes with
``__slots__``: the same fields, the same behaviour.

Examples
--------
>>> import symgrad as torch
>>> isinstance(torch.tensor(1.0), TensorCore)
True
"""
import itertools

__all__ = ["TensorCore", "NodeCore", "new_tensor", "new_node", "TENSOR_DEFAULTS",
           "NODE_DEFAULTS", "COMPILED"]

#: Whether this module runs compiled (an extension module has no ``.py`` file).
COMPILED = not __file__.endswith(".py")

#: The core fields a tensor need not set, with the value they have until it does.  A
#: compiled core starts with these values; in pure Python they are ``Tensor``'s class
#: attributes (see :mod:`symgrad.api.core`).
TENSOR_DEFAULTS = {
    "_accum": None,  # the leaf's AccumulateGrad, once made
    "_view_of": None,  # for a view: (the tensor it views, the view op, its attrs)
    "_view_version": 0,  # the version its grad_fn and data were taken at
    "_output_nr": 0,  # which output of its grad_fn this tensor is (custom Functions)
    "_multi_output": False,  # is its grad_fn a node with several outputs?
}

#: The same for a node (in pure Python, ``Node``'s class attributes).
NODE_DEFAULTS = {
    "_released": False,  # have its saved tensors been freed?
    "_input_nrs": None,  # for each input, the output number of the node it came from
    "_inner": None,  # a node whose saved values are freed with this one's (CopySlices)
    "_op": None,  # its class's op, where apply made it by new_node (the engine reads it)
}

_sequence = itertools.count()


class TensorCore:
    """What every tensor holds: its numpy data (an array, or a numpy scalar for 0-d
    results), dtype, ``grad_fn``, whether it is a leaf that requires grad, and its version
    counter (a one-element list, shared with its views); and :data:`TENSOR_DEFAULTS`."""

    __slots__ = ("_data", "_dtype", "grad_fn", "_requires_grad", "_vc")


def new_tensor(proto, data, dtype, vc: list):
    """A tensor of ``proto``'s class holding ``data`` of ``dtype`` and the version counter
    ``vc``, no ``grad_fn``, not requiring grad: made by the core's allocator (``Tensor(...)``
    and ``Tensor.__new__`` are PyTorch's legacy constructor), which compiled code calls
    directly."""
    t = TensorCore.__new__(type(proto))  # (the core's allocator: Tensor.__new__ is torch's)
    t._data = data
    t._dtype = dtype
    t.grad_fn = None
    t._requires_grad = False
    t._vc = vc
    return t


class NodeCore:
    """What every recorded node holds: one input per operand (a node, or the constant
    itself), the op's attributes, the saved values and the versions they were saved at,
    each input's ``(shape, dtype)``, the node's sequence number (creation order), whether
    the engine may run it on its plain path (``_plain``: its class's ``_plain_class``
    until a hook is registered); and :data:`NODE_DEFAULTS`."""

    __slots__ = ("inputs", "attrs", "_saved", "_versions", "_meta", "_seq", "_plain")

    def __init__(self, inputs: tuple, attrs: tuple, saved: tuple, versions: tuple,
                 meta: tuple) -> None:
        _fill(self, inputs, attrs, saved, versions, meta)


def new_node(op, inputs: tuple, attrs: tuple, saved: tuple, versions: tuple, meta: tuple):
    """A node of ``op``'s node class (a subclass of :class:`NodeCore` whose ``__init__`` is
    :class:`NodeCore`'s), made without a call through the class; it keeps ``op`` (``_op``)
    for the engine."""
    cls = op.node_class
    node = cls.__new__(cls)
    _fill(node, inputs, attrs, saved, versions, meta)
    node._op = op
    return node


def _fill(node, inputs, attrs, saved, versions, meta) -> None:
    node.inputs = inputs
    node.attrs = attrs
    node._saved = saved
    node._versions = versions
    node._meta = meta
    node._seq = next(_sequence)
    node._plain = type(node)._plain_class
