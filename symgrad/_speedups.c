/* symgrad._speedups: the two hottest loops of symgrad, compiled.
 *
 * Scalar code (micrograd's demo network written op by op on 0-d tensors) spends its time
 * in Python bookkeeping, not in arithmetic: one Tensor and one Node per op on the way
 * forward, one gradient rule per input on the way back.  This module runs exactly what
 * tensor.apply's fast path and engine._run_ordered's plain-node branch run, without the
 * interpreter in between:
 *
 *   apply(op, args, attrs=())   an op on 0-d floating tensors (and Python numbers);
 *                               anything else goes to tensor.apply, the Python door.
 *   run_ordered(roots, buffers, retain_graph)
 *                               a plain backward(): DFS, sort by sequence number, and
 *                               each node without hooks run with the op table's rules;
 *                               other nodes go to the engine's Python code.
 *
 * No maths lives here: forward functions and gradient rules are the op table's own Python
 * callables.  The module is optional (symgrad is complete without it; SYMGRAD_PURE_PYTHON=1
 * turns it off), and the test suite runs the tensor and engine tests both ways.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

/* ----------------------------------------------------------------------- configuration */
/* Set once by setup(): the classes and helpers of the Python side. */
static PyTypeObject *Tensor_T, *Op_T, *ndarray_T, *AccumulateGrad_T, *Node_T;
static PyObject *grad_mode, *seq_iter, *meta0, *number_meta, *py_apply, *conform_data;
static PyObject *numpy_backend, *scalar_meta, *version_error, *conform_grad, *release,
    *run_other, *run_accumulators, *freed_message, *all_freed, *seq_key;
static PyObject *empty_tuple, *zero;
static PyObject *meta_cache, *pick_cache;
static PyObject *s_view_of, *s_multi_output, *s_accum, *s_accumulator, *s_plain,
    *s_released, *s_op, *s_grads, *s_seq;

/* Offsets of __slots__ members, read off their member descriptors. */
static Py_ssize_t T_data, T_dtype, T_grad_fn, T_requires_grad, T_vc;
static Py_ssize_t N_inputs, N_attrs, N_saved, N_versions, N_meta, N_seq;
static Py_ssize_t O_forward, O_simple, O_node_class, O_plan, O_grads;
static Py_ssize_t D_is_fp, G_enabled;

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

