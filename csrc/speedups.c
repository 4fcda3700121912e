/* workbench._speedups: a lane's hot path, compiled: the key choice, the lane's more(), a tick's
 * histograms, a sequence's statements, outcomes and recording, and the usual answers of the
 * native CQL and HBase clients with their next requests.
 *
 * An optional accelerator: setup.py builds it where a C compiler and Python's headers exist,
 * and workbench/core/speedups.py falls back to the same code in Python where it does not (or
 * with WORKBENCH_SPEEDUPS=off). Both give the very same keys from the same random stream and
 * the same answers and bytes on the wire (tests/unit/test_speedups.py, test_cassandra_native.py
 * and test_hbase_native.py compare them), so a run's results do not depend on which one it
 * used; the run records which (environment.speedups).
 *
 *   choose(ctx, n)    LaneWorkload.choose: a lane's next n transactions, draw for draw
 *   tally(...), summarize(...)
 *                     a tick's histograms: from_counts's loop and summarize's walk
 *                     (workbench/metrics/histograms.py, snapshot.py), value for value
 *   fnvhash64(n)      YCSB's Utils.fnvhash64 for a non-negative long (workbench/core/keys.py)
 *   KeyNamer(zeropadding, ordered)(n)
 *                     CoreWorkload.buildKeyName: "user" + zero padding + hashed or plain n
 *   ZipfianKeys(...)()
 *                     the next key name of YCSB's default request distribution (scrambled
 *                     zipfian): LaneWorkload._key_source's closure, draw for draw
 *   pending(...)      CassandraBinding._statements where every statement is prepared
 *   outcomes(...)     bindings/base.py's chain_outcomes: a chain's answers as outcomes
 *   record(...)       LaneWorkload.run_sequence's recording into the meters
 *   hooks(conn, kind) a connection's get_buffer, buffer_updated and _flush as builtins
 *   hooks(conn, "cql" / "hbase")'s buffer_updated (cql_receive, hbase_receive), with
 *   cql_setup, hbase_setup, conn_setup
 *                     the native clients' usual answers and next requests, reading the
 *                     chains', rows' and connections' slots at their offsets
 *
 * Floating point: the zipfian draw is ((eta * u) - eta) + 1 raised to alpha, as Python
 * evaluates it; setup.py compiles with -ffp-contract=off so that no multiply-add is fused,
 * and pow() is the C library's, which Python's float ** calls too.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define FNV_OFFSET 0xCBF29CE484222325ULL
#define FNV_PRIME 1099511628211ULL

/* FNV-1a over the 8 bytes of v, least significant first; then Java's Math.abs((long) h). */
static inline uint64_t
fnv(uint64_t v)
{
    uint64_t h = FNV_OFFSET;
    for (int i = 0; i < 8; i++) {
        h ^= v & 0xFF;
        h *= FNV_PRIME;
        v >>= 8;
    }
    if (h >> 63)
        h = (uint64_t)0 - h; /* Long.MIN_VALUE stays 2^63, as in keys.py */
    return h;
}

/* A non-negative Python int below 2^64 (key numbers and draws), or -1 with an exception set. */
static int
as_u64(PyObject *value, uint64_t *out)
{
    if (!PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "a key number must be an int, not %.100s", Py_TYPE(value)->tp_name);
        return -1;
    }
    unsigned long long n = PyLong_AsUnsignedLongLong(value);
    if (n == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "a key number must be between 0 and 2**64 - 1");
        }
        return -1;
    }
    *out = (uint64_t)n;
    return 0;
}

static PyObject *
speedups_fnvhash64(PyObject *module, PyObject *value)
{
    uint64_t n;
    if (as_u64(value, &n) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(fnv(n));
}

/* -- KeyNamer ------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    Py_ssize_t zeropadding;
    int ordered;
} KeyNamer;

static PyTypeObject KeyNamerType;

static PyObject *
name_of(KeyNamer *self, uint64_t keynum)
{
    uint64_t n = self->ordered ? keynum : fnv(keynum);
    char digits[24];
    Py_ssize_t len = 0;
    do {
        digits[len++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    Py_ssize_t fill = self->zeropadding > len ? self->zeropadding - len : 0;
    PyObject *name = PyUnicode_New(4 + fill + len, 127);
    if (name == NULL)
        return NULL;
    Py_UCS1 *at = PyUnicode_1BYTE_DATA(name);
    memcpy(at, "user", 4);
    at += 4;
    memset(at, '0', (size_t)fill);
    at += fill;
    while (len)
        *at++ = (Py_UCS1)digits[--len];
    return name;
}

static PyObject *
KeyNamer_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"zeropadding", "ordered", NULL};
    Py_ssize_t zeropadding;
    int ordered;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "np:KeyNamer", names, &zeropadding, &ordered))
        return NULL;
    KeyNamer *self = (KeyNamer *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->zeropadding = zeropadding;
    self->ordered = ordered;
    return (PyObject *)self;
}

static PyObject *
KeyNamer_call(KeyNamer *self, PyObject *args, PyObject *kwds)
{
    PyObject *value;
    if (kwds != NULL && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "KeyNamer takes the key number alone");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "KeyNamer", 1, 1, &value))
        return NULL;
    uint64_t n;
    if (as_u64(value, &n) < 0)
        return NULL;
    return name_of(self, n);
}

static PyTypeObject KeyNamerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "workbench._speedups.KeyNamer",
    .tp_doc = PyDoc_STR("KeyNamer(zeropadding, ordered)(keynum): YCSB's key name of keynum."),
    .tp_basicsize = sizeof(KeyNamer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = KeyNamer_new,
    .tp_call = (ternaryfunc)KeyNamer_call,
};

/* -- ZipfianKeys --------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *random;   /* the lane's Random.random */
    double zetan, half_pow, eta, alpha, items;
    uint64_t lo, itemcount, record_total;
    PyObject *inserts;  /* the worker's AcknowledgedCounter: draws above its .limit are drawn again */
    PyObject *to_real;  /* None, or the worker's virtual -> real key mapping (several workers) */
    PyObject *namer;    /* a KeyNamer, or any callable giving a key number's name */
} ZipfianKeys;

static PyObject *limit_name; /* "limit", interned */

static int
ZipfianKeys_traverse(ZipfianKeys *self, visitproc visit, void *arg)
{
    Py_VISIT(self->random);
    Py_VISIT(self->inserts);
    Py_VISIT(self->to_real);
    Py_VISIT(self->namer);
    return 0;
}

static int
ZipfianKeys_clear(ZipfianKeys *self)
{
    Py_CLEAR(self->random);
    Py_CLEAR(self->inserts);
    Py_CLEAR(self->to_real);
    Py_CLEAR(self->namer);
    return 0;
}

static void
ZipfianKeys_dealloc(ZipfianKeys *self)
{
    PyObject_GC_UnTrack(self);
    ZipfianKeys_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
ZipfianKeys_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"random", "zetan", "half_pow", "eta", "alpha", "items", "lo", "itemcount",
                            "inserts", "record_total", "to_real", "namer", NULL};
    PyObject *random, *items, *lo, *itemcount, *inserts, *record_total, *to_real, *namer;
    double zetan, half_pow, eta, alpha;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OddddOOOOOOO:ZipfianKeys", names, &random, &zetan,
                                     &half_pow, &eta, &alpha, &items, &lo, &itemcount, &inserts,
                                     &record_total, &to_real, &namer))
        return NULL;
    if (!PyCallable_Check(random) || !PyCallable_Check(namer) || (to_real != Py_None && !PyCallable_Check(to_real))) {
        PyErr_SetString(PyExc_TypeError, "random, namer and to_real (or None) must be callables");
        return NULL;
    }
    double items_d = PyFloat_AsDouble(items); /* Python's items * float converts items so */
    if (items_d == -1.0 && PyErr_Occurred())
        return NULL;
    uint64_t lo_n, count_n, total_n;
    if (as_u64(lo, &lo_n) < 0 || as_u64(itemcount, &count_n) < 0 || as_u64(record_total, &total_n) < 0)
        return NULL;
    if (count_n == 0) {
        PyErr_SetString(PyExc_ValueError, "itemcount must be positive");
        return NULL;
    }
    ZipfianKeys *self = (ZipfianKeys *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->random = Py_NewRef(random);
    self->zetan = zetan;
    self->half_pow = half_pow;
    self->eta = eta;
    self->alpha = alpha;
    self->items = items_d;
    self->lo = lo_n;
    self->itemcount = count_n;
    self->record_total = total_n;
    self->inserts = Py_NewRef(inserts);
    self->to_real = to_real == Py_None ? NULL : Py_NewRef(to_real);
    self->namer = Py_NewRef(namer);
    return (PyObject *)self;
}

static PyObject *
ZipfianKeys_call(ZipfianKeys *self, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "ZipfianKeys() takes no arguments");
        return NULL;
    }
    uint64_t k;
    for (unsigned long tries = 1;; tries++) {
        PyObject *r = PyObject_CallNoArgs(self->random);
        if (r == NULL)
            return NULL;
        double u = PyFloat_AsDouble(r);
        Py_DECREF(r);
        if (u == -1.0 && PyErr_Occurred())
            return NULL;
        double uz = u * self->zetan;
        uint64_t raw;
        if (uz < 1.0)
            raw = 0;
        else if (uz < self->half_pow)
            raw = 1;
        else
            raw = (uint64_t)(self->items * pow(self->eta * u - self->eta + 1, self->alpha));
        k = self->lo + fnv(raw) % self->itemcount;
        PyObject *limit = PyObject_GetAttr(self->inserts, limit_name);
        if (limit == NULL)
            return NULL;
        long long bound = PyLong_AsLongLong(limit);
        Py_DECREF(limit);
        if (bound == -1 && PyErr_Occurred())
            return NULL;
        if (bound >= 0 && k <= (uint64_t)bound)
            break;
        if ((tries & 0xFFFF) == 0 && PyErr_CheckSignals() < 0) /* a key space nothing is inserted into */
            return NULL;
    }
    if (self->to_real != NULL && k >= self->record_total) {
        PyObject *virtual = PyLong_FromUnsignedLongLong(k);
        if (virtual == NULL)
            return NULL;
        PyObject *real = PyObject_CallOneArg(self->to_real, virtual);
        Py_DECREF(virtual);
        if (real == NULL)
            return NULL;
        int bad = as_u64(real, &k);
        Py_DECREF(real);
        if (bad < 0)
            return NULL;
    }
    if (Py_IS_TYPE(self->namer, &KeyNamerType))
        return name_of((KeyNamer *)self->namer, k);
    PyObject *keynum = PyLong_FromUnsignedLongLong(k);
    if (keynum == NULL)
        return NULL;
    PyObject *name = PyObject_CallOneArg(self->namer, keynum);
    Py_DECREF(keynum);
    return name;
}

