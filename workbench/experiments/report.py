"""The report of an experiment: a tidy CSV and one self-contained HTML file.

This is the entry point callers import; the work is done in three modules, each depending only
on the ones before it:

- `analysis`: the figures a report is made of. `collect` reads the experiment's completed runs
  back from the run store, `write_csv` writes one row per run x operation; the statistics
  (`by_step`, `anova_tables`) and a rate sweep's saturation curve (`saturation_curves`, `knee`,
  and the tables of text `saturation_table`, `curve_table`, `calibration_table`).
- `charts`: the inline SVG charts, drawn by hand from those figures.
- `page`: the HTML page, `render_html` / `write_html`, which works offline: inline CSS and the
  inline SVG charts, no script, font or image from anywhere else.
- `elastic_report`: with `add_node_at_s`, every run's join (`join_table`: its windows before,
  during and after, each with its interval estimate) and each run over time with the join marked.
"""

from __future__ import annotations

from workbench.experiments.analysis import (
    OPERATIONS,
    PERCENTILES,
    CurvePoint,
    OpFigures,
    RunRecord,
    anova_tables,
    by_step,
    calibration_table,
    clients,
    collect,
    curve_table,
    knee,
    saturation_curves,
    saturation_table,
    servers,
    write_csv,
)
from workbench.experiments.charts import COLOURS, FRAME
from workbench.experiments.elastic_report import join_table, shared_cores_note
from workbench.experiments.page import render_html, write_html

__all__ = ["COLOURS", "FRAME", "OPERATIONS", "PERCENTILES", "CurvePoint", "OpFigures", "RunRecord",
           "anova_tables", "by_step", "calibration_table", "clients", "collect", "curve_table", "join_table",
           "knee", "render_html", "saturation_curves", "saturation_table", "servers", "shared_cores_note",
           "write_csv", "write_html"]