static int
slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *offset)
{
    PyObject *key = PyUnicode_InternFromString(name);
    if (key == NULL)
        return -1;
    PyObject *descr = _PyType_Lookup(type, key);
    Py_DECREF(key);
    if (descr == NULL || !PyObject_TypeCheck(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
    if (m->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, name);
        return -1;
    }
    *offset = m->offset;
    return 0;
}

/* A new object of a Python class, as object.__new__(cls) makes it: slots empty. */
static inline PyObject *
new_object(PyTypeObject *type)
{
    return PyBaseObject_Type.tp_new(type, empty_tuple, NULL);
}

/* Set a slot of an object, owning a new reference to v. */
static inline void
set_slot(PyObject *o, Py_ssize_t off, PyObject *v)
{
    PyObject **p = (PyObject **)((char *)o + off);
    PyObject *old = *p;
    Py_INCREF(v);
    *p = v;
    Py_XDECREF(old);
}

/* Truth of an attribute that is usually a class default (None, False). */
static inline int
attr_true(PyObject *o, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(o, name);
    if (v == NULL)
        return -1;
    int r = (v == Py_None || v == Py_False) ? 0 : PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

/* ------------------------------------------------------------------------------- apply */

/* The numpy scalar of a 0-d tensor's data (new reference); NULL without an error when the
 * data is not 0-d. */
static PyObject *
scalar_data(PyObject *t)
{
    PyObject *d = SLOT(t, T_data);
    if (d == NULL)
        return NULL;
    if (Py_TYPE(d) != ndarray_T) {
        Py_INCREF(d);
        return d;  /* a numpy scalar already */
    }
    /* a[()] is the scalar of a 0-d array, and a view (an array) of any other */
    PyObject *s = PyObject_GetItem(d, empty_tuple);
    if (s == NULL)
        PyErr_Clear();
    else if (Py_TYPE(s) == ndarray_T)
        Py_CLEAR(s);
    return s;
}

/* Is t a tensor the fast path may take: not a view, not one output of several? */
static inline int
plain_tensor(PyObject *t)
{
    int r = attr_true(t, s_view_of);
    if (r != 0)
        return r < 0 ? -1 : 0;
    r = attr_true(t, s_multi_output);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return 1;
}

/* The edge to t in a new node (new reference): its grad_fn, its AccumulateGrad when it is
 * a leaf requiring grad, else t itself (a constant). */
static PyObject *
edge_to(PyObject *t)
{
    PyObject *fn = SLOT(t, T_grad_fn);
    if (fn != NULL && fn != Py_None) {
        Py_INCREF(fn);
        return fn;
    }
    PyObject *rg = SLOT(t, T_requires_grad);
    int wants = rg == Py_True ? 1 : (rg == NULL || rg == Py_False) ? 0 : PyObject_IsTrue(rg);
    if (wants < 0)
        return NULL;
    if (!wants) {
        Py_INCREF(t);
        return t;
    }
    PyObject *acc = PyObject_GetAttr(t, s_accum);
    if (acc == NULL)
        return NULL;
    if (acc != Py_None)
        return acc;
    Py_DECREF(acc);
    return PyObject_CallMethodNoArgs(t, s_accumulator);
}

/* The indices a saved-value picker of ops._simple_saves takes, cached per picker. */
static PyObject *
pick_index(PyObject *pick)
{
    PyObject *idx = PyDict_GetItemWithError(pick_cache, pick);
    if (idx != NULL || PyErr_Occurred())
        return idx;  /* borrowed */
    PyObject *probe = Py_BuildValue("(iiii)", 0, 1, 2, 3);
    if (probe == NULL)
        return NULL;
    idx = PyObject_CallOneArg(pick, probe);
    Py_DECREF(probe);
    if (idx == NULL)
        return NULL;
    if (!PyTuple_CheckExact(idx) || PyDict_SetItem(pick_cache, pick, idx) < 0) {
        Py_DECREF(idx);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a saved-value picker must return a tuple");
        return NULL;
    }
    Py_DECREF(idx);
    return PyDict_GetItemWithError(pick_cache, pick);
}

/* The shared input metadata of a node whose inputs are 0-d tensors of dtype dt (kind 1:
 * one input, 2: two tensors, 3: a tensor and a number).  Borrowed. */
static PyObject *
node_meta(PyObject *dt, int kind)
{
    PyObject *metas = PyDict_GetItemWithError(meta_cache, dt);
    if (metas == NULL) {
        if (PyErr_Occurred())
            return NULL;
        PyObject *m = PyDict_GetItemWithError(meta0, dt);
        if (m == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_KeyError, "no 0-d metadata for this dtype");
            return NULL;
        }
        metas = Py_BuildValue("(NNN)", PyTuple_Pack(1, m), PyTuple_Pack(2, m, m),
                              PyTuple_Pack(2, m, number_meta));
        if (metas == NULL)
            return NULL;
        int err = PyDict_SetItem(meta_cache, dt, metas);
        Py_DECREF(metas);
        if (err < 0)
            return NULL;
    }
    return PyTuple_GET_ITEM(metas, kind - 1);
}

#define NOT_MINE ((PyObject *)1)  /* the case is not the fast path's: Python takes it */

/* op on a (and b, unless NULL): the fast path of tensor.apply, or NOT_MINE. */
static PyObject *
fast_apply(PyObject *op, PyObject *a, PyObject *b)
{
    if (Py_TYPE(op) != Op_T)
        return NOT_MINE;
    PyObject *simple = SLOT(op, O_simple);
    if (simple == NULL || simple == Py_None || Py_TYPE(a) != Tensor_T)
        return NOT_MINE;
    PyObject *dt = SLOT(a, T_dtype);
    if (dt == NULL || SLOT(dt, D_is_fp) != Py_True)
        return NOT_MINE;
    int b_tensor = b != NULL && Py_TYPE(b) == Tensor_T;
    if (b != NULL && !b_tensor && !PyFloat_CheckExact(b) && !PyLong_CheckExact(b))
        return NOT_MINE;
    if (b_tensor && SLOT(b, T_dtype) != dt)
        return NOT_MINE;
    int r = plain_tensor(a);
    if (r <= 0)
        return r < 0 ? NULL : NOT_MINE;
    if (b_tensor && (r = plain_tensor(b)) <= 0)
        return r < 0 ? NULL : NOT_MINE;

    PyObject *d0 = scalar_data(a), *d1 = NULL, *data;
    if (d0 == NULL)
        return NOT_MINE;
    if (b_tensor) {
        d1 = scalar_data(b);
        if (d1 == NULL) {
            Py_DECREF(d0);
            return NOT_MINE;
        }
    }
    else if (b != NULL) {
        d1 = b;
        Py_INCREF(d1);
    }
    PyObject *fargs[2] = {d0, d1};
    data = PyObject_Vectorcall(SLOT(op, O_forward), fargs, b != NULL ? 2 : 1, NULL);
    PyTypeObject *want = Py_TYPE(d0);
    Py_DECREF(d0);
    Py_XDECREF(d1);
    if (data == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError))
            return NULL;
        PyErr_Clear();  /* the Python path words the error */
        return NOT_MINE;
    }
    if (Py_TYPE(data) != want) {
        PyObject *fixed = PyObject_CallFunctionObjArgs(conform_data, data, dt, NULL);
        Py_DECREF(data);
        if (fixed == NULL)
            return NULL;
        data = fixed;
    }

    PyObject *out = new_object(Tensor_T);
    if (out == NULL) {
        Py_DECREF(data);
        return NULL;
    }
    PyObject *vc = PyList_New(1);
    if (vc == NULL) {
        Py_DECREF(data);
        Py_DECREF(out);
        return NULL;
    }
    Py_INCREF(zero);
    PyList_SET_ITEM(vc, 0, zero);
    SLOT(out, T_data) = data;
    Py_INCREF(dt);
    SLOT(out, T_dtype) = dt;
    Py_INCREF(Py_None);
    SLOT(out, T_grad_fn) = Py_None;
    Py_INCREF(Py_False);
    SLOT(out, T_requires_grad) = Py_False;
    SLOT(out, T_vc) = vc;

    PyObject *enabled = SLOT(grad_mode, G_enabled);
    if (enabled != Py_True) {
        r = enabled == NULL ? 0 : PyObject_IsTrue(enabled);
        if (r < 0)
            goto fail;
        if (!r)
            return out;
    }
    PyObject *ea = edge_to(a), *eb = NULL;
    if (ea == NULL)
        goto fail;
    int mask = ea != a;
    if (b_tensor) {
        eb = edge_to(b);
        if (eb == NULL) {
            Py_DECREF(ea);
            goto fail;
        }
        mask |= (eb != b) << 1;
    }
    else if (b != NULL) {
        eb = b;
        Py_INCREF(eb);
    }
    if (!mask) {
        Py_DECREF(ea);
        Py_XDECREF(eb);
        return out;
    }
    PyObject *inputs = b != NULL ? PyTuple_New(2) : PyTuple_New(1);
    if (inputs == NULL) {
        Py_DECREF(ea);
        Py_XDECREF(eb);
        goto fail;
    }
    PyTuple_SET_ITEM(inputs, 0, ea);
    if (b != NULL)
        PyTuple_SET_ITEM(inputs, 1, eb);
    PyObject *meta = node_meta(dt, b == NULL ? 1 : b_tensor ? 2 : 3);
    PyObject *node = meta == NULL ? NULL : new_object((PyTypeObject *)SLOT(op, O_node_class));
    if (node == NULL) {
        Py_DECREF(inputs);
        goto fail;
    }
    SLOT(node, N_inputs) = inputs;
    Py_INCREF(empty_tuple);
    SLOT(node, N_attrs) = empty_tuple;
    PyObject *plan = SLOT(op, O_plan);
    if (plan != NULL && PyTuple_GET_SIZE(plan)) {
        PyObject *idx = pick_index(PyTuple_GET_ITEM(simple, mask));
        if (idx == NULL)
            goto fail_node;
        Py_ssize_t k = PyTuple_GET_SIZE(idx);
        PyObject *saved = PyTuple_New(k), *versions = PyTuple_New(k);
        if (saved == NULL || versions == NULL) {
            Py_XDECREF(saved);
            Py_XDECREF(versions);
            goto fail_node;
        }
        PyObject *a_version = PyList_GET_ITEM(SLOT(a, T_vc), 0);
        PyObject *b_version = b_tensor ? PyList_GET_ITEM(SLOT(b, T_vc), 0) : Py_None;
        PyObject *values[4] = {a, b != NULL ? b : Py_None, out, Py_None};
        PyObject *vers[4] = {a_version, b_version, zero, Py_None};
        for (Py_ssize_t i = 0; i < k; i++) {
            Py_ssize_t j = PyLong_AsSsize_t(PyTuple_GET_ITEM(idx, i));
            if (j < 0 || j > 3) {
                Py_DECREF(saved);
                Py_DECREF(versions);
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_IndexError, "saved-value index out of range");
                goto fail_node;
            }
            Py_INCREF(values[j]);
            PyTuple_SET_ITEM(saved, i, values[j]);
            Py_INCREF(vers[j]);
            PyTuple_SET_ITEM(versions, i, vers[j]);
        }
        SLOT(node, N_saved) = saved;
        SLOT(node, N_versions) = versions;
    }
    else {
        Py_INCREF(empty_tuple);
        SLOT(node, N_saved) = empty_tuple;
        Py_INCREF(empty_tuple);
        SLOT(node, N_versions) = empty_tuple;
    }
    Py_INCREF(meta);
    SLOT(node, N_meta) = meta;
    PyObject *seq = PyIter_Next(seq_iter);
    if (seq == NULL)
        goto fail_node;
    SLOT(node, N_seq) = seq;
    PyObject *old = SLOT(out, T_grad_fn);
    SLOT(out, T_grad_fn) = node;  /* owns the new node */
    Py_XDECREF(old);
    return out;