static PyTypeObject ZipfianKeysType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "workbench._speedups.ZipfianKeys",
    .tp_doc = PyDoc_STR("ZipfianKeys(random, zetan, half_pow, eta, alpha, items, lo, itemcount, inserts, "
                        "record_total, to_real, namer)(): the next key name of a scrambled zipfian."),
    .tp_basicsize = sizeof(ZipfianKeys),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = ZipfianKeys_new,
    .tp_call = (ternaryfunc)ZipfianKeys_call,
    .tp_traverse = (traverseproc)ZipfianKeys_traverse,
    .tp_clear = (inquiry)ZipfianKeys_clear,
    .tp_dealloc = (destructor)ZipfianKeys_dealloc,
};


/* -- Deadline ------------------------------------------------------------------------------ */

/* A lane's more(): may a sequence go on? Not while its engine is halted (paused, stopping), and
 * not past the deadline (perf_counter_ns) the lane sets before each sequence. The closure in
 * WorkerEngine._lane, compiled; cql_receive reads it without a call. */
typedef struct {
    PyObject_HEAD
    PyObject *engine;
    long long deadline;
} Deadline;

static PyObject *s_halt;

static int
Deadline_traverse(Deadline *self, visitproc visit, void *arg)
{
    Py_VISIT(self->engine);
    return 0;
}

static int
Deadline_clear(Deadline *self)
{
    Py_CLEAR(self->engine);
    return 0;
}

static void
Deadline_dealloc(Deadline *self)
{
    PyObject_GC_UnTrack(self);
    Deadline_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Deadline_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"engine", NULL};
    PyObject *engine;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Deadline", names, &engine))
        return NULL;
    Deadline *self = (Deadline *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->engine = Py_NewRef(engine);
    self->deadline = 0;
    return (PyObject *)self;
}

static inline long long now_ns(void);

/* 1 go on, 0 stop, -1 error */
static int
deadline_allows(Deadline *self)
{
    PyObject *halt = PyObject_GetAttr(self->engine, s_halt);
    if (halt == NULL)
        return -1;
    int halted = PyObject_IsTrue(halt);
    Py_DECREF(halt);
    if (halted < 0)
        return -1;
    return !halted && now_ns() < self->deadline;
}

static PyObject *
Deadline_call(Deadline *self, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "Deadline() takes no arguments");
        return NULL;
    }
    int allows = deadline_allows(self);
    if (allows < 0)
        return NULL;
    return PyBool_FromLong(allows);
}

static PyMemberDef Deadline_members[] = {
    {"deadline", T_LONGLONG, offsetof(Deadline, deadline), 0, "perf_counter_ns after which no step starts"},
    {NULL},
};

static PyTypeObject DeadlineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "workbench._speedups.Deadline",
    .tp_doc = PyDoc_STR("Deadline(engine)(): not engine._halt and perf_counter_ns() < .deadline"),
    .tp_basicsize = sizeof(Deadline),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = Deadline_new,
    .tp_call = (ternaryfunc)Deadline_call,
    .tp_traverse = (traverseproc)Deadline_traverse,
    .tp_clear = (inquiry)Deadline_clear,
    .tp_dealloc = (destructor)Deadline_dealloc,
    .tp_members = Deadline_members,
};

/* -- the native CQL client's answers (workbench/bindings/cassandra_native.py) ------------------- *
 *
 * cql_receive(conn, nbytes) is CqlConnection.buffer_updated: it answers every whole frame in the
 * connection's buffer, keeps what is left of a frame for the next read, and writes the requests
 * the answers' callbacks made in one go. Most frames are the answer to a chain's step (a read's
 * one row of the usual layout, or an update's Void), and for those it does in C what
 * CqlConnection._answer, _Chain.answered, _Chain.go and CqlConnection.send do: record the answer,
 * ask the lane whether to go on, and send the next step. Every other frame (an error, a set-up
 * answer, an event, rows of another shape, flags) and every step that does not go as usual (a
 * value its statement cannot take, no node, no free stream id) goes to that Python code, which
 * stays the reference (tests/unit/test_cassandra_native.py runs both). */

static PyObject *chain_type, *lazyrow_type;  /* _Chain and LazyRow, given by cql_setup */
static PyObject *route_function;              /* NativeSession._route */
static PyObject *s_view, *s_transport, *s_call_id; /* (the HBase and hooks sections' too) */
static PyObject *s_sent; /* a connection's requests sent: the run's per-node figures */
static PyObject *s_n, *s_in, *s_receiving, *s_broken, *s_inflight, *s_out, *s_flush,
    *s_stmt, *s_columns, *s_layout, *s_answers, *s_retried, *s_t0, *s_go, *s_items, *s_more, *s_done,
    *s_set_result, *s_body, *s_route, *s_orphans, *s_stream, *s_loop, *s_call_soon, *s_timer, *s_arm,
    *s_version, *s_send, *s_size, *s_done_method, *s_malformed, *s_failed_answer, *s_text_head, *s_arity, *s_conns,
    *s_lr_columns, *s_lr_layout, *s_lr_buf, *s_lr_i, *s_lr_row;

#define CQL_RESULT 0x08
#define CQL_EXECUTE 0x0A
#define CQL_ROWS 2
#define CQL_NO_METADATA 0x0004
#define CQL_MAX_FRAME (256 * 1024 * 1024) /* cassandra_native.MAX_FRAME */

static inline long long
now_ns(void)
{
    struct timespec ts; /* time.perf_counter_ns() on Linux: CLOCK_MONOTONIC */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline uint32_t
be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Slots by offset. An object of exactly a class with __slots__ keeps each slot at a fixed
 * offset, which the slot's member descriptor gives; for the classes the setup functions are
 * given (and objects checked to be of exactly that class), C reads and writes the slots there,
 * without PyObject_GetAttr's lookups of the type and the descriptor. slot_get gives a new
 * reference, or NULL with AttributeError for a slot never set, as getattr would. */
static int
slot_offset(PyObject *type, PyObject *name, Py_ssize_t *offset)
{
    PyObject *descr = PyObject_GetAttr(type, name);
    if (descr == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        descr = Py_NewRef(Py_None);
    }
    int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type)
             && ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX
             && !(((PyMemberDescrObject *)descr)->d_member->flags & READONLY);
    if (ok)
        *offset = ((PyMemberDescrObject *)descr)->d_member->offset;
    Py_DECREF(descr);
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%R is not a writable slot of %R", name, type);
        return -1;
    }
    return 0;
}

static inline PyObject *
slot_get(PyObject *obj, Py_ssize_t offset, PyObject *name)
{
    PyObject *value = *(PyObject **)((char *)obj + offset);
    if (value == NULL) {
        PyErr_SetObject(PyExc_AttributeError, name);
        return NULL;
    }
    return Py_NewRef(value);
}

static inline void
slot_set(PyObject *obj, Py_ssize_t offset, PyObject *value)
{
    PyObject **at = (PyObject **)((char *)obj + offset);
    Py_XSETREF(*at, Py_NewRef(value));
}

/* _Chain's slots (its own and _Call's) and LazyRow's, found by cql_setup */
static Py_ssize_t ch_t0, ch_stmt, ch_body, ch_retried, ch_items, ch_more, ch_answers, ch_done, ch_route;
static Py_ssize_t lr_columns, lr_layout, lr_buf, lr_i, lr_row;

static PyObject *
cql_setup(PyObject *module, PyObject *args)
{
    PyObject *chain, *lazyrow, *route;
    if (!PyArg_ParseTuple(args, "OOO:cql_setup", &chain, &lazyrow, &route))
        return NULL;
    if (!PyType_Check(lazyrow) || !PyType_Check(chain)) {
        PyErr_SetString(PyExc_TypeError, "cql_setup: _Chain and LazyRow must be classes");
        return NULL;
    }
    struct { Py_ssize_t *offset; PyObject *type, *name; } slots[] = {
        {&ch_t0, chain, s_t0}, {&ch_stmt, chain, s_stmt}, {&ch_body, chain, s_body},
        {&ch_retried, chain, s_retried}, {&ch_items, chain, s_items}, {&ch_more, chain, s_more},
        {&ch_answers, chain, s_answers}, {&ch_done, chain, s_done}, {&ch_route, chain, s_route},
        {&lr_columns, lazyrow, s_lr_columns}, {&lr_layout, lazyrow, s_lr_layout}, {&lr_buf, lazyrow, s_lr_buf},
        {&lr_i, lazyrow, s_lr_i}, {&lr_row, lazyrow, s_lr_row},
    };
    enum { NSLOTS = sizeof(slots) / sizeof(slots[0]) };
    Py_ssize_t found[NSLOTS]; /* all or none: the classes in use keep theirs if one is missing */
    for (size_t k = 0; k < NSLOTS; k++)
        if (slot_offset(slots[k].type, slots[k].name, &found[k]) < 0)
            return NULL;
    for (size_t k = 0; k < NSLOTS; k++)
        *slots[k].offset = found[k];
    Py_XSETREF(chain_type, Py_NewRef(chain));
    Py_XSETREF(lazyrow_type, Py_NewRef(lazyrow));
    Py_XSETREF(route_function, Py_NewRef(route));
    Py_RETURN_NONE;
}

