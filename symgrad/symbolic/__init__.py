"""Layer 5, the symbolic layer: the expression language's parser, expressions over the
graph IR, the SymPy bridge (``to_sympy``, symbolic reverse mode), vector forms.

May import: every layer below (``ops``, ``ir``, ``engine``, ``api``, ``autograd``).
"""
