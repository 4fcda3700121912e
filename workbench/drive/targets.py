"""From a running cluster to a binding's properties: what `--cluster NAME` and the demo use.

This glue lives in the headless layer below every front end: each database's descriptor says how its
binding's properties point at a cluster of one of its kinds (databases/).
"""

from __future__ import annotations

from workbench.clusters.base import Cluster
from workbench.databases import serving
from workbench.errors import ClusterError, ConfigError


def binding_overrides(cluster: Cluster) -> list[str]:
    """-p overrides that point the cluster's binding at it: its database's (databases/)."""
    db, _ = serving(cluster.kind)
    if not db.overrides:
        raise ConfigError(f"no binding for a {cluster.kind} cluster", "use -db and -p hosts=...")
    return db.load("overrides")(cluster)


def find_cluster(name: str) -> Cluster:
    """A cluster `workbench cluster up` started (local or docker provider) or remembered (external)."""
    from workbench.clusters.base import all_providers

    providers = all_providers(progress=False)
    for provider in providers:
        if name in provider.clusters():
            return provider.status(name)
    known = ", ".join(n for p in providers for n in p.clusters()) or "none"
    raise ClusterError(f"no cluster named {name!r}", hint=f"known clusters: {known}; "
                       "`workbench cluster up PRESET` starts one, `--provider external` adds one")


def cluster_overrides(name: str) -> list[str]:
    """Overrides for a cluster `workbench cluster up` started or remembered."""
    return binding_overrides(find_cluster(name))