/* A connection's slots (wire.py's BufferedConnection and SharedConnection, and CqlConnection's
 * and RpcConnection's own), at their offsets for a connection of exactly a class conn_setup was
 * given; any other object's attributes, and a name that is not a slot, by PyObject_GetAttr. */
#define CONN_SLOTS 15
static PyObject **conn_slot_names[CONN_SLOTS] = {
    &s_n, &s_in, &s_view, &s_receiving, &s_broken, &s_inflight, &s_out, &s_timer, &s_loop, &s_transport,
    &s_orphans, &s_stream, &s_version, &s_call_id, &s_sent,
};
static struct { PyObject *type; Py_ssize_t offset[CONN_SLOTS]; } conn_layouts[2]; /* CQL, HBase */

static inline Py_ssize_t
conn_slot(PyObject *conn, PyObject *name)
{
    for (int t = 0; t < 2; t++) {
        if ((PyObject *)Py_TYPE(conn) != conn_layouts[t].type)
            continue;
        for (int k = 0; k < CONN_SLOTS; k++)
            if (*conn_slot_names[k] == name)
                return conn_layouts[t].offset[k];
        return -1;
    }
    return -1;
}

static inline PyObject *
cget(PyObject *conn, PyObject *name)
{
    Py_ssize_t offset = conn_slot(conn, name);
    return offset > 0 ? slot_get(conn, offset, name) : PyObject_GetAttr(conn, name);
}

static inline int
cset(PyObject *conn, PyObject *name, PyObject *value)
{
    Py_ssize_t offset = conn_slot(conn, name);
    if (offset > 0) {
        slot_set(conn, offset, value);
        return 0;
    }
    return PyObject_SetAttr(conn, name, value);
}

/* conn_setup(cls, kind): the slots of a connection class (kind "cql": CqlConnection, "hbase":
 * RpcConnection); a name that is not a writable slot of it stays an attribute. */
static PyObject *
conn_setup(PyObject *module, PyObject *args)
{
    PyObject *cls;
    const char *kind;
    if (!PyArg_ParseTuple(args, "O!s:conn_setup", &PyType_Type, &cls, &kind))
        return NULL;
    int t = strcmp(kind, "cql") == 0 ? 0 : strcmp(kind, "hbase") == 0 ? 1 : -1;
    if (t < 0) {
        PyErr_Format(PyExc_ValueError, "conn_setup: kind is \"cql\" or \"hbase\", not %.50s", kind);
        return NULL;
    }
    Py_ssize_t found[CONN_SLOTS];
    for (int k = 0; k < CONN_SLOTS; k++) {
        if (slot_offset(cls, *conn_slot_names[k], &found[k]) < 0) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError))
                return NULL;
            PyErr_Clear();
            found[k] = -1;
        }
    }
    Py_CLEAR(conn_layouts[t].type); /* (no layout while it changes) */
    memcpy(conn_layouts[t].offset, found, sizeof(found));
    conn_layouts[t].type = Py_NewRef(cls);
    Py_RETURN_NONE;
}

/* conn.sent += 1 (the Python send paths count theirs): 0, or -1 with an exception. */
static int
count_sent(PyObject *conn)
{
    PyObject *sent = cget(conn, s_sent);
    if (sent == NULL)
        return -1;
    long n = PyLong_AsLong(sent);
    Py_DECREF(sent);
    if (n == -1 && PyErr_Occurred())
        return -1;
    PyObject *more = PyLong_FromLong(n + 1);
    if (more == NULL)
        return -1;
    int r = cset(conn, s_sent, more);
    Py_DECREF(more);
    return r;
}

/* 1: attribute is None, 0: it is not, -1: error */
static int
attr_is_none(PyObject *obj, PyObject *name)
{
    PyObject *v = cget(obj, name);
    if (v == NULL)
        return -1;
    int none = v == Py_None;
    Py_DECREF(v);
    return none;
}

/* 1: true, 0: false, -1: error */
static int
attr_truth(PyObject *obj, PyObject *name)
{
    PyObject *v = cget(obj, name);
    if (v == NULL)
        return -1;
    int truth = PyObject_IsTrue(v);
    Py_DECREF(v);
    return truth;
}

/* What every receive path shares (wire.py's SharedConnection): -------------------------------- */

/* A request made while nothing waits in _out: the write is a callback of the loop, unless the
 * connection is answering a read (buffer_updated writes at its end). 0, or -1 error. */
static int
schedule_flush(PyObject *conn, PyObject *out)
{
    if (PyList_GET_SIZE(out) != 0)
        return 0;
    int receiving = attr_truth(conn, s_receiving);
    if (receiving <= 0) {
        if (receiving < 0)
            return -1;
        PyObject *loop = cget(conn, s_loop);
        PyObject *flush = loop ? cget(conn, s_flush) : NULL;
        PyObject *handle = flush ? PyObject_CallMethodOneArg(loop, s_call_soon, flush) : NULL;
        Py_XDECREF(loop);
        Py_XDECREF(flush);
        if (handle == NULL)
            return -1;
        Py_DECREF(handle);
    }
    return 0;
}

/* A request now in flight: the connection's timeout timer runs (BufferedConnection._arm). */
static int
arm_timer(PyObject *conn)
{
    int no_timer = attr_is_none(conn, s_timer);
    if (no_timer <= 0)
        return no_timer;
    PyObject *armed = PyObject_CallMethodNoArgs(conn, s_arm);
    if (armed == NULL)
        return -1;
    Py_DECREF(armed);
    return 0;
}

/* A lane's more(): 1 go on, 0 stop, -1 error. A compiled Deadline is read without a call. */
static int
ask_more(PyObject *more)
{
    if (more == Py_None)
        return 1;
    if (Py_IS_TYPE(more, &DeadlineType))
        return deadline_allows((Deadline *)more);
    PyObject *r = PyObject_CallNoArgs(more);
    if (r == NULL)
        return -1;
    int go_on = PyObject_IsTrue(r);
    Py_DECREF(r);
    return go_on;
}

/* buffer_updated's start: n becomes _n + nbytes, _receiving is set; the buffer (a new reference),
 * or NULL with an error. */
static PyObject *
receive_begin(PyObject *conn, Py_ssize_t nbytes, Py_ssize_t *n)
{
    PyObject *n_obj = cget(conn, s_n);
    if (n_obj == NULL)
        return NULL;
    *n = PyLong_AsSsize_t(n_obj);
    Py_DECREF(n_obj);
    if (*n == -1 && PyErr_Occurred())
        return NULL;
    *n += nbytes;
    PyObject *buf = cget(conn, s_in);
    if (buf == NULL)
        return NULL;
    if (!PyByteArray_CheckExact(buf) || *n > PyByteArray_GET_SIZE(buf)) {
        Py_DECREF(buf);
        PyErr_SetString(PyExc_TypeError, "the connection's buffer is not a bytearray holding n bytes");
        return NULL;
    }
    if (cset(conn, s_receiving, Py_True) < 0) {
        Py_DECREF(buf);
        return NULL;
    }
    return buf;
}

static PyObject *conn_flush(PyObject *conn, PyObject *unused);

/* buffer_updated's end (its finally, then the write): the first `at` bytes, answered, leave the
 * buffer even after an error (`failed`: one is set, and kept), _receiving is cleared, and the
 * requests the answers made go out in one write. Steals buf. */
static PyObject *
receive_end(PyObject *conn, PyObject *buf, Py_ssize_t n, Py_ssize_t at, int failed)
{
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    int cleanup_failed = cset(conn, s_receiving, Py_False) < 0;
    if (!cleanup_failed) {
        Py_ssize_t rest = n - at;
        if (at && rest)
            memmove(PyByteArray_AS_STRING(buf), PyByteArray_AS_STRING(buf) + at, (size_t)rest);
        PyObject *left = PyLong_FromSsize_t(rest);
        cleanup_failed = left == NULL || cset(conn, s_n, left) < 0;
        Py_XDECREF(left);
    }
    Py_DECREF(buf);
    if (failed || cleanup_failed) {
        if (exc_type != NULL) /* the first error is the one to report (it replaces a later one) */
            PyErr_Restore(exc_type, exc_value, exc_tb);
        return NULL;
    }
    PyObject *out = cget(conn, s_out);
    if (out == NULL)
        return NULL;
    int pending = PyObject_IsTrue(out);
    Py_DECREF(out);
    if (pending < 0)
        return NULL;
    if (pending)
        return conn_flush(conn, NULL);
    Py_RETURN_NONE;
}

/* CqlConnection.send(call, EXECUTE, body) where the next stream id is free: 1 sent, 0 not tried
 * (the caller uses the Python send), -1 error. */
