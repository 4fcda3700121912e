/* keys.h: which key a transaction names (keys.c), as the module calls it. */
#ifndef WORKBENCH_KEYS_H
#define WORKBENCH_KEYS_H

#include "common.h"

/* the module's fnvhash64(n); KeyNamer and ZipfianKeys readied and added to the module by
 * wb_keys_init: 0, or -1 with an exception */
WB_INTERNAL PyObject *wb_fnvhash64(PyObject *module, PyObject *value);
WB_INTERNAL int wb_keys_init(PyObject *module);

#endif /* WORKBENCH_KEYS_H */
