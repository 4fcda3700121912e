/* common.h: what every file of workbench._speedups stands on, and nothing of ours beneath it:
 * Python's headers, the interned names more than one file reads (wb_names), slots read and
 * written at their offsets (wb_find_slots, wb_slot_get, wb_slot_set), the clock and a
 * big-endian word. common.c holds its functions; it calls no other file (tests/unit/
 * test_csrc_layers.py checks that the files call each other in one direction only).
 *
 * Names: what a file gives the others is declared in its own header, prefixed wb_, and
 * WB_INTERNAL (hidden: not exported from the .so, and called directly, not through the PLT, so
 * the split costs no call's indirection); everything else is static in its file. The few steps
 * every receive path takes per frame are static inline in the headers.
 *
 * Slots: the compiled paths read and write some objects' __slots__ at the offsets their member
 * descriptors give, for objects of exactly the classes the *_setup functions were given. Every
 * setup finds them with wb_find_slots, which refuses a class without one of them, all setups
 * alike: TypeError "<setup>: <module>.<class> has no writable slot '<name>'", and nothing of the
 * classes in use changes.
 */
#ifndef WORKBENCH_COMMON_H
#define WORKBENCH_COMMON_H

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

/* -- interned names -------------------------------------------------------------------------- */

/* The attribute names more than one file reads; a name one file alone reads is static there. */
typedef struct {
    /* a connection's slots of wire.py's BufferedConnection and SharedConnection (and the sent
     * every connection class has), in conn.c's order */
    PyObject *n, *in, *view, *receiving, *broken, *inflight, *out, *timer, *loop, *transport, *sent;
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

/* wb_names interned: the first thing the module does. 0, or -1 with an exception. */
WB_INTERNAL int wb_common_init(void);

/* -- slots by offset ------------------------------------------------------------------------- */

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

#endif /* WORKBENCH_COMMON_H */
