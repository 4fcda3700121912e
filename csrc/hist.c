/* hist.c: a tick's histograms. tally(...) is the loop of workbench/metrics/histograms.py's
 * from_counts, summarize(...) the walk of metrics/snapshot.py's summarize, value for value
 * (tests/unit/test_histograms.py runs both).
 *
 * Every tick makes an HdrHistogram of each operation's exact latency tallies and summarises it
 * (mean, percentiles): thousands of distinct values a second, and 23,552 buckets to walk per
 * histogram. Both loops here are the Python's (from_counts, summarize), value for value.
 */
#include "hist.h"

/* The 8-byte counts of an hdrh histogram (h.counts, a ctypes array), or -1 with an exception. */
static int
counts_buffer(PyObject *obj, Py_buffer *view, int writable)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_ND | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (view->itemsize != 8 || view->len % 8) {
        PyErr_Format(PyExc_TypeError, "histogram counts of %zd-byte words: 8 expected", view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* tally(buckets, counts, mask, unit, shift, base, highest) -> (total, min, max): from_counts's
 * loop. Each value of the dict counts (latency -> how many), clamped to 0..highest, adds its
 * count to its bucket: bucket = bit_length(value | mask) - unit - shift - 1, index =
 * ((bucket + 1) << shift) + (value >> (bucket + unit)) - base. */
PyObject *
wb_tally(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    long long p[5];
    if (nargs != 7 || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "tally(buckets, counts: dict, mask, unit, shift, base, highest)");
        return NULL;
    }
    for (int i = 0; i < 5; i++) {
        p[i] = PyLong_AsLongLong(args[2 + i]);
        if (p[i] == -1 && PyErr_Occurred())
            return NULL;
    }
    if (p[0] <= 0 || p[1] < 0 || p[1] > 62 || p[2] < 0 || p[2] > 62 || p[3] < 0 || p[4] < 0) {
        PyErr_SetString(PyExc_ValueError, "tally: a histogram's layout out of range");
        return NULL;
    }
    uint64_t mask = (uint64_t)p[0], highest = (uint64_t)p[4];
    int unit = (int)p[1], shift = (int)p[2];
    long long base = p[3];
    Py_buffer view;
    if (counts_buffer(args[0], &view, 1) < 0)
        return NULL;
    uint64_t *buckets = (uint64_t *)view.buf;
    Py_ssize_t size = view.len / 8, pos = 0;
    PyObject *key, *value;
    uint64_t lo = UINT64_MAX, hi = 0;
    unsigned __int128 total = 0;
    while (PyDict_Next(args[1], &pos, &key, &value)) {
        long long v = PyLong_AsLongLong(key);
        if (v == -1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                goto fail;
            PyErr_Clear(); /* beyond a long long either way: clamped, as below */
            v = _PyLong_Sign(key) < 0 ? 0 : LLONG_MAX;
        }
        uint64_t u = v < 0 ? 0 : (uint64_t)v > highest ? highest : (uint64_t)v;
        long long n = PyLong_AsLongLong(value);
        if (n == -1 && PyErr_Occurred())
            goto fail;
        int bucket = 64 - __builtin_clzll(u | mask) - unit - shift - 1;
        long long index = ((long long)(bucket + 1) << shift) + (long long)(u >> (bucket + unit)) - base;
        if (index < 0 || index >= size) {
            PyErr_Format(PyExc_IndexError, "latency %llu us is outside the histogram's %zd buckets",
                         (unsigned long long)u, size);
            goto fail;
        }
        buckets[index] += (uint64_t)n;
        total += (unsigned __int128)(__int128)n;
        if (u < lo)
            lo = u;
        if (u > hi)
            hi = u;
    }
    PyBuffer_Release(&view);
    if (pos == 0)
        lo = 0;
    unsigned char bytes[16];
    for (int i = 0; i < 16; i++)
        bytes[i] = (unsigned char)(total >> (8 * i));
    PyObject *sum = _PyLong_FromByteArray(bytes, 16, 1, 1);
    if (sum == NULL)
        return NULL;
    return Py_BuildValue("NKK", sum, (unsigned long long)lo, (unsigned long long)hi);
fail:
    PyBuffer_Release(&view);
    return NULL;
}

/* summarize(buckets, shift, half, unit, wanted, targets) -> (weighted, values): summarize's walk
 * over the non-empty buckets. weighted is the sum of count * (bucket value + half its size),
 * exact; values[k] is the highest value equivalent to the bucket where the running count first
 * reaches targets[k] (its lowest when wanted[k] is 0), 0 where none does. targets ascending. */
PyObject *
wb_summarize(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyTuple_Check(args[4]) || !PyTuple_Check(args[5])
        || PyTuple_GET_SIZE(args[4]) != PyTuple_GET_SIZE(args[5])) {
        PyErr_SetString(PyExc_TypeError, "summarize(buckets, shift, half, unit, wanted: tuple, targets: tuple)");
        return NULL;
    }
    long long shift = PyLong_AsLongLong(args[1]), half = PyLong_AsLongLong(args[2]), unit = PyLong_AsLongLong(args[3]);
    if (PyErr_Occurred())
        return NULL;
    if (shift < 0 || shift > 62 || half <= 0 || unit < 0 || unit > 62) {
        PyErr_SetString(PyExc_ValueError, "summarize: a histogram's layout out of range");
        return NULL;
    }
    Py_ssize_t m = PyTuple_GET_SIZE(args[5]);
    /* per percentile: its target count, whether it is the 0th, the value found */
    long long *targets = PyMem_New(long long, m + 1);
    int *lowest = PyMem_New(int, m + 1);
    unsigned long long *found = PyMem_New(unsigned long long, m + 1);
    PyObject *result = NULL;
    Py_buffer view = {0};
    if (targets == NULL || lowest == NULL || found == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        targets[j] = PyLong_AsLongLong(PyTuple_GET_ITEM(args[5], j));
        double w = PyFloat_AsDouble(PyTuple_GET_ITEM(args[4], j));
        if (PyErr_Occurred())
            goto done;
        lowest[j] = w == 0.0;
    }
    if (counts_buffer(args[0], &view, 0) < 0)
        goto done;
    const uint64_t *counts = (const uint64_t *)view.buf;
    Py_ssize_t size = view.len / 8, k = 0;
    unsigned __int128 weighted = 0, running = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        uint64_t c = counts[i];
        if (!c)
            continue;
        long long bucket = (i >> shift) - 1, sub = (i & (half - 1)) + half;
        if (bucket < 0) {
            sub -= half;
            bucket = 0;
        }
        if (bucket + unit > 63) {
            PyErr_SetString(PyExc_OverflowError, "summarize: a bucket's value beyond 64 bits");
            goto done;
        }
        unsigned __int128 value = (unsigned __int128)(uint64_t)sub << (bucket + unit);
        unsigned __int128 width = (unsigned __int128)1 << (bucket + unit);
        weighted += (unsigned __int128)c * (value + (width >> 1));
        running += c;
        while (k < m && (targets[k] < 0 || running >= (unsigned __int128)targets[k])) {
            found[k] = (unsigned long long)(lowest[k] ? value : value + width - 1);
            k++;
        }
    }
    unsigned char bytes[16];
    for (int i = 0; i < 16; i++)
        bytes[i] = (unsigned char)(weighted >> (8 * i));
    PyObject *sum = _PyLong_FromByteArray(bytes, 16, 1, 0);
    PyObject *values = PyTuple_New(m);
    if (sum == NULL || values == NULL) {
        Py_XDECREF(sum);
        Py_XDECREF(values);
        goto done;
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *v = j < k ? PyLong_FromUnsignedLongLong(found[j]) : PyLong_FromLong(0);
        if (v == NULL) {
            Py_DECREF(sum);
            Py_DECREF(values);
            goto done;
        }
        PyTuple_SET_ITEM(values, j, v);
    }
    result = Py_BuildValue("NN", sum, values);
done:
    if (view.obj != NULL)
        PyBuffer_Release(&view);
    PyMem_Free(targets);
    PyMem_Free(lowest);
    PyMem_Free(found);
    return result;
}