static int
send_fast(PyObject *conn, PyObject *call, PyObject *body)
{
    int result = -1;
    PyObject *inflight = NULL, *orphans = NULL, *stream = NULL, *out = NULL, *version = NULL;
    PyObject *next = NULL, *header = NULL, *t0 = NULL;
    inflight = cget(conn, s_inflight);
    orphans = inflight ? cget(conn, s_orphans) : NULL;
    stream = orphans ? cget(conn, s_stream) : NULL;
    if (stream == NULL)
        goto done;
    if (!PyDict_CheckExact(inflight) || !PyLong_CheckExact(stream) || !PyBytes_CheckExact(body)) {
        result = 0;
        goto done;
    }
    long sid = PyLong_AsLong(stream);
    if (sid == -1 && PyErr_Occurred())
        goto done;
    int taken = PyDict_Contains(inflight, stream);
    if (taken == 0)
        taken = PySequence_Contains(orphans, stream);
    if (taken < 0)
        goto done;
    if (taken || sid < 0 || sid > 0x7FFF || PyBytes_GET_SIZE(body) > 0x7FFFFFFF) {
        result = 0;
        goto done;
    }
    next = PyLong_FromLong((sid + 1) & 0x7FFF);
    out = next ? cget(conn, s_out) : NULL;
    version = out ? cget(conn, s_version) : NULL;
    if (version == NULL)
        goto done;
    if (!PyList_CheckExact(out)) {
        result = 0;
        goto done;
    }
    long v = PyLong_AsLong(version);
    if (v == -1 && PyErr_Occurred())
        goto done;
    if (cset(conn, s_stream, next) < 0)
        goto done;
    if (schedule_flush(conn, out) < 0)
        goto done;
    Py_ssize_t size = PyBytes_GET_SIZE(body);
    header = PyBytes_FromStringAndSize(NULL, 9);
    if (header == NULL)
        goto done;
    unsigned char *h = (unsigned char *)PyBytes_AS_STRING(header);
    h[0] = (unsigned char)v;
    h[1] = 0;
    h[2] = (unsigned char)(sid >> 8);
    h[3] = (unsigned char)sid;
    h[4] = CQL_EXECUTE;
    h[5] = (unsigned char)(size >> 24);
    h[6] = (unsigned char)(size >> 16);
    h[7] = (unsigned char)(size >> 8);
    h[8] = (unsigned char)size;
    if (PyList_Append(out, header) < 0 || PyList_Append(out, body) < 0)
        goto done;
    t0 = PyLong_FromLongLong(now_ns());
    if (t0 == NULL)
        goto done;
    slot_set(call, ch_t0, t0); /* (the call is a _Chain: chain_go's) */
    if (PyDict_SetItem(inflight, stream, call) < 0)
        goto done;
    if (arm_timer(conn) < 0 || count_sent(conn) < 0)
        goto done;
    result = 1;
done:
    Py_XDECREF(inflight);
    Py_XDECREF(orphans);
    Py_XDECREF(stream);
    Py_XDECREF(out);
    Py_XDECREF(version);
    Py_XDECREF(next);
    Py_XDECREF(header);
    Py_XDECREF(t0);
    return result;
}

/* The Python step, from the step whose more() has been asked already: call.go(True) (True: do
 * not ask more() again for it; it is asked before each step after). */
static int
go_python(PyObject *call)
{
    PyObject *r = PyObject_CallMethodOneArg(call, s_go, Py_True);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* Statement.body(params) of a statement whose values are all text (every YCSB statement but a
 * scan's; Statement.text_head is then its head), for params that are all str: head, then each
 * value's length and UTF-8. 1 made, 0 not such a statement or such values (the caller uses
 * Statement.body), -1 error. */
static int
text_body(PyObject *stmt, PyObject *params, PyObject **body)
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

/* NativeSession._route(stmt, params) of a session with one connection: that connection while it
 * is not broken. *target: a new reference to it, or NULL to call the route (several nodes, or
 * the one node down); -1 error. */
static int
single_connection(PyObject *route, PyObject **target)
{
    *target = NULL;
    if (route_function == NULL || !PyMethod_Check(route) || PyMethod_GET_FUNCTION(route) != route_function)
        return 0;
    PyObject *conns = PyObject_GetAttr(PyMethod_GET_SELF(route), s_conns);
    if (conns == NULL)
        return -1;
    int result = 0;
    if (PyList_CheckExact(conns) && PyList_GET_SIZE(conns) == 1) {
        PyObject *conn = PyList_GET_ITEM(conns, 0);
        if (conn != Py_None) {
            int healthy = attr_is_none(conn, s_broken);
            if (healthy < 0)
                result = -1;
            else if (healthy)
                *target = Py_NewRef(conn);
        }
    }
    Py_DECREF(conns);
    return result;
}

/* LazyRow(columns, layout, body, 16) without its __init__'s Python frame: the same five slots. */
static PyObject *
lazy_row(PyObject *columns, PyObject *layout, PyObject *body)
{
    PyTypeObject *type = (PyTypeObject *)lazyrow_type;
    PyObject *row = type->tp_alloc(type, 0);
    if (row == NULL)
        return NULL;
    PyObject *sixteen = PyLong_FromLong(16);
    if (sixteen == NULL) {
        Py_DECREF(row);
        return NULL;
    }
    slot_set(row, lr_columns, columns);
    slot_set(row, lr_layout, layout);
    slot_set(row, lr_buf, body);
    slot_set(row, lr_i, sixteen);
    slot_set(row, lr_row, Py_None);
    Py_DECREF(sixteen);
    return row;
}

/* _Chain.go(False) on its usual path: 0 done (sent the next step or ended the chain), -1 error.
 * A step that does not go as usual is left to the Python go(), from the same step. */
static int
chain_go(PyObject *conn, PyObject *call)
{
    int result = -1;
    PyObject *answers = NULL, *items = NULL, *more = NULL, *item = NULL, *body = NULL, *route = NULL;
    PyObject *target = NULL;
    answers = slot_get(call, ch_answers, s_answers);
    items = answers ? slot_get(call, ch_items, s_items) : NULL;
    more = items ? slot_get(call, ch_more, s_more) : NULL;
    if (more == NULL)
        goto done;
    Py_ssize_t n = PyObject_Length(answers), count = PyObject_Length(items);
    if (n < 0 || count < 0)
        goto done;
    int go_on = n < count ? ask_more(more) : 0;
    if (go_on < 0)
        goto done;
    if (!go_on) {
        PyObject *done_future = slot_get(call, ch_done, s_done);
        if (done_future == NULL)
            goto done;
        PyObject *is_done = PyObject_CallMethodNoArgs(done_future, s_done_method);
        int finished = is_done ? PyObject_IsTrue(is_done) : -1;
        Py_XDECREF(is_done);
        if (finished == 0) {
            PyObject *r = PyObject_CallMethodOneArg(done_future, s_set_result, answers);
            finished = r ? 1 : -1;
            Py_XDECREF(r);
        }
        Py_DECREF(done_future);
        result = finished < 0 ? -1 : 0;
        goto done;
    }
    item = PySequence_GetItem(items, n);
    if (item == NULL)
        goto done;
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2)
        goto python;
    PyObject *stmt = PyTuple_GET_ITEM(item, 0), *params = PyTuple_GET_ITEM(item, 1);
    int made = text_body(stmt, params, &body);
    if (made < 0)
        goto fallback;
    if (made == 0) {
        body = PyObject_CallMethodOneArg(stmt, s_body, params);
        if (body == NULL)
            goto fallback;
    }
    route = slot_get(call, ch_route, s_route);
    if (route == NULL)
        goto fallback;
    if (single_connection(route, &target) < 0)
        goto fallback;
    if (target == NULL) {
        PyObject *route_args[2] = {stmt, params};
        target = PyObject_Vectorcall(route, route_args, 2, NULL);
        if (target == NULL)
            goto fallback;
    }
    if (target == Py_None)
        goto python;
    slot_set(call, ch_stmt, stmt);
    slot_set(call, ch_body, body);
    int sent = send_fast(target, call, body);
    if (sent < 0)
        goto fallback;
    if (sent == 0) {
        PyObject *opcode = PyLong_FromLong(CQL_EXECUTE);
        if (opcode == NULL)
            goto done;
        PyObject *r = PyObject_CallMethodObjArgs(target, s_send, call, opcode, body, NULL);
        Py_DECREF(opcode);
        if (r == NULL)
            goto fallback;
        Py_DECREF(r);
    }
    result = 0;
    goto done;
fallback:
    /* Python's go() catches Exception (not KeyboardInterrupt and the like) and answers the
     * step with it: run it from this step, which does the step again and handles it. */
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        goto done;
    PyErr_Clear();
python:
    result = go_python(call);
done:
    Py_XDECREF(answers);
    Py_XDECREF(items);
    Py_XDECREF(more);
    Py_XDECREF(item);
    Py_XDECREF(body);
    Py_XDECREF(route);
    Py_XDECREF(target);
    return result;
}

