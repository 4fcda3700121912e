/* cql_statements.c: a CQL statement's values, and a sequence's statements.
 *
 *   wb_cql_text_body  Statement.body(params) of databases/cassandra/protocol/cql.py for a statement whose values are
 *                     all text (cql.c's next step of a chain)
 *   pending(...)      the first loop of databases/cassandra/binding.py's CassandraBinding.sequence: a
 *                     sequence's prepared statements and values
 *
 * Neither reads a connection: they make what a chain sends. tests/unit/test_cassandra_native.py
 * and test_speedups.py compare them with the Python, byte for byte.
 */
#include "cql_statements.h"

static PyObject *s_text_head, *s_arity; /* "text_head", "arity" */

/* Statement.body(params) of a statement whose values are all text (every YCSB statement but a
 * scan's; Statement.text_head is then its head), for params that are all str: head, then each
 * value's length and UTF-8. 1 made, 0 not such a statement or such values (the caller uses
 * Statement.body), -1 error. */
int
wb_cql_text_body(PyObject *stmt, PyObject *params, PyObject **body)
{
    PyObject *head = PyObject_GetAttr(stmt, s_text_head);
    if (head == NULL)
        return -1;
    int result = 0;
    if (!PyBytes_CheckExact(head) || !PyTuple_CheckExact(params))
        goto done;
    PyObject *arity = PyObject_GetAttr(stmt, s_arity);
    if (arity == NULL) {
        result = -1;
        goto done;
    }
    Py_ssize_t n = PyLong_AsSsize_t(arity);
    Py_DECREF(arity);
    if (n == -1 && PyErr_Occurred()) {
        result = -1;
        goto done;
    }
    if (PyTuple_GET_SIZE(params) != n)
        goto done;
    Py_ssize_t size = PyBytes_GET_SIZE(head);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *value = PyTuple_GET_ITEM(params, k);
        if (!PyUnicode_CheckExact(value))
            goto done;
        Py_ssize_t length;
        if (PyUnicode_AsUTF8AndSize(value, &length) == NULL) { /* e.g. a lone surrogate */
            PyErr_Clear();
            goto done;
        }
        if (length > 0x7FFFFFFF)
            goto done;
        size += 4 + length;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);
    if (out == NULL) {
        result = -1;
        goto done;
    }
    char *at = PyBytes_AS_STRING(out);
    memcpy(at, PyBytes_AS_STRING(head), (size_t)PyBytes_GET_SIZE(head));
    at += PyBytes_GET_SIZE(head);
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t length;
        const char *data = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(params, k), &length);
        at[0] = (char)(length >> 24);
        at[1] = (char)(length >> 16);
        at[2] = (char)(length >> 8);
        at[3] = (char)length;
        memcpy(at + 4, data, (size_t)length);
        at += 4 + length;
    }
    *body = out;
    result = 1;
done:
    Py_DECREF(head);
    return result;
}

/* -- pending: a CQL sequence's statements and values ------------------------------------------- *
 *
 * pending(steps, READ, read_every, updates) is the first loop of CassandraBinding.sequence where
 * every statement is prepared already: a read of every field (arg None) is (read_every, (key,)),
 * an update (op, key, values) is (updates[tuple(values)], (*values.values(), key)). None where a
 * step needs the Python loop (a read of some fields, no read_every, an update of a shape not
 * prepared yet, values that are not a dict), or steps are not a list. */

PyObject *
wb_pending(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "pending(steps, READ, read_every, updates)");
        return NULL;
    }
    PyObject *READ = args[1], *read_every = args[2], *updates = args[3];
    if (!PyList_CheckExact(args[0]) || !PyDict_CheckExact(updates))
        Py_RETURN_NONE;
    PyObject *steps = args[0];
    Py_ssize_t count = PyList_GET_SIZE(steps);
    PyObject *out = PyList_New(count);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *step = PyList_GET_ITEM(steps, k);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 3) {
            PyErr_SetString(PyExc_TypeError, "pending: a step is (op, key, arg)");
            goto fail;
        }
        PyObject *key = PyTuple_GET_ITEM(step, 1), *arg = PyTuple_GET_ITEM(step, 2), *bind, *params;
        int is_read = PyObject_RichCompareBool(PyTuple_GET_ITEM(step, 0), READ, Py_EQ);
        if (is_read < 0)
            goto fail;
        if (is_read) {
            if (arg != Py_None || read_every == Py_None)
                goto python;
            bind = read_every;
            params = PyTuple_Pack(1, key);
            if (params == NULL)
                goto fail;
        } else {
            if (!PyDict_CheckExact(arg))
                goto python;
            Py_ssize_t n = PyDict_GET_SIZE(arg), pos = 0, i = 0;
            PyObject *shape = PyTuple_New(n), *field, *value;
            if (shape == NULL)
                goto fail;
            params = PyTuple_New(n + 1);
            if (params == NULL) {
                Py_DECREF(shape);
                goto fail;
            }
            while (i < n && PyDict_Next(arg, &pos, &field, &value)) {
                PyTuple_SET_ITEM(shape, i, Py_NewRef(field));
                PyTuple_SET_ITEM(params, i, Py_NewRef(value));
                i++;
            }
            PyTuple_SET_ITEM(params, n, Py_NewRef(key));
            bind = i == n ? PyDict_GetItemWithError(updates, shape) : NULL; /* borrowed */
            Py_DECREF(shape);
            if (bind == NULL) {
                Py_DECREF(params);
                if (PyErr_Occurred())
                    goto fail;
                goto python;
            }
        }
        PyObject *item = PyTuple_Pack(2, bind, params);
        Py_DECREF(params);
        if (item == NULL)
            goto fail;
        PyList_SET_ITEM(out, k, item);
    }
    return out;
python:
    Py_DECREF(out);
    Py_RETURN_NONE;
fail:
    Py_DECREF(out);
    return NULL;
}

int
wb_cql_statements_init(void)
{
    const WbName names[] = {{&s_text_head, "text_head"}, {&s_arity, "arity"}};
    return wb_intern(names, sizeof(names) / sizeof(names[0]));
}
