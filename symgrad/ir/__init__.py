"""Layer 2, the graph IR: recorded nodes (op, ordered inputs, attributes, saved values)
and the numpy backend that gradient rules run on.

May import: ``symgrad.ops``.  What it needs from the layers above (the tensor class, the
engine's ``call_node``) is handed down through :mod:`symgrad.ir.injected`, never imported.
"""
