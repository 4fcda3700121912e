"""Can two runs be compared? The manifest fields that change results, and which of them differ.

    for diff in differing(base.manifest, other.manifest, base.properties, other.properties):
        print(diff.line())   # not comparable: server.version differs: 5.0.2 (baseline), 4.1.7 (this run)
    not_comparable_lines([base, other, ...], labels)   # the same lines for runs side by side

A run's figures depend on more than its workload: the server's product and version, the client,
the record count, the cores the client had, the CPU caps on the servers, the consistency asked
for and the servers' extra JVM flags. Two runs that differ in one of these measure two different
things; `runs compare` says so and `workbench check` refuses them (exit status 2) unless
`--allow-different FIELD` says the difference is meant (an upgrade check compares two server
versions on purpose).

A field is compared as its manifest holds it: "unknown" on one side only is a difference too (the
run cannot show that it is the same). A run without a manifest (recorded before runs had one) has
nothing to compare: no field is said to differ.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Manifest = Mapping[str, Any]
Props = Mapping[str, str]


def _get(manifest: Manifest, *path: str) -> Any:
    value: Any = manifest
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _client(m: Manifest, _p: Props) -> Any:
    client = m.get("client")
    return client.get("name") if isinstance(client, Mapping) else client


def _recordcount(m: Manifest, p: Props) -> Any:
    if "recordcount" in p:
        return p["recordcount"]
    for item in _get(m, "workload", "overrides") or ():
        key, _, value = str(item).partition("=")
        if key == "recordcount":
            return value
    return None


def _cores(m: Manifest, _p: Props) -> Any:
    host = m.get("host") or {}
    return host.get("cpus_usable") or host.get("cpus") if isinstance(host, Mapping) else None


def _consistency(m: Manifest, _p: Props) -> Any:
    settings = _get(m, "server", "settings") or {}
    keys = ("read_consistency", "write_consistency", "write_concern")
    found = {k: settings[k] for k in keys if isinstance(settings, Mapping) and k in settings}
    return ", ".join(f"{k} {v}" for k, v in found.items()) or None


def _jvm_flags(m: Manifest, _p: Props) -> Any:
    cluster = m.get("cluster")
    if not isinstance(cluster, Mapping) or cluster.get("provider") == "external":
        return None
    return cluster.get("jvm_flags") or "none"  # recorded before runs named them: there were none


# Each field that changes results: its name (what --allow-different takes) and how it is read
# from a manifest and the run's properties.
FIELDS: dict[str, Callable[[Manifest, Props], Any]] = {
    "server.product": lambda m, p: _get(m, "server", "product"),
    "server.version": lambda m, p: _get(m, "server", "version"),
    "client": _client,
    "recordcount": _recordcount,
    "cores": _cores,
    "cpu_caps": lambda m, p: _get(m, "cluster", "cpu_caps"),
    "consistency": _consistency,
    "jvm_flags": _jvm_flags,
}


@dataclass(frozen=True)
class FieldDifference:
    field: str
    baseline: Any
    other: Any

    def line(self, baseline: str = "baseline", other: str = "this run") -> str:
        return (f"not comparable: {self.field} differs: {_shown(self.baseline)} ({baseline}), "
                f"{_shown(self.other)} ({other})")


def _shown(value: Any) -> str:
    if value is None:
        return "not recorded"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def differing(baseline: Manifest | None, other: Manifest | None, baseline_props: Props | None = None,
              other_props: Props | None = None) -> list[FieldDifference]:
    """The result-changing fields whose values differ, in FIELDS' order ([] when either run has no
    manifest)."""
    if not baseline or not other:
        return []
    out = []
    for name, read in FIELDS.items():
        a, b = read(baseline, baseline_props or {}), read(other, other_props or {})
        if a is None and b is None:
            continue
        if str(a) != str(b):
            out.append(FieldDifference(name, a, b))
    return out


def not_comparable_lines(results: Sequence[Any], labels: Sequence[str]) -> list[str]:
    """What `runs compare` prints and the Compare screen shows: for each run after the first (the
    baseline), a line per result-changing field that differs from the baseline's. `results` are
    RunResults (anything with .manifest and .properties), `labels` how each run is called."""
    base = results[0]
    return [diff.line(f"{labels[0]}, baseline", label)
            for label, result in zip(labels[1:], results[1:], strict=True)
            for diff in differing(base.manifest, result.manifest, base.properties, result.properties)]
