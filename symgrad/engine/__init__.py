"""Layer 3, the engine: reverse mode over the graph IR, dependency-counted and iterative.

May import: ``symgrad.ops``, ``symgrad.ir``.  The tensor type it hands to hooks and
returns is injected by the layer above (:mod:`symgrad.api`), never imported.
"""