/* One frame: 1 answered here, 0 not the usual case (the caller hands it to _answer), -1 error. */
static int
answer_fast(PyObject *conn, PyObject *inflight, int flags, int sid, int opcode, PyObject *body)
{
    if (flags != 0 || opcode != CQL_RESULT || chain_type == NULL || !PyDict_CheckExact(inflight))
        return 0;
    PyObject *key = PyLong_FromLong(sid);
    if (key == NULL)
        return -1;
    int result = -1;
    PyObject *stmt = NULL, *columns = NULL, *layout = NULL, *value = NULL, *t0 = NULL, *t1 = NULL;
    PyObject *entry = NULL, *answers = NULL;
    PyObject *call = PyDict_GetItemWithError(inflight, key); /* borrowed */
    if (call == NULL) {
        result = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    Py_INCREF(call);
    if ((PyObject *)Py_TYPE(call) != chain_type) {
        result = 0;
        goto done;
    }
    stmt = slot_get(call, ch_stmt, s_stmt);
    if (stmt == NULL)
        goto done;
    if (stmt == Py_None) {
        result = 0;
        goto done;
    }
    long long answered_at = now_ns(); /* as _answer: the time is taken before the body is decoded */
    const unsigned char *b = (const unsigned char *)PyByteArray_AS_STRING(body);
    Py_ssize_t size = PyByteArray_GET_SIZE(body);
    if (size < 4) {
        result = 0;
        goto done;
    }
    if ((int32_t)be32(b) != CQL_ROWS) {
        value = Py_NewRef(Py_None); /* Void (an update), or another kind: decode_result gives None */
    } else {
        /* decode_result's usual answer to a prepared SELECT: no metadata, one row of the layout */
        columns = PyObject_GetAttr(stmt, s_columns);
        if (columns == NULL)
            goto done;
        if (columns == Py_None || size < 16 || ((int32_t)be32(b + 4) & 0x0006) != CQL_NO_METADATA
            || (int32_t)be32(b + 12) != 1) {
            result = 0;
            goto done;
        }
        layout = PyObject_GetAttr(columns, s_layout);
        if (layout == NULL)
            goto done;
        if (!PyTuple_CheckExact(layout) || PyTuple_GET_SIZE(layout) != 2) {
            result = 0;
            goto done;
        }
        PyObject *fixed_size = PyObject_GetAttr(PyTuple_GET_ITEM(layout, 0), s_size);
        if (fixed_size == NULL)
            goto done;
        Py_ssize_t want = PyLong_AsSsize_t(fixed_size);
        Py_DECREF(fixed_size);
        if (want == -1 && PyErr_Occurred())
            goto done;
        if (size - 16 != want) {
            result = 0;
            goto done;
        }
        /* cassandra_native._fills: the cells' lengths (one per column of the layout) add up to the
         * row exactly (a LazyRow decodes its values only when read); else to _answer, which
         * decodes it cell by cell (or finds it malformed) */
        PyObject *lengths = PyTuple_GET_ITEM(layout, 1);
        if (!PyTuple_Check(lengths)) {
            result = 0;
            goto done;
        }
        Py_ssize_t at = 16, cell = 0, cells = PyTuple_GET_SIZE(lengths);
        while (cell < cells && at + 4 <= size) {
            int32_t length = (int32_t)be32(b + at);
            at += 4 + (length > 0 ? (Py_ssize_t)length : 0);
            cell++;
        }
        if (cell < cells || at != size) {
            result = 0;
            goto done;
        }
        PyObject *row = lazy_row(columns, layout, body);
        if (row == NULL)
            goto done;
        value = PyList_New(1);
        if (value == NULL) {
            Py_DECREF(row);
            goto done;
        }
        PyList_SET_ITEM(value, 0, row);
    }
    /* CqlConnection._answer: the call leaves _inflight, then the answer's time */
    if (PyDict_DelItem(inflight, key) < 0)
        goto done;
    t1 = PyLong_FromLongLong(answered_at);
    t0 = t1 ? slot_get(call, ch_t0, s_t0) : NULL;
    answers = t0 ? slot_get(call, ch_answers, s_answers) : NULL;
    if (answers == NULL)
        goto done;
    /* _Chain.answered(True, value, t1) */
    entry = PyTuple_Pack(4, Py_True, value, t0, t1);
    if (entry == NULL || PyList_Append(answers, entry) < 0)
        goto done;
    slot_set(call, ch_retried, Py_False);
    result = chain_go(conn, call) < 0 ? -1 : 1;
done:
    Py_DECREF(key);
    Py_XDECREF(call);
    Py_XDECREF(stmt);
    Py_XDECREF(columns);
    Py_XDECREF(layout);
    Py_XDECREF(value);
    Py_XDECREF(t0);
    Py_XDECREF(t1);
    Py_XDECREF(entry);
    Py_XDECREF(answers);
    return result;
}

static PyObject *
cql_receive_impl(PyObject *conn, Py_ssize_t nbytes)
{
    Py_ssize_t n;
    PyObject *buf = receive_begin(conn, nbytes, &n);
    if (buf == NULL)
        return NULL;
    Py_ssize_t at = 0;
    int failed = 0;
    while (n - at >= 9) {
        int healthy = attr_is_none(conn, s_broken); /* (an answer's callback may break it) */
        if (healthy <= 0) {
            failed = healthy < 0;
            break;
        }
        const unsigned char *p = (const unsigned char *)PyByteArray_AS_STRING(buf) + at;
        int flags = p[1], opcode = p[4];
        int sid = (int16_t)(((unsigned)p[2] << 8) | p[3]);
        int32_t size = (int32_t)be32(p + 5);
        if (size < 0 || size > CQL_MAX_FRAME) { /* a frame no server sends: the stream is lost */
            PyObject *why = PyUnicode_FromFormat("a frame of %d bytes", (int)size);
            PyObject *r = why ? PyObject_CallMethodOneArg(conn, s_malformed, why) : NULL; /* a MalformedAnswer */
            Py_XDECREF(why);
            if (r == NULL)
                failed = 1;
            Py_XDECREF(r);
            break;
        }
        Py_ssize_t end = at + 9 + (Py_ssize_t)size;
        if (end > n)
            break;
        PyObject *body = PyByteArray_FromStringAndSize((const char *)p + 9, size);
        if (body == NULL) {
            failed = 1;
            break;
        }
        at = end;
        PyObject *inflight = cget(conn, s_inflight);
        int done = inflight ? answer_fast(conn, inflight, flags, sid, opcode, body) : -1;
        Py_XDECREF(inflight);
        if (done == 0) {
            PyObject *r = PyObject_CallMethod(conn, "_answer", "iiiO", flags, sid, opcode, body);
            done = r ? 1 : -1;
            Py_XDECREF(r);
        }
        Py_DECREF(body);
        if (done < 0) {
            failed = 1;
            break;
        }
    }
    return receive_end(conn, buf, n, at, failed);
}

/* -- the native HBase client's answers (workbench/bindings/hbase_native.py) -------------------- *
 *
 * hbase_receive(conn, nbytes) is RpcConnection.buffer_updated. An answer whose header is the
 * call id alone (nearly all are) to a chain's call is answered here as RpcConnection._answer,
 * _next and _send do: its body decoded as the chain's decode would (found_cells's usual answer,
 * a LazyCells, and decode_mutate's None are made here; any other decode is called), the lane
 * asked, the next request made by the chain's make (Python) and framed here. Every other
 * answer, and every step that does not go as usual, goes to that Python code. */

static PyObject *hchain_type, *hfinish, *hmethods; /* _Chain, _finish, _METHODS (hbase_setup) */
static PyObject *hfound_cells, *hdecode_mutate, *hcells_type; /* found_cells, decode_mutate, LazyCells */
static long hcall_ids;
#define HBASE_MAX_MESSAGE 0x7FFFFFFFu /* hbase_native.MAX_MESSAGE */
static PyObject *s_decode, *s_make, *s_hsend, *s_lc_body;

/* hbase_native._Chain's slots, found by hbase_setup (its chains are checked to be of exactly it),
 * and LazyCells's */
static Py_ssize_t hc_items, hc_make, hc_more, hc_answers, hc_decode, hc_t0, lc_body, lc_row;

static PyObject *
hbase_setup(PyObject *module, PyObject *args)
{
    PyObject *chain, *finish, *methods, *found_cells, *decode_mutate, *cells;
    long call_ids;
    if (!PyArg_ParseTuple(args, "OOO!lOOO:hbase_setup", &chain, &finish, &PyDict_Type, &methods, &call_ids,
                          &found_cells, &decode_mutate, &cells))
        return NULL;
    if (!PyType_Check(chain) || !PyType_Check(cells)) {
        PyErr_SetString(PyExc_TypeError, "hbase_setup: _Chain and LazyCells must be classes");
        return NULL;
    }
    struct { Py_ssize_t *offset; PyObject *type, *name; } slots[] = {
        {&hc_items, chain, s_items}, {&hc_make, chain, s_make}, {&hc_more, chain, s_more},
        {&hc_answers, chain, s_answers}, {&hc_decode, chain, s_decode}, {&hc_t0, chain, s_t0},
        {&lc_body, cells, s_lc_body}, {&lc_row, cells, s_lr_row},
    };
    enum { NSLOTS = sizeof(slots) / sizeof(slots[0]) };
    Py_ssize_t found[NSLOTS]; /* all or none, as in cql_setup */
    for (size_t k = 0; k < NSLOTS; k++)
        if (slot_offset(slots[k].type, slots[k].name, &found[k]) < 0)
            return NULL;
    for (size_t k = 0; k < NSLOTS; k++)
        *slots[k].offset = found[k];
    Py_XSETREF(hchain_type, Py_NewRef(chain));
    Py_XSETREF(hfinish, Py_NewRef(finish));
    Py_XSETREF(hmethods, Py_NewRef(methods));
    Py_XSETREF(hfound_cells, Py_NewRef(found_cells));
    Py_XSETREF(hdecode_mutate, Py_NewRef(decode_mutate));
    Py_XSETREF(hcells_type, Py_NewRef(cells));
    hcall_ids = call_ids;
    Py_RETURN_NONE;
}

static inline int
put_varint(unsigned char *at, uint64_t n)
{
    int k = 0;
    while (n >= 0x80) {
        at[k++] = (unsigned char)(n & 0x7F) | 0x80;
        n >>= 7;
    }
    at[k++] = (unsigned char)n;
    return k;
}

static inline int
varint_size(uint64_t n)
{
    int k = 1;
    while (n >= 0x80) {
        n >>= 7;
        k++;
    }
    return k;
}

static int
call_python_method(PyObject *obj, PyObject *name, PyObject *arg)
{
    PyObject *r = PyObject_CallMethodOneArg(obj, name, arg);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

static int
finish_chain(PyObject *chain)
{
    PyObject *r = PyObject_CallOneArg(hfinish, chain);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* RpcConnection._send(chain) where its request is made and framed as usual: 0 done (sent, or
 * handed to the Python _send, which answers what goes wrong), -1 error. */
static int
hbase_send(PyObject *conn, PyObject *chain, Py_ssize_t step)
{
    int result = -1;
    PyObject *items = NULL, *item = NULL, *made = NULL, *inflight = NULL, *out = NULL, *frame = NULL;
    PyObject *last = NULL, *key = NULL, *t0 = NULL;
    items = slot_get(chain, hc_items, s_items);
    item = items ? PySequence_GetItem(items, step) : NULL;
    PyObject *make = item ? slot_get(chain, hc_make, s_make) : NULL;
    if (make == NULL)
        goto done;
    made = PyObject_CallOneArg(make, item);
    Py_DECREF(make);
    if (made == NULL)
        goto python;
    if (!PyTuple_CheckExact(made) || PyTuple_GET_SIZE(made) != 3)
        goto python;
    PyObject *method = PyTuple_GET_ITEM(made, 0), *param = PyTuple_GET_ITEM(made, 1);
    PyObject *decode = PyTuple_GET_ITEM(made, 2);
    PyObject *method_header = PyDict_GetItemWithError(hmethods, method); /* borrowed */
    if (method_header == NULL || !PyBytes_CheckExact(method_header) || !PyBytes_CheckExact(param))
        goto python; /* (an error from the lookup is left to the Python _send too) */
    inflight = cget(conn, s_inflight);
    if (inflight == NULL)
        goto done;
    if (!PyDict_CheckExact(inflight) || PyDict_GET_SIZE(inflight) >= hcall_ids)
        goto python;
    last = cget(conn, s_call_id);
    if (last == NULL)
        goto done;
    long call_id = PyLong_AsLong(last);
    if (call_id == -1 && PyErr_Occurred())
        goto done;
    for (;;) {
        call_id = call_id < hcall_ids ? call_id + 1 : 1;
        Py_XSETREF(key, PyLong_FromLong(call_id));
        if (key == NULL)
            goto done;
        int taken = PyDict_Contains(inflight, key);
        if (taken < 0)
            goto done;
        if (!taken)
            break;
    }
    if (cset(conn, s_call_id, key) < 0)
        goto done;
    slot_set(chain, hc_decode, decode);
    /* RequestHeader: call_id = 1, then the method's constant fields; the message: total length,
     * header length, header, param length (then the param, appended as it is) */
    Py_ssize_t mlen = PyBytes_GET_SIZE(method_header), plen = PyBytes_GET_SIZE(param);
    Py_ssize_t hlen = 1 + varint_size((uint64_t)call_id) + mlen;
    Py_ssize_t total = varint_size((uint64_t)hlen) + hlen + varint_size((uint64_t)plen) + plen;
    if (total > 0xFFFFFFFFLL)
        goto python;
    frame = PyBytes_FromStringAndSize(NULL, 4 + total - plen);
    if (frame == NULL)
        goto done;
    unsigned char *at = (unsigned char *)PyBytes_AS_STRING(frame);
    at[0] = (unsigned char)(total >> 24);
    at[1] = (unsigned char)(total >> 16);
    at[2] = (unsigned char)(total >> 8);
    at[3] = (unsigned char)total;
    at += 4;
    at += put_varint(at, (uint64_t)hlen);
    *at++ = 0x08; /* RequestHeader.call_id (1, varint): REQUEST_HEADER_CALL_ID */
    at += put_varint(at, (uint64_t)call_id);
    memcpy(at, PyBytes_AS_STRING(method_header), (size_t)mlen);
    at += mlen;
    put_varint(at, (uint64_t)plen);
    out = cget(conn, s_out);
    if (out == NULL)
        goto done;
    if (!PyList_CheckExact(out)) {
        PyErr_SetString(PyExc_TypeError, "hbase_receive: the connection's _out is not a list");
        goto done;
    }
    if (schedule_flush(conn, out) < 0)
        goto done;
    if (PyList_Append(out, frame) < 0 || PyList_Append(out, param) < 0)
        goto done;
    t0 = PyLong_FromLongLong(now_ns());
    if (t0 == NULL)
        goto done;
    slot_set(chain, hc_t0, t0);
    if (PyDict_SetItem(inflight, key, chain) < 0)
        goto done;
    if (arm_timer(conn) < 0 || count_sent(conn) < 0)
        goto done;
    result = 0;
    goto done;
python:
    if (PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            goto done;
        PyErr_Clear(); /* the Python _send makes the request again and answers the failure */
    }
    result = call_python_method(conn, s_hsend, chain);
done:
    Py_XDECREF(items);
    Py_XDECREF(item);
    Py_XDECREF(made);
    Py_XDECREF(inflight);
    Py_XDECREF(out);
    Py_XDECREF(frame);
    Py_XDECREF(last);
    Py_XDECREF(key);
    Py_XDECREF(t0);
    return result;
}

/* A length-delimited protobuf field (its key one byte) at `at`: the end of it. */
static inline unsigned char *
put_bytes_field(unsigned char *at, unsigned char key, const char *data, Py_ssize_t n)
{
    *at++ = key;
    at += put_varint(at, (uint64_t)n);
    memcpy(at, data, (size_t)n);
    return at + n;
}

/* hbase_make(ctx, step): NativeBinding._maker's make for a table of one region, in C, for the
 * usual steps: a Get of every field of a row shorter than ctx's limit, and a Put of one cell
 * (every update of YCSB's default workloads). Any other step goes to ctx's Python make, which
 * gives the same bytes for these (test_hbase_native.py compares both). ctx is a tuple: (region
 * specifier, the Get's Column of the family, family, what follows a Put's cell (durability),
 * the Python make, found_cells, decode_mutate, b"Get", b"Mutate", READ). */
static PyObject *
hbase_make(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 10) {
        PyErr_SetString(PyExc_TypeError, "hbase_make(ctx, step): ctx is a tuple of 10");
        return NULL;
    }
    PyObject *ctx = args[0], *step = args[1];
    PyObject *spec = PyTuple_GET_ITEM(ctx, 0), *every = PyTuple_GET_ITEM(ctx, 1);
    PyObject *family = PyTuple_GET_ITEM(ctx, 2), *after = PyTuple_GET_ITEM(ctx, 3);
    PyObject *fallback = PyTuple_GET_ITEM(ctx, 4);
    if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 3 || !PyBytes_CheckExact(spec)
        || !PyBytes_CheckExact(every) || !PyBytes_CheckExact(family) || !PyBytes_CheckExact(after))
        return PyObject_CallOneArg(fallback, step);
    PyObject *op = PyTuple_GET_ITEM(step, 0), *key = PyTuple_GET_ITEM(step, 1);
    PyObject *arg = PyTuple_GET_ITEM(step, 2);
    if (!PyUnicode_CheckExact(key) || !PyUnicode_CheckExact(op))
        return PyObject_CallOneArg(fallback, step);
    int is_read = op == PyTuple_GET_ITEM(ctx, 9) ? 1 : PyUnicode_Compare(op, PyTuple_GET_ITEM(ctx, 9)) == 0;
    if (is_read == 0 && PyErr_Occurred())
        return NULL;
    Py_ssize_t lr;
    const char *row = PyUnicode_AsUTF8AndSize(key, &lr);
    if (row == NULL)
        return NULL;
    Py_ssize_t ls = PyBytes_GET_SIZE(spec);
    PyObject *request, *out;
    if (is_read) {
        Py_ssize_t tail = PyBytes_GET_SIZE(every);
        if (arg != Py_None || lr >= 0x80 - 2 - tail)
            return PyObject_CallOneArg(fallback, step);
        /* spec, Get (2): [row (1), Column (2) of the family] -- one-byte lengths. The field
         * numbers are hbase_native.py's constants, named after Client.proto's fields. */
        request = PyBytes_FromStringAndSize(NULL, ls + 4 + lr + tail);
        if (request == NULL)
            return NULL;
        unsigned char *at = (unsigned char *)PyBytes_AS_STRING(request);
        memcpy(at, PyBytes_AS_STRING(spec), (size_t)ls);
        at += ls;
        *at++ = 0x12; /* GetRequest.get (2): GET_REQUEST_GET */
        *at++ = (unsigned char)(2 + lr + tail);
        at = put_bytes_field(at, 0x0a, row, lr); /* Get.row (1): GET_ROW */
        memcpy(at, PyBytes_AS_STRING(every), (size_t)tail);
        out = PyTuple_Pack(3, PyTuple_GET_ITEM(ctx, 7), request, PyTuple_GET_ITEM(ctx, 5));
        Py_DECREF(request);
        return out;
    }
    if (!PyDict_CheckExact(arg) || PyDict_GET_SIZE(arg) != 1)
        return PyObject_CallOneArg(fallback, step);
    PyObject *qualifier, *value;
    Py_ssize_t pos = 0;
    PyDict_Next(arg, &pos, &qualifier, &value);
    if (!PyUnicode_CheckExact(qualifier) || !PyUnicode_CheckExact(value))
        return PyObject_CallOneArg(fallback, step);
    Py_ssize_t lq, lv;
    const char *q = PyUnicode_AsUTF8AndSize(qualifier, &lq);
    const char *v = q ? PyUnicode_AsUTF8AndSize(value, &lv) : NULL;
    if (v == NULL)
        return NULL;
    /* spec, Mutation (2): [row (1), PUT (2), ColumnValue (3): [family (1),
     * QualifierValue (2): [qualifier (1), value (2)]], durability (6) if any]. The field numbers
     * are hbase_native.py's constants, named after Client.proto's fields (MutateRequest,
     * MutationProto, its ColumnValue and QualifierValue). */
    Py_ssize_t lf = PyBytes_GET_SIZE(family), la = PyBytes_GET_SIZE(after);
    uint64_t qv = 1 + varint_size(lq) + lq + 1 + varint_size(lv) + lv;
    uint64_t cv = 1 + varint_size(lf) + lf + 1 + varint_size(qv) + qv;
    uint64_t put = 1 + varint_size(lr) + lr + 2 + 1 + varint_size(cv) + cv + la;
    request = PyBytes_FromStringAndSize(NULL, ls + 1 + varint_size(put) + (Py_ssize_t)put);
    if (request == NULL)
        return NULL;
    unsigned char *at = (unsigned char *)PyBytes_AS_STRING(request);
    memcpy(at, PyBytes_AS_STRING(spec), (size_t)ls);
    at += ls;
    *at++ = 0x12; /* MutateRequest.mutation (2): MUTATE_REQUEST_MUTATION */
    at += put_varint(at, put);
    at = put_bytes_field(at, 0x0a, row, lr); /* MutationProto.row (1): MUTATION_PROTO_ROW */
    *at++ = 0x10; /* MutationProto.mutate_type (2, varint): MUTATION_PROTO_MUTATE_TYPE */
    *at++ = 0x02; /* MutationType.PUT */
    *at++ = 0x1a; /* MutationProto.column_value (3): MUTATION_PROTO_COLUMN_VALUE */
    at += put_varint(at, cv);
    at = put_bytes_field(at, 0x0a, PyBytes_AS_STRING(family), lf); /* ColumnValue.family (1) */
    *at++ = 0x12; /* ColumnValue.qualifier_value (2): COLUMN_VALUE_QUALIFIER_VALUE */
    at += put_varint(at, qv);
    at = put_bytes_field(at, 0x0a, q, lq); /* QualifierValue.qualifier (1) */
    at = put_bytes_field(at, 0x12, v, lv); /* QualifierValue.value (2) */
    memcpy(at, PyBytes_AS_STRING(after), (size_t)la);
    out = PyTuple_Pack(3, PyTuple_GET_ITEM(ctx, 8), request, PyTuple_GET_ITEM(ctx, 6));
    Py_DECREF(request);
    return out;
}

/* hbase_native.found_cells(body): a LazyCells of the body (made without its __init__'s Python
 * frame: the same two slots) where the body starts as a row's result with a cell, as nearly every
 * read's does; any other body goes to the Python found_cells, which walks it. */
static PyObject *
found_cells(PyObject *body)
{
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(body);
    Py_ssize_t n = PyBytes_GET_SIZE(body);
    /* GetResponse.result (1): GET_RESPONSE_RESULT, whose first field is Result.cell (1): RESULT_CELL */
    if (n > 3 && p[0] == 0x0A && p[1]) {
        int at = p[1] < 0x80 ? 2 : p[2] < 0x80 ? 3 : 0;
        if (at && p[at] == 0x0A) {
            PyTypeObject *type = (PyTypeObject *)hcells_type;
            PyObject *cells = type->tp_alloc(type, 0);
            if (cells == NULL)
                return NULL;
            slot_set(cells, lc_body, body);
            slot_set(cells, lc_row, Py_None);
            return cells;
        }
    }
    return PyObject_CallOneArg(hfound_cells, body);
}

/* One message buf[i:end]: 1 answered here, 0 not the usual case (the caller hands it to
 * _answer, untouched), -1 error. */
static int
hbase_answer_fast(PyObject *conn, PyObject *buf, Py_ssize_t i, Py_ssize_t end)
{
    if (hchain_type == NULL)
        return 0;
    const unsigned char *b = (const unsigned char *)PyByteArray_AS_STRING(buf);
    long call_id;
    if (i >= end)
        return 0;
    /* a ResponseHeader of ResponseHeader.call_id (1, varint: 0x08, RESPONSE_HEADER_CALL_ID) alone */
    if (b[i] == 2 && i + 3 < end && b[i + 1] == 0x08 && b[i + 2] < 0x80) {
        call_id = b[i + 2];
        i += 3;
    } else if (b[i] == 3 && i + 4 < end && b[i + 1] == 0x08 && b[i + 2] >= 0x80 && b[i + 3] < 0x80) {
        call_id = (b[i + 2] & 0x7F) | ((long)b[i + 3] << 7);
        i += 4;
    } else {
        return 0;
    }
    /* the body's length, a varint */
    uint64_t size = 0;
    int shift = 0;
    for (;;) {
        if (i >= end || shift > 63)
            return 0;
        unsigned char c = b[i++];
        size |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80))
            break;
        shift += 7;
    }
    if (size > (uint64_t)(end - i))
        return 0;
    int result = -1;
    PyObject *inflight = NULL, *key = NULL, *decode = NULL, *body = NULL, *value = NULL, *t0 = NULL;
    PyObject *t1 = NULL, *answers = NULL, *entry = NULL, *chain = NULL, *items = NULL, *more = NULL;
    inflight = cget(conn, s_inflight);
    key = inflight ? PyLong_FromLong(call_id) : NULL;
    if (key == NULL)
        goto done;
    if (!PyDict_CheckExact(inflight)) {
        result = 0;
        goto done;
    }
    chain = PyDict_GetItemWithError(inflight, key);
    if (chain == NULL) {
        result = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    Py_INCREF(chain);
    if ((PyObject *)Py_TYPE(chain) != hchain_type) {
        result = 0;
        goto done;
    }
    decode = slot_get(chain, hc_decode, s_decode);
    if (decode == NULL)
        goto done;
    if (PyDict_DelItem(inflight, key) < 0)
        goto done;
    long long answered_at = now_ns(); /* as _answer: out of _inflight, then the time */
    t1 = PyLong_FromLongLong(answered_at);
    t0 = t1 ? slot_get(chain, hc_t0, s_t0) : NULL;
    answers = t0 ? slot_get(chain, hc_answers, s_answers) : NULL;
    if (answers == NULL)
        goto done;
    if (decode == hdecode_mutate) /* an update's answer: decode_mutate's None, its body unread */
        value = Py_NewRef(Py_None);
    else {
        body = PyBytes_FromStringAndSize((const char *)b + i, (Py_ssize_t)size);
        if (body == NULL)
            goto done;
        value = decode == hfound_cells ? found_cells(body) : PyObject_CallOneArg(decode, body);
    }
    if (value == NULL) {
        /* an answer that does not parse: that step's error, the chain ends, the stream is suspect */
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            goto done;
        PyObject *type, *exc, *tb;
        PyErr_Fetch(&type, &exc, &tb);
        PyErr_NormalizeException(&type, &exc, &tb);
        Py_XDECREF(type);
        Py_XDECREF(tb);
        if (exc == NULL)
            goto done;
        /* RpcConnection._failed_answer: the connection breaks, the call fails with its MalformedAnswer */
        PyObject *r = PyObject_CallMethodObjArgs(conn, s_failed_answer, chain, exc, t1, NULL);
        Py_DECREF(exc);
        result = r == NULL ? -1 : 1;
        Py_XDECREF(r);
        goto done;
    }
    entry = PyTuple_Pack(4, Py_True, value, t0, t1);
    if (entry == NULL || PyList_Append(answers, entry) < 0)
        goto done;
    /* _next: another step while there is one, the connection stands and the lane says go on */
    items = slot_get(chain, hc_items, s_items);
    more = items ? slot_get(chain, hc_more, s_more) : NULL;
    if (more == NULL)
        goto done;
    Py_ssize_t n = PyList_GET_SIZE(answers), count = PyObject_Length(items);
    if (count < 0)
        goto done;
    int go_on = n < count;
    if (go_on) {
        int healthy = attr_is_none(conn, s_broken);
        if (healthy < 0)
            goto done;
        go_on = healthy;
    }
    if (go_on)
        go_on = ask_more(more);
    if (go_on < 0)
        goto done;
    if (go_on)
        result = hbase_send(conn, chain, n) < 0 ? -1 : 1;
    else
        result = finish_chain(chain) < 0 ? -1 : 1;
done:
    Py_XDECREF(inflight);
    Py_XDECREF(key);
    Py_XDECREF(chain);
    Py_XDECREF(decode);
    Py_XDECREF(body);
    Py_XDECREF(value);
    Py_XDECREF(t0);
    Py_XDECREF(t1);
    Py_XDECREF(answers);
    Py_XDECREF(entry);
    Py_XDECREF(items);
    Py_XDECREF(more);
    return result;
}