fail_node:
    Py_DECREF(node);
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *
sp_apply(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (Tensor_T != NULL && kwnames == NULL && (nargs == 2 || (nargs == 3 &&
            PyTuple_CheckExact(args[2]) && PyTuple_GET_SIZE(args[2]) == 0))) {
        PyObject *targs = args[1];
        Py_ssize_t n = PyTuple_CheckExact(targs) ? PyTuple_GET_SIZE(targs) : 0;
        if (n == 1 || n == 2) {
            PyObject *out = fast_apply(args[0], PyTuple_GET_ITEM(targs, 0),
                                       n == 2 ? PyTuple_GET_ITEM(targs, 1) : NULL);
            if (out != NOT_MINE)
                return out;
        }
    }
    return PyObject_Vectorcall(py_apply, args, nargs, kwnames);
}

/* ------------------------------------------------------------------------------ method */
/* A Tensor method that is its op on plain tensors and Python numbers (t * u, t.relu()):
 * the op's fast path, else the Python method it replaces.  A method descriptor, so that
 * Python calls it with self first and binds nothing. */
typedef struct {
    PyObject_HEAD
    PyObject *op;
    PyObject *function;  /* the Python method */
    int arity;           /* 1: self only, 2: self and other */
    vectorcallfunc vectorcall;
} MethodObject;

