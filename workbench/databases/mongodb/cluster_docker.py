"""FerretDB's Docker planner (clusters/docker_plans.py's protocol; the Docker provider runs its
plans): the workbench's own FerretDB image (PostgreSQL inside), on the official mongo image's
contract."""

from __future__ import annotations

from pathlib import Path

from workbench.clusters import images, paths
from workbench.clusters.docker_plans import (
    Check,
    ClusterPlan,
    ContainerPlan,
    Mount,
    Naming,
    Published,
    cluster_plan,
    container_limits,
    plan_networking,
)
from workbench.clusters.specs import data_home
from workbench.databases.mongodb import cluster_ferretdb as ferretdb_local
from workbench.databases.mongodb.cluster_spec import FerretDBSpec
from workbench.errors import ClusterError

MONGO_DATA = "/data/db"  # the official mongo image's data directory (and workbench/ferretdb's)


class FerretDBPlanner:
    """One container with the mongo image's contract: workbench/ferretdb (FerretDB and its
    PostgreSQL), or the preset's docker_image (a real `mongo:7.0` where one can be pulled)."""

    kind = "ferretdb"
    clients: tuple[str, ...] = ("ferretdb",)

    def check(self, spec: FerretDBSpec) -> None:
        if spec.client_tls:
            raise ClusterError("client_tls for FerretDB is served by the local provider only",
                               hint="leave it out with --provider docker, or use the local provider")

    def plan(self, spec: FerretDBSpec, run_dir: Path, naming: Naming) -> ClusterPlan:
        logs = run_dir / "ferretdb"
        logs.mkdir(parents=True, exist_ok=True)
        bridge = spec.docker_network == "bridge"
        inside = 27017 if bridge else spec.port
        env = {"FERRETDB_BACKEND": spec.backend, "WORKBENCH_POSTGRES_PORT": str(spec.postgres_port),
               "POSTGRES_SHARED_BUFFERS": spec.shared_buffers}
        if spec.login:
            secret = ferretdb_local.password_file(run_dir)
            if not secret.exists():
                import secrets

                paths.write_private(secret, secrets.token_urlsafe(18) + "\n")
            env.update(MONGO_INITDB_ROOT_USERNAME=ferretdb_local.FERRETDB_USER,
                       MONGO_INITDB_ROOT_PASSWORD=secret.read_text().strip())
        if spec.data_dir:
            data = data_home(spec, run_dir)
            data.mkdir(parents=True, exist_ok=True)
            mount = Mount(str(data), MONGO_DATA)
        else:
            mount = Mount(naming.object_name("data"), MONGO_DATA)
        needed = [(spec.address, spec.port, "FerretDB")]
        if spec.backend == "postgresql" and not spec.docker_image:
            needed.append(("127.0.0.1", spec.postgres_port, "PostgreSQL"))
        memory, cpus = container_limits(spec)
        container = ContainerPlan(
            name="ferretdb", container_name=naming.object_name("ferretdb"),
            image=spec.docker_image or images.image_name("ferretdb"),
            command=("mongod", "--port", str(inside), "--bind_ip", "0.0.0.0" if bridge else spec.address),
            environment=tuple(env.items()), mounts=(mount,), labels=naming.labels("ferretdb"),
            networking=plan_networking(spec, naming),
            published=(Published(inside, "127.0.0.1", spec.port),) if bridge else (),
            host_ports=tuple(needed), memory=memory, nano_cpus=cpus,
            address="127.0.0.1" if bridge else spec.address, port=spec.port, dir=logs,
            log=logs / "console.log", console_log=logs / "console.log")
        return cluster_plan(spec, naming, [container], [["ferretdb"]])  # PostgreSQL runs inside

    def server_version(self, spec: FerretDBSpec) -> str:
        """FerretDB's honest name in our image; "" for another image (named from what it
        answers once it is up)."""
        if spec.docker_image:
            return ""
        under = "PostgreSQL 15" if spec.backend == "postgresql" else "SQLite"
        from workbench.databases.mongodb import cluster_ferretdb_build as gobuild

        return f"FerretDB {gobuild.VERSION} on {under} (MongoDB protocol)"

    def served_version(self, spec: FerretDBSpec, run_dir: Path) -> str | None:
        """Whatever a preset's own image is, it says so itself (buildInfo); FerretDB is named as
        FerretDB."""
        if not spec.docker_image:
            return None
        from pymongo import MongoClient
        from pymongo.errors import PyMongoError

        from workbench.databases.mongodb.server_name import mongodb_server_name

        client = MongoClient("127.0.0.1" if spec.docker_network == "bridge" else spec.address, spec.port,
                             serverSelectionTimeoutMS=10000, **ferretdb_local.client_options(spec, run_dir))
        try:
            return mongodb_server_name(client.admin.command("buildInfo"))
        except PyMongoError:
            return ""
        finally:
            client.close()

    def wait_ready(self, spec: FerretDBSpec, names: list[str], final: bool, deadline: float,
                   check: Check, run_dir: Path) -> None:
        ferretdb_local.wait_ready(spec, names, final, deadline, check, run_dir)
