/* hist.h: a tick's histograms (hist.c), as the module calls it. */
#ifndef WORKBENCH_HIST_H
#define WORKBENCH_HIST_H

#include "common.h"

/* the module's tally(...) and summarize(...) */
WB_INTERNAL PyObject *wb_tally(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
WB_INTERNAL PyObject *wb_summarize(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif /* WORKBENCH_HIST_H */
