"""Reading a result file back, whatever wrote it: our JSON or YCSB's text summary."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.results.jsonfile import from_json_dict
from workbench.results.model import RunResult
from workbench.results.ycsb_text import read_ycsb_text

EXPECTED = "import takes a workbench JSON file or the text output of `ycsb run` ([OVERALL] lines)"


def detect(text: str) -> str:
    """"json", "ycsb" or "" (unknown), from the content rather than the file name."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return "json"
    if "[OVERALL], RunTime(ms), " in text:
        return "ycsb"
    return ""


def import_file(path: str | Path) -> RunResult:
    """A RunResult from a workbench JSON file or a YCSB text summary (stdout of `ycsb run`)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise WorkbenchError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise WorkbenchError(f"{path}: not a text file (byte 0x{e.object[e.start]:02x} at offset {e.start} "
                             "is not UTF-8)", EXPECTED) from None
    kind = detect(text)
    if kind == "json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise WorkbenchError(f"{path}: not valid JSON ({e})") from None
        return from_json_dict(doc, str(path))
    if kind == "ycsb":
        return read_ycsb_text(Path(path))
    raise WorkbenchError(f"{path}: neither a workbench JSON run nor YCSB text output", EXPECTED)
