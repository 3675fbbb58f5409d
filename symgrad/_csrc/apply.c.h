/* symgrad._speedups, part 2 of 3: apply's fast path and the compiled one-op methods.
 * Included by symgrad/_speedups.c only, after common.c.h. */

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
    if (Py_TYPE(op) != Op_T || packing)
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

    PyObject *enabled = PyObject_GetAttr(grad_mode, str_enabled);
    if (enabled == NULL)
        goto fail;
    r = enabled == Py_True ? 1 : PyObject_IsTrue(enabled);
    Py_DECREF(enabled);
    if (r < 0)
        goto fail;
    if (!r)
        return out;
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
