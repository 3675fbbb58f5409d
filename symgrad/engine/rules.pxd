# Declarations only (no logic): C types for locals of symgrad/engine/rules.py when Cython
# compiles it, so that node and tensor fields are read at fixed offsets
# (symgrad/ir/cores.pxd).
cimport cython
from symgrad.ir.cores cimport TensorCore, NodeCore
from symgrad.ops.opcore cimport OpCore

@cython.locals(nd=NodeCore, op=OpCore, n=Py_ssize_t, i=Py_ssize_t, k=Py_ssize_t,
               backwards=bint, scalar_meta=dict, nv=Py_ssize_t)
cpdef input_grads(node, g, m, needed)

@cython.locals(nd=NodeCore, t=TensorCore, i=Py_ssize_t)
cpdef list _saved_values(node, saved, m)

@cython.locals(nd=NodeCore, op=OpCore, k=Py_ssize_t, t=TensorCore)
cpdef release(node)
