# Declarations only (no logic): C types for locals of symgrad/engine/reverse.py when
# Cython compiles it, so that node fields are read at fixed offsets
# (symgrad/ir/cores.pxd).
cimport cython
from symgrad.ir.cores cimport NodeCore
from symgrad.engine.rules cimport input_grads, release

cdef class Pass:
    cdef public object order, m, wanted, results, captures, output_nrs

@cython.locals(g_owned=bint, reuse=bint)
cpdef _run(Pass ps, dict buffers, retain_graph)

@cython.locals(nd=NodeCore)
cpdef _run_node(Pass ps, node, g, g_owned)

@cython.locals(nd=NodeCore, i=Py_ssize_t, reuse=int)
cpdef _hand_on(node, grads, dict buffers, retain_graph, m)

@cython.locals(n=NodeCore, c=NodeCore)
cpdef tuple _walk(list root_nodes, bint with_parents)

@cython.locals(after=dict, steps=dict, order=list, nodes=list, captures=dict,
               output_nrs=dict, keyed=list, n=NodeCore, i=Py_ssize_t)
cpdef plan(list root_nodes, m, inputs=*, accumulate=*)
