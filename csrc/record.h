/* record.h: a sequence's answers as outcomes, and the outcomes into the lane's meters (record.c), as the module calls it. */
#ifndef WORKBENCH_RECORD_H
#define WORKBENCH_RECORD_H

#include "common.h"

/* the module's record(...) and outcomes(...), and record.c's names: 0, or -1 with an exception */
WB_INTERNAL PyObject *wb_record(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
WB_INTERNAL PyObject *wb_outcomes(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
WB_INTERNAL int wb_record_init(void);

#endif /* WORKBENCH_RECORD_H */