static PyObject *
hbase_receive_impl(PyObject *conn, Py_ssize_t nbytes)
{
    Py_ssize_t n;
    PyObject *buf = receive_begin(conn, nbytes, &n);
    if (buf == NULL)
        return NULL;
    Py_ssize_t at = 0;
    int failed = 0;
    while (n - at >= 4) {
        int healthy = attr_is_none(conn, s_broken); /* (an answer's callback may break it) */
        if (healthy <= 0) {
            failed = healthy < 0;
            break;
        }
        uint32_t size = be32((const unsigned char *)PyByteArray_AS_STRING(buf) + at);
        if (size > HBASE_MAX_MESSAGE) { /* a message no server sends: the stream is lost */
            PyObject *why = PyUnicode_FromFormat("a message of %lu bytes", (unsigned long)size);
            PyObject *r = why ? PyObject_CallMethodOneArg(conn, s_malformed, why) : NULL; /* a MalformedAnswer */
            Py_XDECREF(why);
            if (r == NULL)
                failed = 1;
            Py_XDECREF(r);
            break;
        }
        Py_ssize_t end = at + 4 + (Py_ssize_t)size;
        if (end > n)
            break;
        int done = hbase_answer_fast(conn, buf, at + 4, end);
        if (done == 0) {
            PyObject *r = PyObject_CallMethod(conn, "_answer", "Onn", buf, at + 4, end);
            done = r ? 1 : -1;
            Py_XDECREF(r);
        }
        if (done < 0) {
            failed = 1;
            break;
        }
        at = end;
    }
    return receive_end(conn, buf, n, at, failed);
}

