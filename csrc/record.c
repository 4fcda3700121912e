/* record.c: a sequence's answers as outcomes, and the outcomes into the lane's meters.
 * outcomes(...) is workbench/bindings/base.py's chain_outcomes (the end of both native clients'
 * sequences); record(...) is the recording loop of core/workload.py's LaneWorkload.run_sequence
 * (Meter.record, metrics). tests/unit/test_speedups.py and test_cassandra_native.py compare them
 * with the Python, value for value.
 */
#include "record.h"

/* -- record: a sequence's outcomes into the lane's meters ------------------------------------ *
 *
 * record(steps, outcomes, m_read, m_update, READ, OK) is LaneWorkload.run_sequence's loop where
 * no read is verified: outcome k (status, t0, t1, row) of step k (op, key, arg) is
 * Meter.record(status, t0, t1, 0) of m_read if op == READ, else of m_update. An OK outcome is
 * tallied here as Meter.record does it (ok[(t1 - t0) // 1000] += 1, n_ok += 1); any other goes
 * to the meter's record. Gives how many outcomes were recorded (outcomes may be a prefix). */

static PyObject *s_ok, *s_n_ok, *s_record, *zero; /* zero: 0, the unpaced intended start */

/* d[key] += 1 for an int key and count. 0, or -1 with an error. */
static int
tally_one(PyObject *d, long long key)
{
    PyObject *k = PyLong_FromLongLong(key);
    if (k == NULL)
        return -1;
    PyObject *old = PyDict_GetItemWithError(d, k); /* borrowed */
    long long count = 0;
    if (old == NULL && PyErr_Occurred())
        goto fail;
    if (old != NULL) {
        count = PyLong_AsLongLong(old);
        if (count == -1 && PyErr_Occurred())
            goto fail;
    }
    PyObject *v = PyLong_FromLongLong(count + 1);
    if (v == NULL)
        goto fail;
    int r = PyDict_SetItem(d, k, v);
    Py_DECREF(v);
    Py_DECREF(k);
    return r;
fail:
    Py_DECREF(k);
    return -1;
}

/* Python's floor division by 1000, for a difference of perf_counter_ns values. */
static inline long long
floor_us(long long ns)
{
    return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
}

PyObject *
wb_record(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "record(steps, outcomes, m_read, m_update, READ, OK)");
        return NULL;
    }
    PyObject *READ = args[4], *OK = args[5];
    PyObject *meters[2] = {args[2], args[3]}, *oks[2] = {NULL, NULL};
    long long n_ok[2] = {0, 0};
    PyObject *steps = PySequence_Fast(args[0], "record: steps must be a sequence");
    PyObject *outcomes = steps ? PySequence_Fast(args[1], "record: outcomes must be a sequence") : NULL;
    if (outcomes == NULL) {
        Py_XDECREF(steps);
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(outcomes), done = 0;
    if (PySequence_Fast_GET_SIZE(steps) < count)
        count = PySequence_Fast_GET_SIZE(steps);
    for (int m = 0; m < 2; m++) {
        oks[m] = PyObject_GetAttr(meters[m], s_ok);
        if (oks[m] == NULL)
            goto finish;
        if (!PyDict_CheckExact(oks[m])) {
            PyErr_SetString(PyExc_TypeError, "record: a meter's ok must be a dict");
            goto finish;
        }
    }
    for (; done < count; done++) {
        PyObject *step = PySequence_Fast_GET_ITEM(steps, done), *outcome = PySequence_Fast_GET_ITEM(outcomes, done);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) < 1 || !PyTuple_Check(outcome)
            || PyTuple_GET_SIZE(outcome) != 4) {
            PyErr_SetString(PyExc_TypeError, "record: a step is (op, key, arg), an outcome (status, t0, t1, row)");
            goto finish;
        }
        int is_read = PyObject_RichCompareBool(PyTuple_GET_ITEM(step, 0), READ, Py_EQ);
        if (is_read < 0)
            goto finish;
        int m = is_read ? 0 : 1;
        PyObject *status = PyTuple_GET_ITEM(outcome, 0), *t0 = PyTuple_GET_ITEM(outcome, 1);
        PyObject *t1 = PyTuple_GET_ITEM(outcome, 2);
        if (status != OK) {
            PyObject *call_args[5] = {meters[m], status, t0, t1, zero};
            PyObject *r = PyObject_VectorcallMethod(s_record, call_args, 5 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
            if (r == NULL)
                goto finish;
            Py_DECREF(r);
            continue;
        }
        long long a = PyLong_AsLongLong(t0), b = a == -1 && PyErr_Occurred() ? 0 : PyLong_AsLongLong(t1);
        if (PyErr_Occurred())
            goto finish;
        if (tally_one(oks[m], floor_us(b - a)) < 0)
            goto finish;
        n_ok[m]++;
    }
finish:;
    /* what was tallied is counted, even after an error */
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    int failed = exc_type != NULL;
    for (int m = 0; m < 2; m++) {
        if (n_ok[m] == 0)
            continue;
        PyObject *old = PyObject_GetAttr(meters[m], s_n_ok);
        PyObject *add = old ? PyLong_FromLongLong(n_ok[m]) : NULL;
        PyObject *sum = add ? PyNumber_Add(old, add) : NULL;
        if (sum == NULL || PyObject_SetAttr(meters[m], s_n_ok, sum) < 0) {
            if (!failed)
                PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
            else
                PyErr_Clear();
            failed = 1;
        }
        Py_XDECREF(old);
        Py_XDECREF(add);
        Py_XDECREF(sum);
    }
    Py_XDECREF(oks[0]);
    Py_XDECREF(oks[1]);
    Py_DECREF(steps);
    Py_DECREF(outcomes);
    if (failed) {
        PyErr_Restore(exc_type, exc_value, exc_tb);
        return NULL;
    }
    return PyLong_FromSsize_t(done);
}

