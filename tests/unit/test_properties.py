"""Java .properties parsing and YCSB's -P/-p merge order (workbench/config/properties.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.config.properties import Origin, Properties, merge, parse_override, parse_properties
from workbench.errors import ConfigError


def parsed(text: str) -> dict[str, str]:
    return {key: value for key, value, _ in parse_properties(text, "w.properties")}


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="latin-1")
    return str(path)


# ---- one file ----------------------------------------------------------------------------------


def test_hash_and_bang_comment_lines_are_skipped_even_when_indented() -> None:
    text = "# a comment\n! another\n   # indented comment\n\t! indented bang\nkey=value\n"
    assert parsed(text) == {"key": "value"}


def test_a_hash_inside_a_value_is_not_a_comment() -> None:
    assert parsed("url=host#frag\n") == {"url": "host#frag"}


@pytest.mark.parametrize(
    "line",
    [
        "key=value",
        "key:value",
        "key value",
        "key\tvalue",
        "key = value",
        "key : value",
        "  key   value",
        "key\fvalue",
    ],
)
def test_equals_colon_and_whitespace_all_separate_key_from_value(line: str) -> None:
    assert parsed(line + "\n") == {"key": "value"}


def test_only_the_first_separator_counts() -> None:
    assert parsed("a=b=c\nx:y:z\nm n o\n") == {"a": "b=c", "x": "y:z", "m": "n o"}


def test_a_key_alone_has_an_empty_value_and_trailing_spaces_of_values_are_kept() -> None:
    assert parsed("lonely\nempty=\nspaced=v  \n") == {"lonely": "", "empty": "", "spaced": "v  "}


def test_backslash_continuation_joins_lines_and_drops_leading_whitespace() -> None:
    text = "fields=a,\\\n    b,\\\n\tc\nnext=1\n"
    assert parsed(text) == {"fields": "a,b,c", "next": "1"}


def test_a_continued_line_starting_with_hash_is_part_of_the_value_not_a_comment() -> None:
    assert parsed("x=1\\\n# still x\n") == {"x": "1# still x"}


def test_an_even_number_of_trailing_backslashes_is_not_a_continuation() -> None:
    assert parsed("path=C:\\\\\nnext=2\n") == {"path": "C:\\", "next": "2"}


def test_a_comment_line_ending_in_a_backslash_does_not_continue() -> None:
    assert parsed("# comment \\\nkey=v\n") == {"key": "v"}


def test_a_blank_line_ends_a_continuation() -> None:
    assert parsed("a=1\\\n\nb=2\n") == {"a": "1", "b": "2"}


def test_escapes_in_keys_and_values() -> None:
    text = "my\\ key=x\ncolon\\:key=y\nv=tab\\there\\nnew\\\\back\nu=\\u0041\\u00e9\nq=\\q\n"
    assert parsed(text) == {
        "my key": "x",
        "colon:key": "y",
        "v": "tab\there\nnew\\back",
        "u": "Aé",
        "q": "q",
    }


def test_malformed_unicode_escape_is_a_config_error_with_the_line() -> None:
    with pytest.raises(ConfigError) as err:
        parse_properties("ok=1\nbad=\\uZZ\n", "w.properties")
    assert "w.properties:2" in str(err.value)


def test_windows_and_old_mac_line_endings() -> None:
    assert parsed("a=1\r\nb=2\rc=3") == {"a": "1", "b": "2", "c": "3"}


def test_only_cr_and_lf_end_lines_as_in_java() -> None:
    # java.util.Properties ends lines at \r and \n only. Python's str.splitlines also splits at
    # \x0b, \x0c, \x1c-\x1e and \x85; \x85 is "…" in cp1252 files read as latin-1.
    assert parsed("comment=wait\x85 done\nv=a\x0bb\n") == {"comment": "wait\x85 done", "v": "a\x0bb"}


def test_origins_are_the_first_line_of_each_logical_line() -> None:
    entries = parse_properties("# header\n\na=1\nb=x,\\\n  y\nc=3\n", "f.properties")
    assert [(k, str(o)) for k, _, o in entries] == [
        ("a", "f.properties:3"),
        ("b", "f.properties:4"),
        ("c", "f.properties:6"),
    ]


def test_later_lines_in_one_file_override_earlier_ones_with_their_origin(tmp_path: Path) -> None:
    path = write(tmp_path, "w", "a=1\na=2\n")
    props = merge([path], [])
    assert props.get("a") == "2"
    assert props.origin("a") == Origin(path, 2)


# ---- merge order ----------------------------------------------------------------------------------


def test_later_p_files_override_earlier_ones_and_keep_their_file_and_line(tmp_path: Path) -> None:
    first = write(tmp_path, "first", "recordcount=10\nfieldcount=3\n")
    second = write(tmp_path, "second", "# override\nrecordcount=20\n")
    props = merge([first, second], [])
    assert props.get("recordcount") == "20"
    assert str(props.origin("recordcount")) == f"{second}:2"
    assert props.get("fieldcount") == "3"
    assert str(props.origin("fieldcount")) == f"{first}:2"
    assert props.keys() == ["recordcount", "fieldcount"]


def test_dash_p_overrides_every_file_and_its_origin_is_the_command_line(tmp_path: Path) -> None:
    first = write(tmp_path, "first", "recordcount=10\n")
    props = merge([first], ["recordcount=99", "table = t2 "])
    assert props.get("recordcount") == "99"
    assert str(props.origin("recordcount")) == "-p"
    assert props.get("table") == "t2"
    assert props.as_dict() == {"recordcount": "99", "table": "t2"}


def test_a_value_after_p_may_contain_equals_signs() -> None:
    assert parse_override("label=a=b") == ("label", "a=b")


@pytest.mark.parametrize("bad", ["novalue", "=5", "  =x"])
def test_an_override_without_key_equals_value_is_a_config_error(bad: str) -> None:
    with pytest.raises(ConfigError, match="key=value"):
        parse_override(bad)


def test_missing_file_is_a_config_error_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-workload"
    with pytest.raises(ConfigError) as err:
        merge([str(missing)], [])
    assert str(missing) in str(err.value)


def test_a_directory_given_to_p_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="directory"):
        merge([str(tmp_path)], [])


def test_files_are_read_as_latin1_like_java(tmp_path: Path) -> None:
    path = tmp_path / "latin"
    path.write_bytes(b"label=caf\xe9\n")
    assert merge([str(path)], []).get("label") == "café"


def test_copy_is_independent() -> None:
    props = Properties()
    props.set("a", "1", Origin("-p"))
    other = props.copy()
    other.set("a", "2", Origin("f", 3))
    assert props.get("a") == "1" and str(props.origin("a")) == "-p"
    assert other.get("a") == "2" and str(other.origin("a")) == "f:3"
    assert "a" in props and "b" not in props
