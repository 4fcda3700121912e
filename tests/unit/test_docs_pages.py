"""The user's pages (README.md, BENCHMARKS.md and docs/*.md) name only what exists.

- every `workbench ...` command in a code span or block is a sub-command of workbench/cli.py's
  parser, and each flag it gives is one of that sub-command's options (placeholders such as
  NAME, `[--db cassandra]` or `...` are read as the page means them: the flag is checked, the
  value is not);
- every flag in a table headed `flag` is an option of `workbench run`;
- every property key in a table headed `property` (its first column's code spans) is a key the
  workbench knows: one of config/spec.py's keys, or a key of a binding (config/bindings.py)
  that the workbench's sources name;
- every relative link (and image) leads to a file that exists, and a `#anchor` to a heading of
  that page.

The old benchmark log (docs/history/) is kept as it was written and is not checked.
"""

from __future__ import annotations

import argparse
import re
import shlex
from functools import cache
from pathlib import Path

import pytest

from workbench import cli
from workbench.config import spec
from workbench.config.bindings import binding_for_property

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "BENCHMARKS.md", *(ROOT / "docs").glob("*.md")])

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
SPAN = re.compile(r"(?<!`)`((?:[^`\n]|\n(?!\s*\n))+)`(?!`)")  # may wrap, as Markdown allows
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
KEY = re.compile(r"^[a-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$")


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name


def _blocks(text: str) -> tuple[list[str], str]:
    """The code blocks' lines (fenced, and indented by four spaces), and the prose without them."""
    lines = []
    for block in FENCE.findall(text):
        lines += block.splitlines()
    prose = FENCE.sub("", text)
    rest = []
    for line in prose.splitlines():
        if line.startswith("    ") and line.strip():
            lines.append(line)
        else:
            rest.append(line)
    return lines, "\n".join(rest)


def _join_continued(lines: list[str]) -> list[str]:
    joined, current = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
        else:
            joined.append(current + line)
            current = ""
    if current:
        joined.append(current)
    return joined


def commands_in(text: str) -> list[str]:
    """Every `workbench ...` command line the page names, in code blocks and code spans."""
    block_lines, prose = _blocks(text)
    found = []
    for line in _join_continued(block_lines) + [" ".join(m.group(1).split()) for m in SPAN.finditer(prose)]:
        line = line.split(" #", 1)[0].replace("`", "")
        try:
            words = shlex.split(line, comments=False)
        except ValueError:
            words = line.split()
        start = None
        for i, word in enumerate(words):
            if word in ("&&", ";", "|"):
                if start is not None:
                    found.append(" ".join(words[start:i]))
                start = None
            elif start is None and word.rsplit("/", 1)[-1] == "workbench" and (
                    i == 0 or words[i - 1] in ("&&", ";", "|", "time", "nice") or "=" in words[i - 1]
                    or words[i - 1].isdigit()):
                start = i
        if start is not None:
            found.append(" ".join(words[start:]))
    return found


@cache
def _parser() -> argparse.ArgumentParser:
    return cli.build_parser(None)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return set(parser._option_string_actions)


def command_problems(command: str) -> list[str]:
    """What in one `workbench ...` command line does not exist (empty: all of it does)."""
    words = command.split()[1:]
    parsers = [(_parser(), "workbench")]
    problems = []
    for word in words:
        word = word.strip("[]()'\",")
        if not word or word in ("...", "|"):
            continue
        if word.startswith("-") and len(word) > 1 and not word[1].isdigit():
            flag = word.split("=", 1)[0]
            for parser, name in parsers:
                if flag not in _options(parser):
                    problems.append(f"`{command}`: {name} has no option {flag}")
            continue
        nested = [(sub, f"{name} {choice}") for parser, name in parsers
                  for choice, sub in _subcommands(parser).items() if choice in word.split("|")]
        if nested:
            parsers = nested
        elif all(_subcommands(parser) and not parser._defaults.get("func")
                 and not _positionals(parser) for parser, _ in parsers):
            problems.append(f"`{command}`: {parsers[0][1]} has no sub-command {word}")
            break  # what follows an unknown sub-command cannot be checked
    return problems


def _positionals(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not a.option_strings
            and not isinstance(a, argparse._SubParsersAction)]


def _tables(text: str) -> list[list[list[str]]]:
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def table_column(text: str, header: str) -> list[str]:
    """The code spans of the first column of every table whose first header cell is `header`."""
    spans = []
    for table in _tables(FENCE.sub("", text)):
        if table[0] and table[0][0].lower() == header:
            for row in table[1:]:
                spans += SPAN.findall(row[0])
    return spans