/* -- a connection's loop hooks, without a Python frame a wake-up ------------------------------ *
 *
 * hooks(conn, kind) gives (get_buffer, buffer_updated, _flush) as builtins bound to conn, for
 * the connection to set on itself (the loop then calls them as it would its methods, and a
 * request's call_soon(self._flush) finds the compiled one): BufferedConnection.get_buffer,
 * cql_receive or hbase_receive (kind "cql" or "hbase"), and SharedConnection._flush. Each wake-up
 * of the loop calls all three; as methods, that is three Python frames a wake-up. */

static PyObject *s_write, *join_bytes; /* join_bytes: b"".join */

/* BufferedConnection.get_buffer: the free part of the receive buffer; a full buffer grows in
 * the Python method (the class's), which this does not repeat. */
static PyObject *
conn_get_buffer(PyObject *conn, PyObject *sizehint)
{
    PyObject *n_obj = cget(conn, s_n);
    if (n_obj == NULL)
        return NULL;
    Py_ssize_t n = PyLong_AsSsize_t(n_obj);
    Py_DECREF(n_obj);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    PyObject *buf = cget(conn, s_in);
    if (buf == NULL)
        return NULL;
    int full = !PyByteArray_CheckExact(buf) || n >= PyByteArray_GET_SIZE(buf) || n < 0;
    Py_DECREF(buf);
    if (full) {
        PyObject *method = PyObject_GetAttrString((PyObject *)Py_TYPE(conn), "get_buffer");
        if (method == NULL)
            return NULL;
        PyObject *call_args[2] = {conn, sizehint};
        PyObject *r = PyObject_Vectorcall(method, call_args, 2, NULL);
        Py_DECREF(method);
        return r;
    }
    PyObject *view = cget(conn, s_view);
    if (view == NULL)
        return NULL;
    PyObject *part = PySequence_GetSlice(view, n, PY_SSIZE_T_MAX);
    Py_DECREF(view);
    return part;
}

