/* symgrad._speedups, part 3 of 3: a plain backward() (run_ordered).
 * Included by symgrad/_speedups.c only, after common.c.h. */

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
    PyObject *prev_mode = PyObject_GetAttr(grad_mode, str_enabled), *result = NULL;
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
    if (PyObject_SetAttr(grad_mode, str_enabled, Py_False) < 0)
        goto out;
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
restore: {
    PyObject *et, *ev, *tb;  /* (an error of the pass stays the one reported) */
    PyErr_Fetch(&et, &ev, &tb);
    if (PyObject_SetAttr(grad_mode, str_enabled, prev_mode) < 0) {
        Py_XDECREF(et);
        Py_XDECREF(ev);
        Py_XDECREF(tb);
        Py_CLEAR(result);
    } else {
        PyErr_Restore(et, ev, tb);
    }
}
out:
    Py_XDECREF(prev_mode);
    Py_XDECREF(deps);
    Py_XDECREF(owned);
    Py_XDECREF(order);
    Py_XDECREF(ready);
    Py_XDECREF(accs);
    return result;
}