static PyObject *
method_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    MethodObject *m = (MethodObject *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && n == m->arity && Tensor_T != NULL) {
        PyObject *out = fast_apply(m->op, args[0], n == 2 ? args[1] : NULL);
        if (out != NOT_MINE)
            return out;
    }
    return PyObject_Vectorcall(m->function, args, nargsf, kwnames);
}

static PyObject *
method_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *
method_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *op, *function;
    int arity;
    if (!PyArg_ParseTuple(args, "OOi:method", &op, &function, &arity))
        return NULL;
    if (arity != 1 && arity != 2) {
        PyErr_SetString(PyExc_ValueError, "arity must be 1 or 2");
        return NULL;
    }
    MethodObject *m = (MethodObject *)type->tp_alloc(type, 0);
    if (m == NULL)
        return NULL;
    Py_INCREF(op);
    m->op = op;
    Py_INCREF(function);
    m->function = function;
    m->arity = arity;
    m->vectorcall = method_vectorcall;
    return (PyObject *)m;
}

static int
method_traverse(MethodObject *m, visitproc visit, void *arg)
{
    Py_VISIT(m->op);
    Py_VISIT(m->function);
    return 0;
}

static void
method_dealloc(MethodObject *m)
{
    PyObject_GC_UnTrack(m);
    Py_CLEAR(m->op);
    Py_CLEAR(m->function);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

static PyObject *
method_getattr(MethodObject *m, PyObject *name)
{
    /* __name__, __doc__, __wrapped__ ... of the Python method, for help() and inspect */
    PyObject *r = PyObject_GenericGetAttr((PyObject *)m, name);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return r;
    PyErr_Clear();
    return PyObject_GetAttr(m->function, name);
}

static PyMemberDef method_members[] = {
    {"op", T_OBJECT, offsetof(MethodObject, op), READONLY, "the op"},
    {"__wrapped__", T_OBJECT, offsetof(MethodObject, function), READONLY,
     "the Python method"},
    {NULL}
};

static PyTypeObject Method_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "symgrad._speedups.method",
    .tp_basicsize = sizeof(MethodObject),
    .tp_dealloc = (destructor)method_dealloc,
    .tp_vectorcall_offset = offsetof(MethodObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_getattro = (getattrofunc)method_getattr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL
                | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "method(op, function, arity): a Tensor method compiled for its op's fast path",
    .tp_traverse = (traverseproc)method_traverse,
    .tp_members = method_members,
    .tp_descr_get = method_get,
    .tp_new = method_new,
};

/* ------------------------------------------------------------------------- run_ordered */

#define MAX_SAVED 6  /* nodes saving more take the engine's Python code */

/* The gradient ``g`` of ``node`` handed to its inputs with the op table's rules: the plain
 * branch of engine._run_ordered.  Appends the AccumulateGrad nodes made ready to accs. */
static int
run_plain(PyObject *node, PyObject *g, PyObject *buffers, PyObject *owned, PyObject *deps,
          int retain_graph, PyObject *accs)
{
    PyObject *saved = SLOT(node, N_saved);
    Py_ssize_t nsaved = saved == NULL ? 0 : PyTuple_GET_SIZE(saved);
    PyObject *values[MAX_SAVED];
    Py_ssize_t nvalues = 0;
    int tensors_only = 1, result = -1;
    if (nsaved) {
        int released = attr_true(node, s_released);
        if (released) {
            if (released > 0)
                PyErr_SetObject(PyExc_RuntimeError, freed_message);
            return -1;
        }
        PyObject *versions = SLOT(node, N_versions);
        if (nsaved > MAX_SAVED || versions == NULL || PyTuple_GET_SIZE(versions) != nsaved) {
            PyErr_SetString(PyExc_RuntimeError, "saved values and versions disagree");
            return -1;
        }
        for (Py_ssize_t i = 0; i < nsaved; i++) {
            PyObject *s = PyTuple_GET_ITEM(saved, i), *v = PyTuple_GET_ITEM(versions, i);
            if (v == Py_None) {  /* not a tensor */
                Py_INCREF(s);
                values[nvalues++] = s;
                tensors_only = 0;
                continue;
            }
            PyObject *vc = SLOT(s, T_vc);
            PyObject *now = vc != NULL && PyList_Check(vc) && PyList_GET_SIZE(vc) ?
                PyList_GET_ITEM(vc, 0) : NULL;
            int same = now == v ? 1 : now == NULL ? 0 : PyObject_RichCompareBool(now, v, Py_EQ);
            if (same < 0)
                goto done;
            if (!same) {
                PyObject *err = PyObject_CallFunction(version_error, "OnO", node, i, s);
                if (err != NULL) {
                    PyErr_SetObject((PyObject *)Py_TYPE(err), err);
                    Py_DECREF(err);
                }
                goto done;
            }
            PyObject *d = scalar_data(s);
            if (d == NULL) {
                if (PyErr_Occurred())
                    goto done;
                d = SLOT(s, T_data);
                Py_INCREF(d);
            }
            values[nvalues++] = d;
        }
    }
    PyObject *op = _PyType_Lookup(Py_TYPE(node), s_op);  /* a class attribute */
    PyObject *rules = op != NULL && Py_TYPE(op) == Op_T ? SLOT(op, O_grads) : NULL;
    Py_XINCREF(rules);
    if (rules == NULL || !PyTuple_Check(rules)) {
        Py_XDECREF(rules);
        PyErr_SetString(PyExc_TypeError, "a plain node without gradient rules");
        goto done;
    }
    PyObject *inputs = SLOT(node, N_inputs), *meta = SLOT(node, N_meta);
    Py_ssize_t n = PyTuple_GET_SIZE(inputs);
    PyObject *call[3 + MAX_SAVED];
    call[1] = numpy_backend;
    call[2] = g;
    for (Py_ssize_t k = 0; k < nvalues; k++)
        call[3 + k] = values[k];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(inputs, i);
        if (!PyObject_TypeCheck(x, Node_T))
            continue;
        PyObject *rule = i < PyTuple_GET_SIZE(rules) ? PyTuple_GET_ITEM(rules, i) : Py_None;
        if (rule != Py_None) {
            PyObject *gi = PyObject_Vectorcall(rule, call + 1,
                                               (2 + nvalues) | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                               NULL);
            if (gi == NULL)
                goto done_rules;
            if (gi != Py_None) {
                PyObject *mi = PyTuple_GET_ITEM(meta, i);
                PyObject *m0 = PyDict_GetItemWithError(scalar_meta, (PyObject *)Py_TYPE(gi));
                if (m0 != mi) {  /* not a 0-d gradient as is: un-broadcast, convert */
                    PyObject *fixed = PyErr_Occurred() ? NULL :
                        PyObject_CallFunctionObjArgs(conform_grad, gi, mi, NULL);
                    Py_DECREF(gi);
                    if (fixed == NULL)
                        goto done_rules;
                    gi = fixed;
                }
                PyObject *b = PyDict_GetItemWithError(buffers, x);  /* borrowed */
                int err = 0;
                if (b == NULL) {
                    err = PyErr_Occurred() ? -1 : PyDict_SetItem(buffers, x, gi);
                }
                else {
                    int inplace = 0;
                    if (PySet_GET_SIZE(owned)) {
                        PyObject *id = PyLong_FromVoidPtr(b);
                        inplace = id == NULL ? -1 : PySet_Contains(owned, id);
                        Py_XDECREF(id);
                        if (inplace > 0) {
                            PyObject *s1 = PyObject_GetAttrString(b, "shape");
                            PyObject *s2 = s1 ? PyObject_GetAttrString(gi, "shape") : NULL;
                            inplace = s2 ? PyObject_RichCompareBool(s1, s2, Py_EQ) : -1;
                            Py_XDECREF(s1);
                            Py_XDECREF(s2);
                        }
                    }
                    if (inplace < 0) {
                        err = -1;
                    }
                    else if (inplace) {  /* a sum this pass made: nobody else holds it */
                        PyObject *r = PyNumber_InPlaceAdd(b, gi);
                        err = r == NULL ? -1 : 0;
                        Py_XDECREF(r);
                    }
                    else {
                        PyObject *sum = PyNumber_Add(b, gi);
                        err = sum == NULL ? -1 : PyDict_SetItem(buffers, x, sum);
                        if (!err && Py_TYPE(sum) == ndarray_T) {
                            PyObject *id = PyLong_FromVoidPtr(sum);
                            err = id == NULL ? -1 : PySet_Add(owned, id);
                            Py_XDECREF(id);
                        }
                        Py_XDECREF(sum);
                    }
                }
                Py_DECREF(gi);
                if (err < 0)
                    goto done_rules;
            }
            else {
                Py_DECREF(gi);
            }
        }
        if (Py_TYPE(x) == AccumulateGrad_T) {
            PyObject *d = PyDict_GetItemWithError(deps, x);
            if (d == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_KeyError, "an input without a dependency count");
                goto done_rules;
            }
            long left = PyLong_AsLong(d) - 1;
            PyObject *nl = PyLong_FromLong(left);
            if (nl == NULL || PyDict_SetItem(deps, x, nl) < 0) {
                Py_XDECREF(nl);
                goto done_rules;
            }
            Py_DECREF(nl);
            if (!left && PyList_Append(accs, x) < 0)
                goto done_rules;
        }
    }
    if (nsaved && !retain_graph) {
        if (tensors_only && nsaved < PyTuple_GET_SIZE(all_freed)) {  /* as _release */
            set_slot(node, N_saved, PyTuple_GET_ITEM(all_freed, nsaved));
            if (PyObject_SetAttr(node, s_released, Py_True) < 0)
                goto done_rules;
        }
        else {
            PyObject *r = PyObject_CallOneArg(release, node);
            if (r == NULL)
                goto done_rules;
            Py_DECREF(r);
        }
    }
    result = 0;
