"""One database, one place (issue 53, 3): outside each database's own folder
(workbench/databases/<name>/), no code chooses behaviour by a database's or cluster kind's name
typed as a literal. The rest of the program asks the database's descriptor instead.

What counts, read from the sources' syntax trees: a comparison with a name (`kind ==
"cassandra"`, `db != "memory"`, `kind in ("hbase", ...)`), a dict keyed by a name, and a tuple,
list or set of two names or more. A name inside a path, a message or a default value is not a
choice and is not flagged. The few left are allowed below, each with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "workbench"
NAMES = {"cassandra", "hbase", "mongodb", "ferretdb", "memory"}

# Each database's own folder, databases/<name>/ (its descriptor and every module of its own): where
# its name is its own business. Anything else is checked, databases/base.py and registry.py too.
def _own(relative: Path) -> bool:
    return len(relative.parts) > 2 and relative.parts[0] == "databases"

# (file, the flagged line's text, stripped) -> why it stays. Keep this short.
ALLOWED = {
    ("clusters/distributions.py", 'VERSIONS = {"cassandra": "5.0.9", "hbase": "2.6.1"}'):
        "the jar fetcher's pins by distribution, beside its lock files (locks/NAME-VERSION.lock)",
    ("clusters/distributions.py", "SERIES = {"): "the same pins, by release series",
    ("experiments/analysis.py", 'if self.server.startswith("FerretDB") and "ferretdb" not in name.lower():'):
        "a server naming itself FerretDB in what it answered, not a database's name",
}


def _named(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def _names_in(node: ast.AST) -> int:
    return sum(_named(e) for e in node.elts) if isinstance(node, ast.Tuple | ast.List | ast.Set) else 0


def choices(source: str) -> list[int]:
    """The lines of `source` that choose by a database's name (see the module's text)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_named(s) or _names_in(s) for s in sides):
                found.append(node.lineno)
        elif isinstance(node, ast.Dict) and any(k is not None and _named(k) for k in node.keys):
            found.append(node.lineno)
        elif _names_in(node) >= 2:
            found.append(node.lineno)
        elif isinstance(node, ast.ClassDef):  # a class attribute `kind = "x"`: said once, in ALLOWED
            for item in node.body:
                if (isinstance(item, ast.Assign) and _named(item.value)
                        and any(isinstance(t, ast.Name) and t.id == "kind" for t in item.targets)):
                    found.append(item.lineno)
    return sorted(set(found))


def test_no_code_outside_a_databases_own_folder_chooses_by_its_name():
    flagged, used = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if _own(relative):
            continue
        lines = path.read_text().splitlines()
        for number in choices(path.read_text()):
            key = (relative.as_posix(), lines[number - 1].strip())
            if key in ALLOWED:
                used.add(key)
            else:
                flagged.append(f"workbench/{key[0]}:{number}: {key[1]}")
    hint = "ask the database's descriptor (workbench/databases/) instead:\n"
    assert flagged == [], hint + "\n".join(flagged)
    assert set(ALLOWED) - used == set(), "allowed lines that no longer exist: remove them from ALLOWED"


def test_the_check_sees_each_kind_of_choice():
    assert choices('if cluster.kind == "cassandra":\n    pass\n') == [1]
    assert choices('x = db != "memory"\n') == [1]
    assert choices('ok = kind in ("ferretdb", "mongodb")\n') == [1]
    assert choices('PRESETS = {"hbase": "hbase-standalone"}\n') == [1]
    assert choices('KINDS = ("cassandra", "hbase")\n') == [1]
    assert choices('class P:\n    kind = "hbase"\n') == [2]
    # a database's own folder is its business; the folder of all of them is not
    assert _own(Path("databases/hbase/protocol/rpc.py")) and _own(Path("databases/memory/__init__.py"))
    assert not _own(Path("databases/registry.py")) and not _own(Path("bindings/registry.py"))
    # a name in a path, a message or a default is not a choice
    assert choices('home = run_dir / "hbase"\nsay("cassandra is up")\ndef f(db="memory"): pass\n') == []
