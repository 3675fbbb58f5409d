"""Layer 4, the tensor API: what ``import symgrad as torch`` users call.

:class:`~symgrad.api.core.Tensor` (defined in ``core``, its operations in one module per
concern and attached in ``tensor``), the one :func:`~symgrad.api.apply.apply` every
operation goes through, creation and construction functions, the ``torch.*`` functions
(``functional``), ``backward``/``grad`` (``gradients``), the recording backend of
``create_graph=True`` (``recorded``), printing.  (``symgrad.autograd`` and ``symgrad.nn``
belong to this layer too, above these modules; they sit at PyTorch's import paths.)

May import: ``symgrad.ops``, ``symgrad.ir``, ``symgrad.engine``.  Inside the folder:
``shapes``, ``messages``, ``printing`` → ``core`` → ``apply`` → ``compiled``,
``creation``, ``construct`` → ``views``, ``linalg``, ``methods``, ``reductions``,
``recorded``, ``inplace``, ``indexing`` → ``functional`` → ``gradients`` → ``tensor``.
"""
