/* choice.c: which transactions a lane runs next. choose(ctx, n) is LaneWorkload.choose
 * (workbench/core/workload.py), with an update's value as core/values.py's random_value makes
 * it: the same draws from the lane's random stream in the same order as the Python, so both
 * give the same transactions (tests/unit/test_speedups.py compares them).
 */
#include "choice.h"

/* A double from a call of the lane's Random.random. */
static inline int
draw(PyObject *random, double *out)
{
    PyObject *r = PyObject_CallNoArgs(random);
    if (r == NULL)
        return -1;
    *out = PyFloat_AsDouble(r);
    Py_DECREF(r);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* random.Random.randbytes(n) mapped onto printable ASCII and decoded (core/values.py's
 * random_value): getrandbits(8n) as n little-endian bytes, each byte b as 32 + b % 95. */
static PyObject *
printable_value(PyObject *getrandbits, PyObject *bits, Py_ssize_t n)
{
    PyObject *v = PyObject_CallOneArg(getrandbits, bits);
    if (v == NULL)
        return NULL;
    if (!PyLong_CheckExact(v)) {
        Py_DECREF(v);
        PyErr_SetString(PyExc_TypeError, "getrandbits must give an int");
        return NULL;
    }
    PyObject *text = PyUnicode_New(n, 127);
    if (text == NULL) {
        Py_DECREF(v);
        return NULL;
    }
    unsigned char *data = PyUnicode_1BYTE_DATA(text);
#if PY_VERSION_HEX >= 0x030D0000
    int bad = _PyLong_AsByteArray((PyLongObject *)v, data, (size_t)n, 1, 0, 1);
#else
    int bad = _PyLong_AsByteArray((PyLongObject *)v, data, (size_t)n, 1, 0);
#endif
    Py_DECREF(v);
    if (bad < 0) {
        Py_DECREF(text);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        data[i] = (unsigned char)(32 + data[i] % 95);
    return text;
}

/* choose(ctx, n): LaneWorkload.choose, the next n transactions as (execute, argument), with the
 * same draws in the same order as the Python (test_speedups.py compares them). ctx is a tuple:
 * (Random.random, the cumulative weights (a tuple of floats), their total, the entries (a tuple
 * of (execute, kind, args) per operation: kind 0 a READ, 1 an UPDATE, 2 anything else, whose
 * args() gives its argument), next_key, the field names (a tuple), readall, the read's argument
 * when readall, the value length (-1: write_values(key) gives an update's values), getrandbits,
 * 8 * the value length, write_values, READ, UPDATE). */
PyObject *
wb_choose(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 14) {
        PyErr_SetString(PyExc_TypeError, "choose(ctx, n): ctx is a tuple of 14");
        return NULL;
    }
    PyObject **ctx = &PyTuple_GET_ITEM(args[0], 0);
    Py_ssize_t n = PyLong_AsSsize_t(args[1]);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    PyObject *random = ctx[0], *cumulative = ctx[1], *entries = ctx[3], *next_key = ctx[4];
    PyObject *fields = ctx[5], *read_all = ctx[7], *getrandbits = ctx[9], *bits = ctx[10];
    PyObject *write_values = ctx[11], *READ = ctx[12], *UPDATE = ctx[13];
    double total = PyFloat_AsDouble(ctx[2]);
    int readall = PyObject_IsTrue(ctx[6]);
    Py_ssize_t length = PyLong_AsSsize_t(ctx[8]);
    if ((total == -1.0 || readall < 0 || length == -1) && PyErr_Occurred())
        return NULL;
    if (!PyTuple_CheckExact(cumulative) || !PyTuple_CheckExact(entries) || !PyTuple_CheckExact(fields)
        || PyTuple_GET_SIZE(cumulative) != PyTuple_GET_SIZE(entries) || PyTuple_GET_SIZE(entries) == 0
        || PyTuple_GET_SIZE(fields) == 0) {
        PyErr_SetString(PyExc_TypeError, "choose: cumulative, entries and fields must be tuples, "
                                         "as many weights as entries");
        return NULL;
    }
    Py_ssize_t ops = PyTuple_GET_SIZE(entries), nfields = PyTuple_GET_SIZE(fields);
    double weights[16];
    if (ops > 16) {
        PyErr_SetString(PyExc_ValueError, "choose: at most 16 operations");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < ops; i++) {
        weights[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(cumulative, i));
        if (weights[i] == -1.0 && PyErr_Occurred())
            return NULL;
        PyObject *entry = PyTuple_GET_ITEM(entries, i);
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3 || !PyLong_CheckExact(PyTuple_GET_ITEM(entry, 1))) {
            PyErr_SetString(PyExc_TypeError, "choose: an entry is (execute, kind, args)");
            return NULL;
        }
    }
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t t = 0; t < n; t++) {
        double u;
        if (draw(random, &u) < 0)
            goto fail;
        double x = u * total;
        Py_ssize_t lo = 0, hi = ops; /* bisect.bisect_right */
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (x < weights[mid])
                hi = mid;
            else
                lo = mid + 1;
        }
        PyObject *entry = PyTuple_GET_ITEM(entries, lo < ops ? lo : ops - 1);
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(entry, 1));
        PyObject *arg;
        if (kind == 0 || kind == 1) {
            PyObject *key = PyObject_CallNoArgs(next_key), *third;
            if (key == NULL)
                goto fail;
            if (kind == 0 && readall) {
                third = Py_NewRef(read_all);
            } else if (kind == 1 && length < 0) {
                third = PyObject_CallOneArg(write_values, key);
            } else {
                third = NULL;
                if (draw(random, &u) == 0) {
                    PyObject *field = PyTuple_GET_ITEM(fields, (Py_ssize_t)(u * (double)nfields));
                    if (kind == 0) {
                        third = PyList_New(1);
                        if (third != NULL)
                            PyList_SET_ITEM(third, 0, Py_NewRef(field));
                    } else {
                        PyObject *value = printable_value(getrandbits, bits, length);
                        if (value != NULL) {
                            third = PyDict_New();
                            if (third != NULL && PyDict_SetItem(third, field, value) < 0)
                                Py_CLEAR(third);
                            Py_DECREF(value);
                        }
                    }
                }
            }
            if (third == NULL) {
                Py_DECREF(key);
                goto fail;
            }
            arg = PyTuple_New(3);
            if (arg == NULL) {
                Py_DECREF(key);
                Py_DECREF(third);
                goto fail;
            }
            PyTuple_SET_ITEM(arg, 0, Py_NewRef(kind == 0 ? READ : UPDATE));
            PyTuple_SET_ITEM(arg, 1, key);
            PyTuple_SET_ITEM(arg, 2, third);
        } else {
            arg = PyObject_CallNoArgs(PyTuple_GET_ITEM(entry, 2));
            if (arg == NULL)
                goto fail;
        }
        PyObject *pair = PyTuple_New(2);
        if (pair == NULL) {
            Py_DECREF(arg);
            goto fail;
        }
        PyTuple_SET_ITEM(pair, 0, Py_NewRef(PyTuple_GET_ITEM(entry, 0)));
        PyTuple_SET_ITEM(pair, 1, arg);
        PyList_SET_ITEM(out, t, pair);
    }
    return out;
fail:
    Py_DECREF(out); /* the items not set yet are NULL, which list_dealloc skips */
    return NULL;
}
