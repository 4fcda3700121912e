/* choice.h: which transactions a lane runs next (choice.c), as the module calls it. */
#ifndef WORKBENCH_CHOICE_H
#define WORKBENCH_CHOICE_H

#include "common.h"

/* the module's choose(ctx, n) */
WB_INTERNAL PyObject *wb_choose(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif /* WORKBENCH_CHOICE_H */
