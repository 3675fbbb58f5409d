"""Layer 2, the graph IR: recorded nodes (op, ordered inputs, attributes, saved values)
and the numpy backend that gradient rules run on.

May import: ``symgrad.ops``.
"""
