"""The C files of workbench._speedups (csrc/) call each other in one direction only, and none is
over 600 lines (docs/ARCHITECTURE.md).

A file is its .c and its .h together (conn.c and conn.h are "conn"). It depends on another when
it includes that one's header (#include "x.h") or calls (or names, as a method table or a
function pointer does) a function the other defines (its definitions: a name followed by its
parameters at the start of a line, then "{" at the start of the next; static ones count too,
since a header's static inline functions are called from other files). The dependencies must
form no circle: the module (speedups.c) calls every file, the protocols call conn.c, every file
calls common.c, and nothing calls back.
"""

from __future__ import annotations

import re
from pathlib import Path

CSRC = Path(__file__).resolve().parents[2] / "csrc"
MAX_LINES = 600

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)
# a definition: `name(params)` beginning a line (its return type on the line before, the house's
# layout) or after its type on the same line, then `{` opening the next line
_DEFINITION = re.compile(r"^(?:[A-Za-z_][\w \t*]*?[\s*])?([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\n\{", re.M)
_NAME = re.compile(r"\b([A-Za-z_]\w*)\b")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def _code(path: Path) -> str:
    """The file without its comments (a name in them is no call)."""
    return _COMMENT.sub(" ", path.read_text())


def units(folder: Path) -> dict[str, list[Path]]:
    """Each unit (a file's stem) and its .c and .h files."""
    found: dict[str, list[Path]] = {}
    for path in sorted(folder.glob("*.[ch]")):
        found.setdefault(path.stem, []).append(path)
    return found


def dependencies(folder: Path) -> dict[str, set[str]]:
    """Each unit and the units it includes or calls (never itself)."""
    files = units(folder)
    code = {unit: "\n".join(_code(p) for p in paths) for unit, paths in files.items()}
    defined_in: dict[str, str] = {}
    for unit, text in code.items():
        for name in _DEFINITION.findall(text):
            assert name not in defined_in or defined_in[name] == unit, (
                f"{name} is defined in both {defined_in[name]} and {unit}")
            defined_in[name] = unit
    graph: dict[str, set[str]] = {}
    for unit, text in code.items():
        uses = {stem for stem in _INCLUDE.findall(text) if stem in files}
        uses |= {defined_in[name] for name in _NAME.findall(_STRING.sub('""', text)) if name in defined_in}
        graph[unit] = uses - {unit}
    return graph


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of units (its first unit again at its end), or None."""
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done
    path: list[str] = []

    def walk(unit: str) -> list[str] | None:
        state[unit] = 1
        path.append(unit)
        for used in sorted(graph.get(unit, ())):
            if state.get(used) == 1:
                return path[path.index(used):] + [used]
            if used not in state and (found := walk(used)):
                return found
        path.pop()
        state[unit] = 2
        return None

    for unit in sorted(graph):
        if unit not in state and (found := walk(unit)):
            return found
    return None


def test_the_parser_finds_the_files_definitions_includes_and_calls():
    """The rules below see what is there: the module includes and calls each file, the protocols
    conn.c, and conn.c common.c (a parser that found nothing would find no circle either)."""
    graph = dependencies(CSRC)
    assert {"speedups", "common", "conn", "cql", "hbase", "keys", "deadline"} <= set(graph)
    assert graph["speedups"] >= set(graph) - {"speedups"}
    assert {"conn", "common", "deadline"} <= graph["cql"] and {"conn", "common", "deadline"} <= graph["hbase"]
    assert graph["conn"] == {"common"}
    assert graph["common"] == set()


def test_the_c_files_call_each_other_in_one_direction_only():
    assert circle(dependencies(CSRC)) is None, " -> ".join(circle(dependencies(CSRC)) or [])


def test_no_c_file_is_over_600_lines():
    lines = {p.name: len(p.read_text().splitlines()) for p in sorted(CSRC.glob("*.[ch]"))}
    assert lines and not {name: n for name, n in lines.items() if n > MAX_LINES}, lines


def test_a_circle_is_found_and_named(tmp_path):
    """The rule's own check: a call back from a file to one that calls it is a circle."""
    (tmp_path / "low.h").write_text("int low(void);\n")
    (tmp_path / "low.c").write_text('#include "low.h"\nint\nlow(void)\n{\n    return high(); /* up */\n}\n')
    (tmp_path / "high.c").write_text('#include "low.h"\nint\nhigh(void)\n{\n    return low();\n}\n')
    assert circle(dependencies(tmp_path)) == ["high", "low", "high"]
    (tmp_path / "low.c").write_text('#include "low.h"\nint\nlow(void)\n{\n    return 1; /* high() */\n}\n')
    assert circle(dependencies(tmp_path)) is None
