"""Layer 7, drawings: the graph model read from the public IR, DOT, rendering.

May import: every layer below.
"""
