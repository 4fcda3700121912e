/* speedups.h: what the files of workbench._speedups share. setup.py compiles each C file below
 * into the one extension; nothing else includes this header.
 *
 *   file        its functions                           the Python it mirrors (under workbench/)
 *   speedups.c  the module (its table, PyInit),         speedups.py (the loader)
 *               the interned names, wb_find_slots
 *   keys.c      fnvhash64, KeyNamer, ZipfianKeys        config/keys.py, core/workload.py's _key_source
 *   choice.c    choose                                  core/workload.py's LaneWorkload.choose
 *   deadline.c  Deadline (and wb_ask_more)              core/runner.py's lane more()
 *   record.c    record, outcomes                        core/workload.py's run_sequence,
 *                                                       bindings/base.py's chain_outcomes
 *   hist.c      tally, summarize                        metrics/histograms.py, metrics/snapshot.py
 *   conn.c      conn_setup, hooks, the receive paths'   protocols/wire.py
 *               common steps
 *   cql.c       cql_setup, pending, cql_receive         protocols/cql.py, cql_connection.py,
 *                                                       cql_session.py; bindings/cassandra.py
 *   hbase.c     hbase_setup, hbase_make, hbase_receive  protocols/hbase_messages.py, hbase_rpc.py;
 *                                                       bindings/hbase_native.py
 *
 * Names: what a file gives the others is declared here, prefixed wb_, and WB_INTERNAL (hidden:
 * not exported from the .so, and called directly, not through the PLT, so the split costs no
 * call's indirection); everything else is static in its file. The few steps every receive path
 * takes per frame (a connection's slots, the clock, a big-endian word) are static inline here,
 * as they were in the one file.
 *
 * Slots: the compiled paths read and write some objects' __slots__ at the offsets their member
 * descriptors give, for objects of exactly the classes the *_setup functions were given. Every
 * setup finds them with wb_find_slots, which refuses a class without one of them, all setups
 * alike: TypeError "<setup>: <module>.<class> has no writable slot '<name>'", and nothing of the
 * classes in use changes.
 */
#ifndef WORKBENCH_SPEEDUPS_H
#define WORKBENCH_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__) && !defined(_WIN32)
#define WB_INTERNAL __attribute__((visibility("hidden")))
#else
#define WB_INTERNAL
#endif

/* -- interned names (speedups.c) ------------------------------------------------------------ */

/* The attribute names more than one file reads; a name one file alone reads is static there. */
typedef struct {
    /* a connection's slots (wire.py's BufferedConnection, SharedConnection; CqlConnection's and
     * RpcConnection's own), in conn.c's order */
    PyObject *n, *in, *view, *receiving, *broken, *inflight, *out, *timer, *loop, *transport,
        *orphans, *stream, *version, *call_id, *sent;
    /* both native clients' chains and lazy rows, and their connections' _malformed */
    PyObject *t0, *items, *more, *answers, *row, *malformed;
} WbNames;

WB_INTERNAL extern WbNames wb_names;

/* One name to intern: where it goes, and its text. */
typedef struct {
    PyObject **at;
    const char *text;
} WbName;

/* Interns each name of the table: 0, or -1 with an exception. */
WB_INTERNAL int wb_intern(const WbName *names, size_t count);

/* -- slots by offset (speedups.c) ------------------------------------------------------------ */

/* One slot a setup reads at its offset: the class, the slot's name, where its offset goes. */
typedef struct {
    PyObject *type, *name;
    Py_ssize_t *offset;
} WbSlot;

/* Every slot's offset, all or none: 0 with each *offset set, or -1 with none set and an exception:
 * TypeError "<setup>: <module>.<class> has no writable slot '<name>'" for the first slot its class
 * lacks (no member descriptor by that name, or one that is not a writable object slot). */
WB_INTERNAL int wb_find_slots(const char *setup, const WbSlot *slots, size_t count);

/* An object of exactly a class with __slots__ keeps each slot at a fixed offset, which the slot's
 * member descriptor gives; C reads and writes the slots there, without PyObject_GetAttr's lookups
 * of the type and the descriptor. wb_slot_get gives a new reference, or NULL with AttributeError
 * for a slot never set, as getattr would. */
static inline PyObject *
wb_slot_get(PyObject *obj, Py_ssize_t offset, PyObject *name)
{
    PyObject *value = *(PyObject **)((char *)obj + offset);
    if (value == NULL) {
        PyErr_SetObject(PyExc_AttributeError, name);
        return NULL;
    }
    return Py_NewRef(value);
}

static inline void
wb_slot_set(PyObject *obj, Py_ssize_t offset, PyObject *value)
{
    PyObject **at = (PyObject **)((char *)obj + offset);
    Py_XSETREF(*at, Py_NewRef(value));
}

/* -- a connection's slots (conn.c) ----------------------------------------------------------- */

enum { WB_CQL, WB_HBASE, WB_KINDS }; /* conn_setup's and hooks's kinds: "cql", "hbase" */
#define WB_CONN_SLOTS 15

/* The slots of the connection class conn_setup was given for each kind; -1: not a slot of that
 * kind's class (its attribute, by PyObject_GetAttr). */
typedef struct {
    PyObject *type;
    Py_ssize_t offset[WB_CONN_SLOTS];
} WbConnLayout;

WB_INTERNAL extern WbConnLayout wb_conn_layouts[WB_KINDS];

