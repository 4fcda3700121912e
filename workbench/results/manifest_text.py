"""A run's manifest (manifest.py) in a few lines of text, as `workbench runs show` prints it."""

from __future__ import annotations

from typing import Any

from workbench.results.manifest import equivalent_command


def manifest_lines(manifest: dict[str, Any]) -> list[str]:
    """One line per part: workbench, command, workload, client, server, cluster, host. [] for a
    run recorded before runs had manifests (or imported from YCSB's text)."""
    if not manifest:
        return []
    lines = [_workbench(manifest.get("workbench") or {})]
    if manifest.get("rerun_of") is not None:
        lines.append(f"rerun of run {manifest['rerun_of']}")
    lines.append(f"command: {manifest.get('command', '?')}")
    lines.append(f"equivalent: {equivalent_command(manifest)}")
    lines.append(_workload(manifest.get("workload") or {}))
    client = manifest.get("client") or {}
    if client.get("name"):
        how = "hot path compiled" if client.get("compiled") else "hot path in Python"
        loop = f", {client['event_loop']}" if client.get("event_loop") else ""
        lines.append(f"client: {client['name']} ({how}{loop})")
    lines.append(_server(manifest.get("server") or {}))
    if manifest.get("cluster"):
        lines.append(_cluster(manifest["cluster"]))
    lines.append(_host(manifest.get("host") or {}))
    return lines


def _workbench(build: dict[str, Any]) -> str:
    line = f"workbench {build.get('version', '?')}"
    if build.get("commit"):
        changed = ", with uncommitted changes" if build.get("modified") else ""
        line += f" (git {build['commit'][:12]}{changed})"
    return line


def _workload(workload: dict[str, Any]) -> str:
    files = [f"{f['path']} (sha256 {str(f.get('sha256'))[:16]})" for f in workload.get("files") or ()]
    seed = workload.get("seed")
    return (f"workload: {', '.join(files) or 'no -P file'}; seed "
            + (str(seed) if seed is not None else "none (each run draws its own)"))


def _server(server: dict[str, Any]) -> str:
    settings = "; ".join(f"{k} {v}" for k, v in (server.get("settings") or {}).items())
    return f"server: {server.get('product', '?')} {server.get('version', '?')}" + \
        (f"; {settings}" if settings else "")


def _cluster(cluster: dict[str, Any]) -> str:
    caps = cluster.get("cpu_caps")
    caps_text = ", ".join(f"{n} {c:g}" for n, c in caps.items()) if isinstance(caps, dict) else caps
    extra = "".join(f"; {k} {cluster[k]}" for k in ("docker_cpus", "docker_memory", "docker_network",
                                                     "data_dir") if k in cluster)
    flags = cluster.get("jvm_flags")
    if flags and flags != "none":
        shown = "; ".join(f"{n} {f}" for n, f in flags.items()) if isinstance(flags, dict) else flags
        extra += f"; JVM flags {shown}"
    return (f"cluster: {cluster.get('name')} ({cluster.get('provider')} {cluster.get('kind')}, "
            f"{cluster.get('nodes')} nodes; CPU caps {caps_text}{extra})")


def _host(host: dict[str, Any]) -> str:
    memory = host.get("memory_bytes")
    load = host.get("load_average")
    load_text = " ".join(f"{x:.2f}" for x in load) if isinstance(load, list) else str(load)
    return (f"host: {host.get('name', '?')}, {host.get('cpu_model', '?')}, {host.get('cpus', '?')} cores "
            f"({host.get('cpus_usable', '?')} usable), "
            + (f"{memory / 2**30:.1f} GiB" if memory else "memory unknown")
            + f", {host.get('kernel', '?')}, load {load_text} at the start")
