"""Layer 4, the tensor API: what ``import symgrad as torch`` users call.

The :class:`~symgrad.api.tensor.Tensor` front end and its one ``apply``, creation
functions, the ``torch.*`` functions, printing.  (``symgrad.autograd``, ``symgrad.nn``
and ``symgrad.optim`` belong to this layer too; they sit at PyTorch's import paths.)

May import: ``symgrad.ops``, ``symgrad.ir``, ``symgrad.engine``.
"""
