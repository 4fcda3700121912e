"""`?`: the keys, and what every figure on the screens means (a teaching aid)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# workbench: keys and figures

**Screens**: `1` Clusters, `2` Workload, `3` Run, `4` Compare, `?` this help, `q` quit.
Every screen lists its own keys in the footer; the mouse works too.

## Run screen keys
`p` pause / resume the run, `s` stop it, `+` / `-` raise / lower the target rate by 10%
(`t` types a rate, `0` removes the limit), `]` / `[` one lane more / less,
`k` kill, `z` pause (freeze), `r` resume a node of the cluster under test.
Every change is an event of the run: it is drawn on the timeline and kept in its exports.

## The figures
- **ops/s (throughput)**: operations completed per second, over the last interval.
- **p50 / p95 / p99 / p99.9**: the latency that 50%, 95%, 99%, 99.9% of operations stayed
  under. p50 is the typical operation; p99 is the one user request in a hundred that waits
  longest, which is what people notice. **max** is the single slowest operation.
- **Service time** is measured from the moment a request was actually sent until it completed.
- **Response time** (only with a target rate) is measured from the moment the request *should*
  have been sent by the schedule. When the database stalls, requests queue up behind it: service
  time hides that wait, response time includes it. Ignoring the wait is called *coordinated
  omission*; it makes a stalled database look fast.
- **Lanes**: requests in flight at once (YCSB's threads). More lanes raise throughput until the
  database (or this machine) saturates; after that they only add latency.
- **Target rate**: operations per second the run aims for (open loop). 0 means as fast as possible.
- **Percentile chart**: latency (log scale) against the percentile, for the last interval and
  since the start. A flat curve that jumps at the end means rare, very slow operations.

## Key distributions (Workload screen)
- **uniform**: every record is equally likely.
- **zipfian**: a few records are very popular (YCSB's default, constant 0.99): the hottest 1% of
  the keys get a large share of requests, which is why caches matter. The preview shows the share
  of requests on the hottest 0.1% / 1% / 10% of keys and the popularity curve (requests per key,
  hottest first, on a log scale), drawn with the same code as `workbench keys`.
- **latest**: zipfian over the most recently inserted records.
- **hotspot**: a fraction of the keys (hot data fraction) gets a fraction of the requests (hot
  operation fraction).
- **exponential**: popularity falls off exponentially; `exponential.percentile` of the requests go
  to the first `exponential.frac` of the keys.
"""


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,question_mark,q", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)
