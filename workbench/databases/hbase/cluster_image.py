"""The workbench/hbase image's files (clusters/images.py builds it from the locked jars): its
Dockerfile and an entry point that runs the command line the provider gives it (the one the local
provider runs)."""

from __future__ import annotations

from workbench.clusters.images import BASE

HBASE_ENTRYPOINT = r"""#!/bin/sh
# workbench/hbase entry point: runs the command line it is given (the provider's java ...).
set -e
exec "$@"
"""



def hbase_files(kind: str) -> dict[str, tuple[str, int]]:
    return {
        "Dockerfile": ("\n".join((
            f"FROM {BASE}",
            "COPY lib/ /opt/hbase/lib/",
            "COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh",
            "ENV HBASE_HOME=/opt/hbase",
            'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]',
        )) + "\n", 0o644),
        "docker-entrypoint.sh": (HBASE_ENTRYPOINT, 0o755),
    }
