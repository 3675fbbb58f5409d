"""Layer 5, the symbolic layer: the expression language's parser, expressions over the
graph IR, the SymPy bridge (``to_sympy``, symbolic reverse mode), vector forms, and
every derivative of an expression at once (``differentiation.derivatives``: closed forms,
Hessian, higher orders, checked against reverse mode).

May import: every layer below (``ops``, ``ir``, ``engine``, ``api``, ``autograd``) and
``symgrad._util``.
"""
