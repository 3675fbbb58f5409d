"""Layer 6, the gradient checker: is a hand-derived gradient right?

May import: every layer below, up to ``symgrad.symbolic``.
"""