done_rules:
    Py_DECREF(rules);
done:
    for (Py_ssize_t k = 0; k < nvalues; k++)
        Py_DECREF(values[k]);
    return result;
}

/* Every node reachable from the roots, by decreasing sequence number, and the number of
 * edges into each (engine._run_ordered's first half). */
static PyObject *
reachable(PyObject *roots, PyObject *deps)
{
    PyObject *order = PyList_New(0), *seen = PySet_New(roots), *stack = NULL;
    if (order == NULL || seen == NULL)
        goto fail;
    stack = PySequence_List(seen);
    if (stack == NULL)
        goto fail;
    while (PyList_GET_SIZE(stack)) {
        Py_ssize_t top = PyList_GET_SIZE(stack) - 1;
        PyObject *n = PyList_GET_ITEM(stack, top);
        Py_INCREF(n);
        if (PyList_SetSlice(stack, top, top + 1, NULL) < 0 || PyList_Append(order, n) < 0) {
            Py_DECREF(n);
            goto fail;
        }
        PyObject *inputs = SLOT(n, N_inputs);
        Py_DECREF(n);
        if (inputs == NULL || !PyTuple_Check(inputs))
            continue;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
            PyObject *x = PyTuple_GET_ITEM(inputs, i);
            if (!PyObject_TypeCheck(x, Node_T))
                continue;
            PyObject *d = PyDict_GetItemWithError(deps, x);
            PyObject *nd;
            if (d == NULL) {
                if (PyErr_Occurred())
                    goto fail;
                nd = PyLong_FromLong(1);
                int met = PySet_Contains(seen, x);
                if (met < 0 || (!met && PyList_Append(stack, x) < 0)) {
                    Py_XDECREF(nd);
                    goto fail;
                }
            }
            else {
                nd = PyLong_FromLong(PyLong_AsLong(d) + 1);
            }
            if (nd == NULL || PyDict_SetItem(deps, x, nd) < 0) {
                Py_XDECREF(nd);
                goto fail;
            }
            Py_DECREF(nd);
        }
    }
    PyObject *kw = Py_BuildValue("{sOsO}", "key", seq_key, "reverse", Py_True);
    PyObject *sort = kw ? PyObject_GetAttrString(order, "sort") : NULL;
    PyObject *r = sort ? PyObject_Call(sort, empty_tuple, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(sort);
    if (r == NULL)
        goto fail;
    Py_DECREF(r);
    Py_DECREF(seen);
    Py_DECREF(stack);
    return order;
fail:
    Py_XDECREF(order);
    Py_XDECREF(seen);
    Py_XDECREF(stack);
    return NULL;
}

