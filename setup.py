"""The optional compiled part of workbench (everything else is in pyproject.toml).

workbench._speedups (csrc/*.c, one file per job, each with its header) is a lane's hot path in
C (the key choice, and the native Cassandra and HBase clients' usual answers with their next
requests). It is built
where a C compiler and Python's headers exist (Debian: gcc and python3-dev) and skipped with a
warning where they do not: workbench/speedups.py then runs the same code in Python, and a
run records which it used (environment.speedups).
"""

from glob import glob

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "workbench._speedups",
            # the module (speedups.c), what every file stands on (common.c), then one file per job,
            # along the Python's seams (each declared in its header)
            ["csrc/speedups.c", "csrc/common.c", "csrc/keys.c", "csrc/choice.c", "csrc/deadline.c",
             "csrc/record.c", "csrc/hist.c", "csrc/conn.c", "csrc/cql.c", "csrc/cql_statements.c",
             "csrc/hbase.c"],
            # the headers: a change rebuilds every file, and an sdist ships them
            depends=sorted(glob("csrc/*.h")),
            # The zipfian draw must round as Python's float arithmetic does: no fused multiply-add.
            extra_compile_args=["-O2", "-ffp-contract=off"],
            optional=True,
        )
    ]
)
