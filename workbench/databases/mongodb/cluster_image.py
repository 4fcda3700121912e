"""The workbench/ferretdb image (clusters/images.py builds it): FerretDB (the binary
cluster_ferretdb_build.py builds from its pinned source) and Debian's PostgreSQL 15, with an entry point
that honours the official `mongo` image's contract; its version, inputs, content and files."""

from __future__ import annotations

from pathlib import Path

from workbench.clusters.images import BASE, image_name
from workbench.clusters.launch import template_text
from workbench.clusters.progress import OnProgress, report
from workbench.databases.mongodb import cluster_ferretdb_build as gobuild


def ferretdb_version(kind: str) -> str:
    return gobuild.VERSION


def ferretdb_inputs(kind: str) -> bytes:
    return gobuild.PINNED_SUM.encode()


def ferretdb_content(kind: str, cache: Path, progress: OnProgress) -> tuple[dict, dict]:
    """FerretDB's binary (built from its pinned source); apt-get fetches PostgreSQL (host network)."""
    binary = gobuild.fetch(cache, progress)
    report(progress, "build", f"{image_name(kind)}: building from {binary} and Debian's postgresql-15")
    return {"bin/ferretdb": binary}, {"network_mode": "host"}


def ferretdb_files(kind: str) -> dict[str, tuple[str, int]]:
    return {
        "Dockerfile": ("\n".join((
            f"FROM {BASE}",
            "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
            "--no-install-recommends postgresql-15 && rm -rf /var/lib/apt/lists/*",
            "COPY bin/ferretdb /usr/local/bin/ferretdb",
            "COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh",
            "VOLUME /data/db",
            "EXPOSE 27017",
            'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]',
            'CMD ["mongod"]',
        )) + "\n", 0o644),
        "docker-entrypoint.sh": (template_text("ferretdb-entrypoint.sh"), 0o755),
    }