/* The slots' names, in the layouts' order (a constant table: each file's copy folds away). */
static PyObject **const wb_conn_slot_names[WB_CONN_SLOTS] = {
    &wb_names.n, &wb_names.in, &wb_names.view, &wb_names.receiving, &wb_names.broken,
    &wb_names.inflight, &wb_names.out, &wb_names.timer, &wb_names.loop, &wb_names.transport,
    &wb_names.orphans, &wb_names.stream, &wb_names.version, &wb_names.call_id, &wb_names.sent,
};

static inline Py_ssize_t
wb_conn_slot(PyObject *conn, PyObject *name)
{
    for (int t = 0; t < WB_KINDS; t++) {
        if ((PyObject *)Py_TYPE(conn) != wb_conn_layouts[t].type)
            continue;
        for (int k = 0; k < WB_CONN_SLOTS; k++)
            if (*wb_conn_slot_names[k] == name)
                return wb_conn_layouts[t].offset[k];
        return -1;
    }
    return -1;
}

/* A connection's attribute: at its slot's offset for a connection of exactly a class conn_setup
 * was given, else by PyObject_GetAttr (any other object, and a name that is not a slot). */
static inline PyObject *
wb_cget(PyObject *conn, PyObject *name)
{
    Py_ssize_t offset = wb_conn_slot(conn, name);
    return offset > 0 ? wb_slot_get(conn, offset, name) : PyObject_GetAttr(conn, name);
}

static inline int
wb_cset(PyObject *conn, PyObject *name, PyObject *value)
{
    Py_ssize_t offset = wb_conn_slot(conn, name);
    if (offset > 0) {
        wb_slot_set(conn, offset, value);
        return 0;
    }
    return PyObject_SetAttr(conn, name, value);
}

/* 1: the attribute is None, 0: it is not, -1: error */
static inline int
wb_attr_is_none(PyObject *obj, PyObject *name)
{
    PyObject *v = wb_cget(obj, name);
    if (v == NULL)
        return -1;
    int none = v == Py_None;
    Py_DECREF(v);
    return none;
}

/* What every receive path shares (wire.py's SharedConnection); each 0, or -1 with an exception. */
WB_INTERNAL int wb_schedule_flush(PyObject *conn, PyObject *out); /* a request's write, scheduled */
WB_INTERNAL int wb_arm_timer(PyObject *conn);                     /* BufferedConnection._arm */
WB_INTERNAL int wb_count_sent(PyObject *conn);                    /* conn.sent += 1 */
/* buffer_updated's start: the buffer (a new reference) and *n, or NULL with an exception */
WB_INTERNAL PyObject *wb_receive_begin(PyObject *conn, Py_ssize_t nbytes, Py_ssize_t *n);
/* buffer_updated's end: the answered bytes leave the buffer, then one write. Steals buf. */
WB_INTERNAL PyObject *wb_receive_end(PyObject *conn, PyObject *buf, Py_ssize_t n, Py_ssize_t at, int failed);

/* -- time and bytes -------------------------------------------------------------------------- */

static inline long long
wb_now_ns(void)
{
    struct timespec ts; /* time.perf_counter_ns() on Linux: CLOCK_MONOTONIC */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline uint32_t
wb_be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* -- each file's part ------------------------------------------------------------------------ */

/* Each file's start: its own names interned (and keys.c's and deadline.c's types readied and added
 * to the module). 0, or -1 with an exception. */
WB_INTERNAL int wb_keys_init(PyObject *module);
WB_INTERNAL int wb_deadline_init(PyObject *module);
WB_INTERNAL int wb_record_init(void);
WB_INTERNAL int wb_conn_init(void);
WB_INTERNAL int wb_cql_init(void);
WB_INTERNAL int wb_hbase_init(void);

/* keys.c */
WB_INTERNAL PyObject *wb_fnvhash64(PyObject *module, PyObject *value);
/* choice.c */
WB_INTERNAL PyObject *wb_choose(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* deadline.c: a lane's more() (None, a Deadline, or any callable): 1 go on, 0 stop, -1 error */
WB_INTERNAL int wb_ask_more(PyObject *more);
/* record.c */
WB_INTERNAL PyObject *wb_record(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
WB_INTERNAL PyObject *wb_outcomes(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* hist.c */
WB_INTERNAL PyObject *wb_tally(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
WB_INTERNAL PyObject *wb_summarize(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* conn.c */
WB_INTERNAL PyObject *wb_conn_setup(PyObject *module, PyObject *args);
WB_INTERNAL PyObject *wb_hooks(PyObject *module, PyObject *args);
/* cql.c */
WB_INTERNAL PyObject *wb_cql_setup(PyObject *module, PyObject *args);
WB_INTERNAL PyObject *wb_pending(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
WB_INTERNAL PyObject *wb_cql_receive(PyObject *conn, Py_ssize_t nbytes); /* CqlConnection.buffer_updated */
/* hbase.c */
WB_INTERNAL PyObject *wb_hbase_setup(PyObject *module, PyObject *args);
WB_INTERNAL PyObject *wb_hbase_make(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
WB_INTERNAL PyObject *wb_hbase_receive(PyObject *conn, Py_ssize_t nbytes); /* RpcConnection.buffer_updated */

#endif /* WORKBENCH_SPEEDUPS_H */
