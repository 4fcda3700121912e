/* keys.c: which key a transaction names. fnvhash64 (YCSB's Utils.fnvhash64), KeyNamer (the key
 * name of a key number) and ZipfianKeys (the next key name of YCSB's default request
 * distribution, scrambled zipfian), mirroring workbench/config/keys.py and the closure of
 * core/workload.py's LaneWorkload._key_source, draw for draw (tests/unit/test_speedups.py).
 *
 *   fnvhash64(n)      YCSB's Utils.fnvhash64 for a non-negative long (workbench/config/keys.py)
 *   KeyNamer(zeropadding, ordered)(n)
 *                     CoreWorkload.buildKeyName: "user" + zero padding + hashed or plain n
 *   ZipfianKeys(...)()
 *                     the next key name of YCSB's default request distribution (scrambled
 *                     zipfian): LaneWorkload._key_source's closure, draw for draw
 *
 * Floating point: the zipfian draw is ((eta * u) - eta) + 1 raised to alpha, as Python
 * evaluates it; setup.py compiles with -ffp-contract=off so that no multiply-add is fused,
 * and pow() is the C library's, which Python's float ** calls too.
 */
#include "keys.h"

#include <math.h>

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

PyObject *
wb_fnvhash64(PyObject *module, PyObject *value)
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

static PyObject *limit_name; /* "limit", interned (keys.c's one name) */

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

int
wb_keys_init(PyObject *module)
{
    const WbName names[] = {{&limit_name, "limit"}};
    if (wb_intern(names, sizeof(names) / sizeof(names[0])) < 0 || PyType_Ready(&KeyNamerType) < 0
        || PyType_Ready(&ZipfianKeysType) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "KeyNamer", (PyObject *)&KeyNamerType) < 0
        || PyModule_AddObjectRef(module, "ZipfianKeys", (PyObject *)&ZipfianKeysType) < 0)
        return -1;
    return 0;
}
