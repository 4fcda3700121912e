"""HBase's Thrift1 interface as the module `Hbase_thrift`, for the Thrift clients.

The IDL is the `Hbase.thrift` that happybase ships; thriftpy2 turns it into a module and registers
it as `Hbase_thrift` (happybase's own import does the same with the same file, and whichever
comes first is the one both use). Loading it here says where the module comes from instead of
relying on `import happybase` having done it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import thriftpy2

MODULE = "Hbase_thrift"


def _load() -> ModuleType:
    loaded = sys.modules.get(MODULE)
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec("happybase")  # its folder, without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the HBase Thrift clients need happybase's Hbase.thrift: pip install happybase")
    idl = Path(next(iter(spec.submodule_search_locations))) / "Hbase.thrift"
    return thriftpy2.load(str(idl), module_name=MODULE)


Hbase_thrift = _load()
Hbase = Hbase_thrift.Hbase
BatchMutation = Hbase_thrift.BatchMutation
Mutation = Hbase_thrift.Mutation
TScan = Hbase_thrift.TScan