static PyObject *
sp_run_ordered(PyObject *self, PyObject *args)
{
    PyObject *roots, *buffers;
    int retain_graph;
    if (!PyArg_ParseTuple(args, "O!O!p", &PyList_Type, &roots, &PyDict_Type, &buffers,
                          &retain_graph))
        return NULL;
    if (Tensor_T == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "symgrad._speedups.setup() was not called");
        return NULL;
    }
    PyObject *deps = PyDict_New(), *owned = PySet_New(NULL), *order = NULL, *ready = NULL;
    PyObject *accs = PyList_New(0);  /* the AccumulateGrad nodes a node makes ready */
    PyObject *prev_mode = SLOT(grad_mode, G_enabled), *result = NULL;
    if (deps == NULL || owned == NULL || accs == NULL || prev_mode == NULL)
        goto out;
    order = reachable(roots, deps);
    if (order == NULL)
        goto out;
    /* The AccumulateGrad nodes (sequence number inf) come first: not in the loop. */
    Py_ssize_t first = 0, total = PyList_GET_SIZE(order);
    ready = PyList_New(0);
    if (ready == NULL)
        goto out;
    while (first < total && Py_TYPE(PyList_GET_ITEM(order, first)) == AccumulateGrad_T) {
        PyObject *n = PyList_GET_ITEM(order, first);
        int has = PyDict_Contains(deps, n);
        if (has < 0 || (!has && PyList_Append(ready, n) < 0))
            goto out;
        first++;
    }
    Py_INCREF(prev_mode);
    set_slot(grad_mode, G_enabled, Py_False);
    if (PyList_GET_SIZE(ready)) {
        PyObject *r = PyObject_CallFunctionObjArgs(run_accumulators, ready, buffers, owned,
                                                   NULL);
        if (r == NULL)
            goto restore;
        Py_DECREF(r);
    }
    for (Py_ssize_t k = first; k < total; k++) {
        PyObject *node = PyList_GET_ITEM(order, k);
        PyObject *g = PyDict_GetItemWithError(buffers, node);  /* popped */
        if (g != NULL) {
            Py_INCREF(g);
            if (PyDict_DelItem(buffers, node) < 0) {
                Py_DECREF(g);
                goto restore;
            }
        }
        else if (PyErr_Occurred()) {
            goto restore;
        }
        else {
            g = Py_None;
            Py_INCREF(g);
        }
        if (PySet_GET_SIZE(owned) && g != Py_None) {  /* ids are reused once an array dies */
            PyObject *id = PyLong_FromVoidPtr(g);
            int err = id == NULL ? -1 : PySet_Discard(owned, id);
            Py_XDECREF(id);
            if (err < 0) {
                Py_DECREF(g);
                goto restore;
            }
        }
        PyObject *saved = SLOT(node, N_saved);
        int plain = g == Py_None ? 0 : attr_true(node, s_plain);
        if (plain > 0 && (saved == NULL || !PyTuple_Check(saved)
                          || PyTuple_GET_SIZE(saved) > MAX_SAVED))
            plain = 0;
        int err;
        if (plain < 0) {
            err = -1;
        }
        else if (plain) {
            err = run_plain(node, g, buffers, owned, deps, retain_graph, accs);
        }
        else {
            PyObject *r = PyObject_CallFunction(run_other, "OOOOOi", node, g, buffers, owned,
                                                deps, retain_graph);
            err = r == NULL ? -1 : 0;
            if (r != NULL && r != Py_None)
                err = PyList_SetSlice(accs, 0, 0, r);
            Py_XDECREF(r);
        }
        Py_DECREF(g);
        if (!err && PyList_GET_SIZE(accs)) {
            PyObject *r = PyObject_CallFunctionObjArgs(run_accumulators, accs, buffers, owned,
                                                       NULL);
            err = r == NULL ? -1 : PyList_SetSlice(accs, 0, PyList_GET_SIZE(accs), NULL);
            Py_XDECREF(r);
        }
        if (err < 0)
            goto restore;
    }
    result = Py_None;
    Py_INCREF(result);
