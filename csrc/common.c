/* common.c: what every file of workbench._speedups shares (common.h): the names more than one
 * file reads, interned once, and wb_find_slots, with which every *_setup finds the slots it
 * reads. It calls no other file of ours.
 */
#include "common.h"

WbNames wb_names;

int
wb_intern(const WbName *names, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        PyObject *name = PyUnicode_InternFromString(names[i].text);
        if (name == NULL)
            return -1;
        Py_XSETREF(*names[i].at, name);
    }
    return 0;
}

int
wb_common_init(void)
{
    const WbName names[] = {
        {&wb_names.n, "_n"}, {&wb_names.in, "_in"}, {&wb_names.view, "_view"}, {&wb_names.receiving, "_receiving"},
        {&wb_names.broken, "broken"}, {&wb_names.inflight, "_inflight"}, {&wb_names.out, "_out"},
        {&wb_names.timer, "_timer"}, {&wb_names.loop, "loop"}, {&wb_names.transport, "transport"},
        {&wb_names.sent, "sent"},
        {&wb_names.t0, "t0"}, {&wb_names.items, "items"}, {&wb_names.more, "more"},
        {&wb_names.answers, "answers"}, {&wb_names.row, "_row"}, {&wb_names.malformed, "_malformed"},
    };
    return wb_intern(names, sizeof(names) / sizeof(names[0]));
}

/* -- slots by offset -------------------------------------------------------------------------- */

/* The offset of type's slot `name`: 1 found, 0 not a writable object slot of type (no member
 * descriptor by that name, or one of another kind), -1 another error. */
static int
slot_offset(PyObject *type, PyObject *name, Py_ssize_t *offset)
{
    PyObject *descr = PyObject_GetAttr(type, name);
    if (descr == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type)
             && ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX
             && !(((PyMemberDescrObject *)descr)->d_member->flags & READONLY);
    if (ok)
        *offset = ((PyMemberDescrObject *)descr)->d_member->offset;
    Py_DECREF(descr);
    return ok;
}

/* Every setup's refusal: TypeError "<setup>: <module>.<qualname> has no writable slot '<name>'". */
static void
refuse(const char *setup, PyObject *type, PyObject *name)
{
    PyObject *module = PyObject_GetAttrString(type, "__module__");
    PyObject *qualname = module ? PyType_GetQualName((PyTypeObject *)type) : NULL;
    if (qualname != NULL && PyUnicode_Check(module))
        PyErr_Format(PyExc_TypeError, "%s: %U.%U has no writable slot %R", setup, module, qualname, name);
    else {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: %R has no writable slot %R", setup, type, name);
    }
    Py_XDECREF(module);
    Py_XDECREF(qualname);
}

#define MAX_SLOTS 32

int
wb_find_slots(const char *setup, const WbSlot *slots, size_t count)
{
    Py_ssize_t found[MAX_SLOTS]; /* all or none: the classes in use keep theirs if one is missing */
    if (count > MAX_SLOTS) {
        PyErr_Format(PyExc_SystemError, "%s: more than %d slots", setup, MAX_SLOTS);
        return -1;
    }
    for (size_t k = 0; k < count; k++) {
        int ok = slot_offset(slots[k].type, slots[k].name, &found[k]);
        if (ok <= 0) {
            if (ok == 0)
                refuse(setup, slots[k].type, slots[k].name);
            return -1;
        }
    }
    for (size_t k = 0; k < count; k++)
        *slots[k].offset = found[k];
    return 0;
}