@cache
def _sources() -> str:
    return "\n".join(p.read_text() for p in (ROOT / "workbench").rglob("*.py"))


def known_key(key: str) -> bool:
    if key in spec.KEYS or key in spec.FIXED or key in spec.IGNORED:
        return True
    return binding_for_property(key) is not None and f'"{key}"' in _sources()


def property_problems(text: str) -> list[str]:
    problems = []
    for span in table_column(text, "property"):
        for part in re.split(r"\s*/\s*", span):
            key = part.split("=", 1)[0].strip()
            if not KEY.match(key):
                problems.append(f"`{span}` in a property table is not a property key")
            elif not known_key(key):
                problems.append(f"property {key} is not a key the workbench knows")
    return problems


def flag_problems(text: str) -> list[str]:
    run = _subcommands(_parser())["run"]
    problems = []
    for span in table_column(text, "flag"):
        flag = span.split()[0].split("=", 1)[0]
        if flag.startswith("-") and flag not in _options(run):
            problems.append(f"`workbench run` has no option {flag} (table of flags)")
    return problems


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def link_problems(page: Path, text: str) -> list[str]:
    problems = []
    _, prose = _blocks(text)
    for target in LINK.findall(prose):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto: not ours to check offline
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            problems.append(f"link to {target}: {path} does not exist")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"link to {target}: {_page_id(dest)} has no heading #{anchor}")
    return problems


def test_the_pages_are_found():
    names = {_page_id(p) for p in PAGES}
    assert {"README.md", "BENCHMARKS.md", "docs/PROPERTIES.md", "docs/CLIENTS.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_workbench_command_a_page_names_exists_with_its_flags(page):
    text = page.read_text()
    problems = [p for command in commands_in(text) for p in command_problems(command)]
    assert not problems, f"{_page_id(page)}:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_property_key_and_flag_in_a_pages_tables_exists(page):
    text = page.read_text()
    problems = property_problems(text) + flag_problems(text)
    assert not problems, f"{_page_id(page)}:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_relative_link_leads_to_a_file_and_heading(page):
    problems = link_problems(page, page.read_text())
    assert not problems, f"{_page_id(page)}:\n" + "\n".join(problems)


def test_the_checks_find_commands_keys_and_links_where_the_pages_have_them():
    """The checks above read what they should: a check that finds nothing passes for nothing."""
    readme = (ROOT / "README.md").read_text()
    assert "workbench demo" in " ".join(commands_in(readme))
    properties = (ROOT / "docs" / "PROPERTIES.md").read_text()
    assert {"recordcount", "measurement.warmup", "eventloop"} <= set(table_column(properties, "property"))
    assert "-threads N" in table_column(properties, "flag")
    clients = (ROOT / "docs" / "CLIENTS.md").read_text()
    assert "cassandra.readtimeoutmillis" in table_column(clients, "property")
    assert any("docs/app-run.svg" in t for t in LINK.findall(readme))


@pytest.mark.parametrize("command, problem", [
    ("workbench runs compare 12 14 [--csv FILE]", None),
    ("workbench lesson answer NAME STEP N ANSWER [--student S]", None),
    ("workbench load|run -P FILE -p KEY=VALUE", None),
    ("workbench cluster up cassandra-3 --provider docker", None),
    ("workbench runs bogus 12", "runs has no sub-command bogus"),
    ("workbench cluster up cassandra-3 --bogus-flag", "has no option --bogus-flag"),
    ("workbench nosuchcommand", "has no sub-command nosuchcommand"),
])
def test_a_bogus_command_or_flag_is_named(command, problem):
    problems = command_problems(command)
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


def test_a_bogus_key_and_a_broken_link_are_named(tmp_path):
    page = tmp_path / "PAGE.md"
    text = ("| property | what |\n|---|---|\n| `recordcount` | fine |\n| `cassandra.bogus` | no |\n"
            "| `nosuchkey` | no |\n\n[fine](PAGE.md) [gone](GONE.md) [anchor](#nowhere)\n\n# A heading\n")
    page.write_text(text)
    assert property_problems(text) == ["property cassandra.bogus is not a key the workbench knows",
                                       "property nosuchkey is not a key the workbench knows"]
    assert link_problems(page, text) == ["link to GONE.md: GONE.md does not exist",
                                         "link to #nowhere: PAGE.md has no heading #nowhere"]