/* SharedConnection._flush: what waits in _out, in one write (none once the connection broke). */
static PyObject *
conn_flush(PyObject *conn, PyObject *unused)
{
    PyObject *out = cget(conn, s_out);
    if (out == NULL)
        return NULL;
    PyObject *fresh = PyList_New(0);
    if (fresh == NULL || cset(conn, s_out, fresh) < 0) {
        Py_XDECREF(fresh);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(fresh);
    PyObject *result = NULL, *transport = NULL, *data = NULL;
    transport = cget(conn, s_transport);
    if (transport == NULL)
        goto done;
    int healthy = transport == Py_None ? 0 : attr_is_none(conn, s_broken);
    if (healthy < 0)
        goto done;
    if (healthy) {
        data = PyObject_CallOneArg(join_bytes, out);
        PyObject *r = data ? PyObject_CallMethodOneArg(transport, s_write, data) : NULL;
        if (r == NULL)
            goto done;
        Py_DECREF(r);
    }
    result = Py_NewRef(Py_None);
done:
    Py_DECREF(out);
    Py_XDECREF(transport);
    Py_XDECREF(data);
    return result;
}

static PyObject *
conn_cql_receive(PyObject *conn, PyObject *nbytes)
{
    Py_ssize_t n = PyLong_AsSsize_t(nbytes);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    return cql_receive_impl(conn, n);
}

static PyObject *
conn_hbase_receive(PyObject *conn, PyObject *nbytes)
{
    Py_ssize_t n = PyLong_AsSsize_t(nbytes);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    return hbase_receive_impl(conn, n);
}

static PyMethodDef hook_get_buffer = {"get_buffer", conn_get_buffer, METH_O,
                                      PyDoc_STR("BufferedConnection.get_buffer, compiled.")};
static PyMethodDef hook_flush = {"_flush", conn_flush, METH_NOARGS, PyDoc_STR("SharedConnection._flush, compiled.")};
static PyMethodDef hook_cql = {"buffer_updated", conn_cql_receive, METH_O, PyDoc_STR("cql_receive(conn, nbytes).")};
static PyMethodDef hook_hbase = {"buffer_updated", conn_hbase_receive, METH_O,
                                 PyDoc_STR("hbase_receive(conn, nbytes).")};

static PyObject *
speedups_hooks(PyObject *module, PyObject *args)
{
    PyObject *conn;
    const char *kind;
    if (!PyArg_ParseTuple(args, "Os:hooks", &conn, &kind))
        return NULL;
    PyMethodDef *receive = strcmp(kind, "cql") == 0 ? &hook_cql : strcmp(kind, "hbase") == 0 ? &hook_hbase : NULL;
    if (receive == NULL) {
        PyErr_Format(PyExc_ValueError, "hooks: kind is \"cql\" or \"hbase\", not %.50s", kind);
        return NULL;
    }
    PyObject *get_buffer = PyCFunction_New(&hook_get_buffer, conn);
    PyObject *updated = get_buffer ? PyCFunction_New(receive, conn) : NULL;
    PyObject *flush = updated ? PyCFunction_New(&hook_flush, conn) : NULL;
    PyObject *r = flush ? PyTuple_Pack(3, get_buffer, updated, flush) : NULL;
    Py_XDECREF(get_buffer);
    Py_XDECREF(updated);
    Py_XDECREF(flush);
    return r;
}

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

static PyObject *
speedups_record(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
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

static PyObject *
speedups_outcomes(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
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

/* -- pending: a CQL sequence's statements and values ------------------------------------------- *
 *
 * pending(steps, READ, read_every, updates) is the first loop of CassandraBinding.sequence where
 * every statement is prepared already: a read of every field (arg None) is (read_every, (key,)),
 * an update (op, key, values) is (updates[tuple(values)], (*values.values(), key)). None where a
 * step needs the Python loop (a read of some fields, no read_every, an update of a shape not
 * prepared yet, values that are not a dict), or steps are not a list. */

static PyObject *
speedups_pending(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
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

/* -- choose: a lane's next transactions ------------------------------------------------------ */

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
static PyObject *
speedups_choose(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
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

/* -- a tick's histograms (workbench/metrics/histograms.py, snapshot.py) ---------------------- *
 * Every tick makes an HdrHistogram of each operation's exact latency tallies and summarises it
 * (mean, percentiles): thousands of distinct values a second, and 23,552 buckets to walk per
 * histogram. Both loops here are the Python's (from_counts, summarize), value for value. */

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
static PyObject *
speedups_tally(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
static PyObject *
speedups_summarize(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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

/* -- the module ---------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"choose", (PyCFunction)(void (*)(void))speedups_choose, METH_FASTCALL,
     PyDoc_STR("choose(ctx, n): LaneWorkload.choose, the next n transactions, draw for draw.")},
    {"tally", (PyCFunction)(void (*)(void))speedups_tally, METH_FASTCALL,
     PyDoc_STR("tally(buckets, counts, mask, unit, shift, base, highest): from_counts's loop.")},
    {"summarize", (PyCFunction)(void (*)(void))speedups_summarize, METH_FASTCALL,
     PyDoc_STR("summarize(buckets, shift, half, unit, wanted, targets): summarize's walk.")},
    {"fnvhash64", speedups_fnvhash64, METH_O, PyDoc_STR("YCSB's Utils.fnvhash64 of a non-negative long.")},
    {"hbase_setup", hbase_setup, METH_VARARGS,
     PyDoc_STR("hbase_setup(_Chain, _finish, _METHODS, CALL_IDS, found_cells, decode_mutate, LazyCells): "
               "what hbase_receive knows.")},
    {"hbase_make", (PyCFunction)(void (*)(void))hbase_make, METH_FASTCALL,
     PyDoc_STR("hbase_make(ctx, step): NativeBinding's make for one region, its usual steps in C.")},
    {"cql_setup", cql_setup, METH_VARARGS, PyDoc_STR("cql_setup(_Chain, LazyRow): the classes cql_receive knows.")},
    {"record", (PyCFunction)(void (*)(void))speedups_record, METH_FASTCALL,
     PyDoc_STR("record(steps, outcomes, m_read, m_update, READ, OK): run_sequence's recording.")},
    {"outcomes", (PyCFunction)(void (*)(void))speedups_outcomes, METH_FASTCALL,
     PyDoc_STR("outcomes(steps, answers, READ, OK, NOT_FOUND, failed, row_of, without_nulls): "
               "CassandraBinding.sequence's answers as outcomes.")},
    {"pending", (PyCFunction)(void (*)(void))speedups_pending, METH_FASTCALL,
     PyDoc_STR("pending(steps, READ, read_every, updates): CassandraBinding.sequence's statements, "
               "or None.")},
    {"conn_setup", conn_setup, METH_VARARGS,
     PyDoc_STR("conn_setup(cls, kind): the slots of CqlConnection (\"cql\") or RpcConnection (\"hbase\").")},
    {"hooks", speedups_hooks, METH_VARARGS,
     PyDoc_STR("hooks(conn, kind): (get_buffer, buffer_updated, _flush) compiled, bound to conn.")},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "workbench._speedups",
    .m_doc = PyDoc_STR("A lane's hot path, compiled (workbench/core/speedups.py)."),
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    limit_name = PyUnicode_InternFromString("limit");
    struct { PyObject **name; const char *text; } names[] = {
        {&s_n, "_n"}, {&s_in, "_in"}, {&s_receiving, "_receiving"}, {&s_broken, "broken"},
        {&s_inflight, "_inflight"}, {&s_out, "_out"}, {&s_flush, "_flush"},
        {&s_stmt, "stmt"}, {&s_columns, "columns"}, {&s_layout, "layout"}, {&s_answers, "answers"},
        {&s_retried, "retried"}, {&s_t0, "t0"}, {&s_go, "go"}, {&s_items, "items"}, {&s_more, "more"},
        {&s_done, "done"}, {&s_set_result, "set_result"}, {&s_body, "body"}, {&s_route, "route"},
        {&s_orphans, "_orphans"}, {&s_stream, "_stream"}, {&s_loop, "loop"}, {&s_call_soon, "call_soon"},
        {&s_timer, "_timer"}, {&s_arm, "_arm"}, {&s_version, "version"}, {&s_send, "send"},
        {&s_size, "size"}, {&s_done_method, "done"}, {&s_malformed, "_malformed"},
        {&s_failed_answer, "_failed_answer"}, {&s_halt, "_halt"},
        {&s_text_head, "text_head"}, {&s_arity, "arity"}, {&s_conns, "conns"}, {&s_lr_columns, "_columns"},
        {&s_lr_layout, "_layout"}, {&s_lr_buf, "_buf"}, {&s_lr_i, "_i"}, {&s_lr_row, "_row"},
        {&s_decode, "decode"}, {&s_lc_body, "_body"}, {&s_make, "make"}, {&s_call_id, "_call_id"}, {&s_sent, "sent"}, {&s_hsend, "_send"},
        {&s_view, "_view"}, {&s_first, "first"}, {&s_ok, "ok"}, {&s_n_ok, "n_ok"}, {&s_record, "record"}, {&s_transport, "transport"}, {&s_write, "write"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *names[i].name = PyUnicode_InternFromString(names[i].text);
        if (*names[i].name == NULL)
            return NULL;
    }
    PyObject *empty = PyBytes_FromStringAndSize(NULL, 0);
    join_bytes = empty ? PyObject_GetAttrString(empty, "join") : NULL;
    zero = PyLong_FromLong(0);
    Py_XDECREF(empty);
    if (limit_name == NULL || join_bytes == NULL || zero == NULL || PyType_Ready(&KeyNamerType) < 0 || PyType_Ready(&ZipfianKeysType) < 0
        || PyType_Ready(&DeadlineType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "KeyNamer", (PyObject *)&KeyNamerType) < 0
        || PyModule_AddObjectRef(m, "ZipfianKeys", (PyObject *)&ZipfianKeysType) < 0
        || PyModule_AddObjectRef(m, "Deadline", (PyObject *)&DeadlineType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