restore:
    set_slot(grad_mode, G_enabled, prev_mode);
    Py_DECREF(prev_mode);
out:
    Py_XDECREF(deps);
    Py_XDECREF(owned);
    Py_XDECREF(order);
    Py_XDECREF(ready);
    Py_XDECREF(accs);
    return result;
}

/* ------------------------------------------------------------------------------- setup */

static int
take(PyObject *config, const char *name, PyObject **target)
{
    PyObject *v = PyDict_GetItemString(config, name);
    if (v == NULL) {
        PyErr_Format(PyExc_KeyError, "setup(): missing %s", name);
        return -1;
    }
    Py_INCREF(v);
    Py_XSETREF(*target, v);
    return 0;
}

static PyObject *
sp_setup(PyObject *self, PyObject *config)
{
    if (!PyDict_Check(config)) {
        PyErr_SetString(PyExc_TypeError, "setup() takes a dict");
        return NULL;
    }
    PyObject *tensor = NULL, *op = NULL, *ndarray = NULL, *acc = NULL, *node = NULL,
        *dtype = NULL, *mode_type = NULL;
    if (take(config, "Tensor", &tensor) || take(config, "Op", &op)
        || take(config, "ndarray", &ndarray) || take(config, "AccumulateGrad", &acc)
        || take(config, "Node", &node) || take(config, "dtype", &dtype)
        || take(config, "GRAD_MODE", &grad_mode) || take(config, "sequence", &seq_iter)
        || take(config, "META0", &meta0) || take(config, "NUMBER_META", &number_meta)
        || take(config, "apply", &py_apply) || take(config, "conform_data", &conform_data)
        || take(config, "NUMPY", &numpy_backend) || take(config, "scalar_meta", &scalar_meta)
        || take(config, "version_error", &version_error)
        || take(config, "conform_grad", &conform_grad) || take(config, "release", &release)
        || take(config, "run_other", &run_other)
        || take(config, "run_accumulators", &run_accumulators)
        || take(config, "FREED", &freed_message) || take(config, "ALL_FREED", &all_freed)
        || take(config, "seq_key", &seq_key))
        goto fail;
    if (!PyType_Check(tensor) || !PyType_Check(op) || !PyType_Check(ndarray)
        || !PyType_Check(acc) || !PyType_Check(node) || !PyType_Check(dtype)
        || !PyTuple_Check(all_freed)) {
        PyErr_SetString(PyExc_TypeError, "setup(): unexpected configuration");
        goto fail;
    }
    mode_type = (PyObject *)Py_TYPE(grad_mode);
    Py_INCREF(mode_type);
    PyTypeObject *T = (PyTypeObject *)tensor, *N = (PyTypeObject *)node;
    if (slot_offset(T, "_data", &T_data) || slot_offset(T, "_dtype", &T_dtype)
        || slot_offset(T, "grad_fn", &T_grad_fn)
        || slot_offset(T, "_requires_grad", &T_requires_grad) || slot_offset(T, "_vc", &T_vc)
        || slot_offset(N, "inputs", &N_inputs) || slot_offset(N, "attrs", &N_attrs)
        || slot_offset(N, "_saved", &N_saved) || slot_offset(N, "_versions", &N_versions)
        || slot_offset(N, "_meta", &N_meta) || slot_offset(N, "_seq", &N_seq)
        || slot_offset((PyTypeObject *)op, "forward", &O_forward)
        || slot_offset((PyTypeObject *)op, "simple", &O_simple)
        || slot_offset((PyTypeObject *)op, "node_class", &O_node_class)
        || slot_offset((PyTypeObject *)op, "plan", &O_plan)
        || slot_offset((PyTypeObject *)op, "grads", &O_grads)
        || slot_offset((PyTypeObject *)dtype, "is_floating_point", &D_is_fp)
        || slot_offset((PyTypeObject *)mode_type, "enabled", &G_enabled))
        goto fail;
    Py_XSETREF(meta_cache, PyDict_New());
    Py_XSETREF(pick_cache, PyDict_New());
    if (meta_cache == NULL || pick_cache == NULL)
        goto fail;
    Py_XSETREF(Tensor_T, T);
    Py_XSETREF(Op_T, (PyTypeObject *)op);
    Py_XSETREF(ndarray_T, (PyTypeObject *)ndarray);
    Py_XSETREF(AccumulateGrad_T, (PyTypeObject *)acc);
    Py_XSETREF(Node_T, N);
    Py_DECREF(dtype);
    Py_DECREF(mode_type);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(tensor);
    Py_XDECREF(op);
    Py_XDECREF(ndarray);
    Py_XDECREF(acc);
    Py_XDECREF(node);
    Py_XDECREF(dtype);
    Py_XDECREF(mode_type);
    return NULL;
}

