"""Build the project's wheel the way a user's `pip wheel .` would, from the tracked files only
(a copy of what a fresh clone holds), without network: setuptools from the test environment."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tracked_files() -> list[str] | None:
    """The repository's tracked files, or None outside a git checkout (then tests skip)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    done = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
    return [f for f in done.stdout.decode().split("\0") if f and (ROOT / f).is_file()]


def build_wheel(work: Path) -> Path:
    files = tracked_files()
    assert files is not None
    source = work / "source"
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    out = work / "dist"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "--disable-pip-version-check", "-q", "-w", str(out), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = out.glob("*.whl")
    return wheel


def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def requirements(wheel: Path) -> list[str]:
    """The wheel's own Requires-Dist lines, without those of an extra."""
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        text = z.read(meta).decode()
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")
            and "extra ==" not in line]


def dependency_closure(wheel: Path) -> list:
    """The distributions of this environment that the wheel's requirements need, theirs too
    (markers judged for this interpreter, no extras): what pip would install beside it."""
    from importlib import metadata

    from packaging.requirements import Requirement

    found: dict[str, metadata.Distribution] = {}
    todo = [Requirement(r) for r in requirements(wheel)]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        key = req.name.lower().replace("_", "-")
        if key in found:
            continue
        dist = metadata.distribution(req.name)  # PackageNotFoundError: the test environment lacks it
        assert dist.version in req.specifier or not req.specifier, (req, dist.version)
        found[key] = dist
        todo += [Requirement(r) for r in dist.requires or []]
    return list(found.values())


def link_dependencies(wheel: Path, site_packages: Path) -> list[str]:
    """Make the wheel's dependency closure importable in another environment's site-packages:
    each distribution's top-level files and folders and its .dist-info, symlinked from this
    environment's (so that `pip check` there judges them). Copying them is what `pip install`
    does, and took a loaded CI machine three minutes; the names of what was linked."""
    linked = []
    for dist in dependency_closure(wheel):
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in sorted(tops):
            source = Path(dist.locate_file(top))
            target = site_packages / top
            if source.exists() and not target.exists() and top != "__pycache__":
                target.symlink_to(source)
        linked.append(f"{dist.metadata['Name']} {dist.version}")
    return linked