/* -- outcomes: a chain's answers as a sequence's outcomes --------------------------------------- *
 *
 * outcomes(steps, answers, READ, OK, NOT_FOUND, failed, row_of, without_nulls) is
 * workbench/bindings/base.py's chain_outcomes, the end of the native clients' sequences: answer
 * k (ok, value, t0, t1) of step k (op, key, arg) becomes (failed(value), t0, t1, None) if not ok;
 * (OK, t0, t1, None) for an update; for a read, (NOT_FOUND, t0, t1, None) when it has no row,
 * else (OK, t0, t1, row), a dict row through without_nulls (unless that is None). The row: the
 * value (row_of None), the first of a list of rows ("first": None or an empty list, none), or
 * row_of(value). Answers may be a prefix of the steps. */

static PyObject *s_first; /* "first": base.FIRST_ROW */

PyObject *
wb_outcomes(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "outcomes(steps, answers, READ, OK, NOT_FOUND, failed, row_of, without_nulls)");
        return NULL;
    }
    PyObject *READ = args[2], *OK = args[3], *NOT_FOUND = args[4], *failed = args[5], *row_of = args[6];
    PyObject *without_nulls = args[7];
    int first = PyUnicode_Check(row_of) ? PyUnicode_Compare(row_of, s_first) == 0 : 0;
    if (PyErr_Occurred())
        return NULL;
    if (!first && row_of != Py_None && !PyCallable_Check(row_of)) {
        PyErr_SetString(PyExc_TypeError, "outcomes: row_of is None, \"first\" or a callable");
        return NULL;
    }
    PyObject *steps = PySequence_Fast(args[0], "outcomes: steps must be a sequence");
    PyObject *answers = steps ? PySequence_Fast(args[1], "outcomes: answers must be a sequence") : NULL;
    if (answers == NULL) {
        Py_XDECREF(steps);
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(answers);
    if (PySequence_Fast_GET_SIZE(steps) < count)
        count = PySequence_Fast_GET_SIZE(steps);
    PyObject *out = PyList_New(count);
    if (out == NULL)
        goto fail;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *step = PySequence_Fast_GET_ITEM(steps, k), *answer = PySequence_Fast_GET_ITEM(answers, k);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) < 1 || !PyTuple_Check(answer)
            || PyTuple_GET_SIZE(answer) != 4) {
            PyErr_SetString(PyExc_TypeError, "outcomes: a step is (op, key, arg), an answer (ok, value, t0, t1)");
            goto fail;
        }
        PyObject *value = PyTuple_GET_ITEM(answer, 1), *t0 = PyTuple_GET_ITEM(answer, 2);
        PyObject *t1 = PyTuple_GET_ITEM(answer, 3);
        int ok = PyObject_IsTrue(PyTuple_GET_ITEM(answer, 0));
        int is_read = ok > 0 ? PyObject_RichCompareBool(PyTuple_GET_ITEM(step, 0), READ, Py_EQ) : 0;
        if (ok < 0 || is_read < 0)
            goto fail;
        PyObject *status, *row = NULL;
        if (!ok) {
            status = PyObject_CallOneArg(failed, value);
            if (status == NULL)
                goto fail;
        } else if (!is_read) {
            status = Py_NewRef(OK);
        } else {
            if (row_of == Py_None) {
                row = Py_NewRef(value);
            } else if (first) {
                if (value == Py_None || (PyList_CheckExact(value) && PyList_GET_SIZE(value) == 0)) {
                    row = Py_NewRef(Py_None);
                } else if (PyList_CheckExact(value)) {
                    row = Py_NewRef(PyList_GET_ITEM(value, 0));
                } else { /* value[0] if value else None, for another sequence */
                    int truth = PyObject_IsTrue(value);
                    if (truth < 0)
                        goto fail;
                    row = truth ? PySequence_GetItem(value, 0) : Py_NewRef(Py_None);
                    if (row == NULL)
                        goto fail;
                }
            } else if ((row = PyObject_CallOneArg(row_of, value)) == NULL) {
                goto fail;
            }
            if (row == Py_None) {
                status = Py_NewRef(NOT_FOUND);
            } else {
                status = Py_NewRef(OK);
                if (without_nulls != Py_None && PyDict_Check(row)) {
                    PyObject *kept = PyObject_CallOneArg(without_nulls, row);
                    Py_SETREF(row, kept);
                    if (row == NULL) {
                        Py_DECREF(status);
                        goto fail;
                    }
                }
            }
            if (status == NOT_FOUND)
                Py_CLEAR(row);
        }
        PyObject *outcome = PyTuple_Pack(4, status, t0, t1, row ? row : Py_None);
        Py_DECREF(status);
        Py_XDECREF(row);
        if (outcome == NULL)
            goto fail;
        PyList_SET_ITEM(out, k, outcome);
    }
    Py_DECREF(steps);
    Py_DECREF(answers);
    return out;
fail:
    Py_DECREF(steps);
    Py_DECREF(answers);
    Py_XDECREF(out);
    return NULL;
}

int
wb_record_init(void)
{
    const WbName names[] = {{&s_first, "first"}, {&s_ok, "ok"}, {&s_n_ok, "n_ok"}, {&s_record, "record"}};
    if (wb_intern(names, sizeof(names) / sizeof(names[0])) < 0)
        return -1;
    zero = PyLong_FromLong(0);
    return zero == NULL ? -1 : 0;
}