static PyMethodDef methods[] = {
    {"apply", (PyCFunction)(void (*)(void))sp_apply, METH_FASTCALL | METH_KEYWORDS,
     "apply(op, args, attrs=())\n--\n\nsymgrad.tensor.apply, with its fast path compiled."},
    {"run_ordered", sp_run_ordered, METH_VARARGS,
     "run_ordered(root_nodes, buffers, retain_graph)\n--\n\n"
     "symgrad.engine._run_ordered, compiled."},
    {"setup", sp_setup, METH_O, "setup(config)\n--\n\nThe Python side's classes and helpers."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "symgrad._speedups",
    "symgrad's two hottest loops, compiled (optional; see the C source).", -1, methods,
    NULL, NULL, NULL, NULL
};

#define INTERN(var, text) \
    if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL

PyMODINIT_FUNC
PyInit__speedups(void)
{
    empty_tuple = PyTuple_New(0);
    zero = PyLong_FromLong(0);
    if (empty_tuple == NULL || zero == NULL)
        return NULL;
    INTERN(s_view_of, "_view_of");
    INTERN(s_multi_output, "_multi_output");
    INTERN(s_accum, "_accum");
    INTERN(s_accumulator, "_accumulator");
    INTERN(s_plain, "_plain");
    INTERN(s_released, "_released");
    INTERN(s_op, "op");
    INTERN(s_grads, "grads");
    INTERN(s_seq, "_seq");
    if (PyType_Ready(&Method_Type) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL)
        return NULL;
    Py_INCREF(&Method_Type);
    if (PyModule_AddObject(mod, "method", (PyObject *)&Method_Type) < 0) {
        Py_DECREF(&Method_Type);
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
