# Declarations only (no logic): C types for locals of symgrad/engine/reverse.py when
# Cython compiles it, so that node fields are read at fixed offsets
# (symgrad/ir/cores.pxd).
cimport cython
from symgrad.ir.cores cimport NodeCore

@cython.locals(nd=NodeCore)
cpdef _hand_on(node, grads, dict buffers, set owned, retain_graph, m)
