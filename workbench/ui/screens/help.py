"""`?`: the keys, and what every figure on the screens means (a teaching aid)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# workbench: keys and figures

**Screens**: `1` Clusters, `2` Workload, `3` Run, `4` Compare, `5` Lessons, `?` this help, `q` quit.
Every screen lists its own keys in the footer; the mouse works too.

## Workload screen keys
`tab` / `shift+tab` move between fields (▸ marks the one being edited), `esc` leaves a field
(then `1`-`4`, `?` and `q` work again), `ctrl+r` loads and runs, `ctrl+e` runs on data already
loaded, `ctrl+s` saves a YCSB workload file. A refused value shows the command line's message
under its field, and nothing runs until it is fixed.

## Run screen keys
`p` pause / resume the run, `s` stop it, `+` / `-` raise / lower the target rate by 10%
(`t` types a rate, `0` removes the limit), `]` / `[` one lane more / less, `o` next operation
in the latency chart; on a cluster: `k` kill, `z` pause (freeze), `r` resume a node, `n` next node,
`A` add a node, `D` decommission the selected one (local Cassandra). Every change is an event of
the run: it is drawn on the timeline (`N` a node joining or leaving) and kept in its exports.

## Run screen: the servers' side and the client's
Under the throughput chart, a line per node for the newest second, then the client's own line:
- **cpu** cores the node's process used over the second (1.0 = one core busy; local and Docker
  nodes only). **gc** the longest GC pause that ended in the second. **C2** compactions pending
  (waiting or running), **F1** memtable/memstore flushes pending. **DEAD** a killed node,
  **FROZEN** a paused one, **DOWN** one the client knows is disconnected; **no figures** a node
  whose sources did not answer this second.
- **client cpu** the workbench's own processes (the parent and every worker). **waited** how long its
  threads were ready to run but waited for a core (in cores like cpu, shown from 0.05): other
  processes, or more of its own threads than it has cores, held them. **loop lag** how
  late the lanes' event loops woke up (the longest over workers): a lane that holds its loop
  delays every other one. **start gap** (with a target) the longest an operation started after
  its intended time. **BEHIND by N ops** a paced run behind its schedule: operations due that
  no lane has taken yet.
- **client-limited: the workers used 1.9 of 2 cores** the client, not the database, was the
  bottleneck: its figures measure this machine. **machine-limited** the client and the servers
  on this machine used its cores together.

Marks on the chart's timeline, under the seconds they began in (the line below names the newest):
`C` a compaction, `F` a flush, `G` a GC pause of 100 ms or more, `K` a node killed, `Z` a node
frozen (paused), `U` resumed, `X` restarted; the run's own: `T` target, `L` lanes, `P` / `R` the
run paused / resumed, `S` stop, `!` a fault sent from here, `N` a node joining or leaving.

## Compare screen keys
`space` selects a run (the first selected is the reference), `c` clears, `o` next operation in
the chart, `h` adds earlier runs from the run store, `i` imports a YCSB text file, `e` exports
the selection. ✓ marks the better figure.

## Lessons screen keys
`enter` opens the lesson picked in the list; `n` does the step shown (its run appears live on the
right, then its checks' verdicts under the text), `n` again moves to the next step; `b` goes back
a step, `a` answers the step's next open question (once, or as many times as the lesson allows:
the right answer shows only once it is locked; in its dialog `enter` answers, `escape` leaves it
unanswered), `l` returns to the list. Progress and answers are kept: open the lesson again to
resume where you stopped.

## Clusters screen keys
`u` up, `d` down, `R` restart a cluster, `+` add a node to it (local Cassandra: it bootstraps);
on its selected node `p` pause, `r` resume, `k` kill, `x` restart, `-` decommission and remove
it; `l` shows or hides the log. Down, kill and remove ask first.

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
- **zipfian**: a few records are very popular (YCSB's default, constant 0.99), which is why
  caches matter. The preview shows the share of requests on the hottest 0.1% / 1% / 10% / 50% of
  keys, from the same draws as `workbench keys`. It looks flatter than "zipfian 0.99" suggests on
  a small table: YCSB draws from a huge item space and hashes it onto your records (scrambled
  zipfian), so several popular items share a record and the popular records are scattered over
  the key range; with 1,000 records the hottest 10% get about 30% of the requests.
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
