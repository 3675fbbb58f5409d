"""Layer 3, the engine: reverse mode over the graph IR, dependency-counted and iterative.

One loop (:mod:`.reverse`) that takes the backend the gradient rules run on as a
parameter (numpy arrays, or recorded tensors for ``create_graph``), a node's rules and
saved values (:mod:`.rules`) and the user's hooks (:mod:`.hooks`).  May import:
``symgrad.ops``, ``symgrad.ir``.  The tensor type it hands to hooks and the recorded
backend are injected by the layer above (:mod:`symgrad.api`), never imported.
"""
