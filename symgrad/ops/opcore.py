"""The fields of an op record that ``apply`` and the engine read on every call.

:class:`~symgrad.ops.record.Op` is built on :class:`OpCore` as ``Tensor`` is on
:class:`~symgrad.ir.cores.TensorCore`: where ``pip install`` compiles symgrad (see
:mod:`symgrad.api.compiled`), Cython makes this class an extension type from this very
source, its fields declared in ``opcore.pxd``, so that the compiled ``apply`` and engine
read them at fixed offsets instead of looking them up by name.  In pure Python it is a
plain class with ``__slots__``.

Examples
--------
>>> from symgrad import ops
>>> isinstance(ops.MUL, OpCore), ops.MUL.forward is not None
(True, True)
"""

__all__ = ["OpCore"]


class OpCore:
    """An op record's numpy ``forward``, gradient rules, node class, dtype rule, saving
    plan and its common case (``simple``), the names of several outputs, whether it is a
    view, whether it takes any number of operands, and its operands' names; see
    :class:`~symgrad.ops.record.Op` for their meaning."""

    __slots__ = ("forward", "grads", "node_class", "dtype", "refuse", "plan", "optional",
                 "simple", "outputs", "view", "variadic", "inputs")
