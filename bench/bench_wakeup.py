"""What waking up costs on this host: the CPU charged for touching memory that was not touched for
a while, and for a thread that only waits, once a second.

    python bench/bench_wakeup.py [--pages 256] [--repeat 5]

For each pause (0.01 s to 1 s) a buffer of --pages pages is touched once per page, then the
thread either sleeps (`slept`) or spins on the clock without touching it (`spun`), then touches it
again: the CPU milliseconds (time.thread_time) of that second touch, the mean of --repeat (and
after a sleep, of reading each page without writing it: a cost that only writes pay would be the
host's dirty-page tracking, one that reads pay too its taking the pages back). Then
the CPU charged to a thread that does nothing but wait one second on a threading.Event, per
wake-up. On an ordinary machine the second touch costs microseconds however long the pause (the
pages stay mapped and mostly cached) and a wake-up tens of microseconds. Where the second touch
grows with the pause, the hypervisor takes idle pages back and charges their return to the guest
thread that touches them, and every once-a-second task (the servers' sampler, a tick) pays it on
every page it touches: read bench_sampler.py's figures against this one's, from the same minutes.
"""

from __future__ import annotations

import argparse
import mmap
import threading
import time

PAGE = mmap.PAGESIZE


def touch(buf: bytearray) -> float:
    """CPU milliseconds to write one byte of each page."""
    t0 = time.thread_time()
    for i in range(0, len(buf), PAGE):
        buf[i] = (buf[i] + 1) & 0xFF
    return (time.thread_time() - t0) * 1e3


def read(buf: bytearray) -> float:
    """CPU milliseconds to read one byte of each page (nothing written to the buffer)."""
    t0 = time.thread_time()
    total = 0
    for i in range(0, len(buf), PAGE):
        total += buf[i]
    return (time.thread_time() - t0) * 1e3


def second_touch(buf: bytearray, pause: float, spin: bool, repeat: int, again=touch) -> float:
    total = 0.0
    for _ in range(repeat):
        touch(buf)
        if spin:
            end = time.monotonic() + pause
            while time.monotonic() < end:
                pass
        else:
            time.sleep(pause)
        total += again(buf)
    return total / repeat


def idle_wakeup_ms(seconds: int) -> float:
    """CPU milliseconds charged to a thread per one-second wait on an Event (it does nothing else)."""
    out: list[float] = []

    def run() -> None:
        stop = threading.Event()
        t0 = time.thread_time()
        for _ in range(seconds):
            stop.wait(1.0)
        out.append((time.thread_time() - t0) * 1e3 / seconds)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    buf = bytearray(args.pages * PAGE)
    warm = min(touch(buf) for _ in range(5))
    print(f"{args.pages} pages of {PAGE} bytes, touched again at once: {warm:.3f} ms CPU")
    for pause in (0.01, 0.1, 0.3, 1.0):
        slept = second_touch(buf, pause, False, args.repeat)
        spun = second_touch(buf, pause, True, args.repeat)
        only_read = second_touch(buf, pause, False, args.repeat, read)
        print(f"after {pause:4.2f} s   slept: {slept:7.3f} ms ({slept * 1e3 / args.pages:6.2f} us a page)"
              f"   spun: {spun:7.3f} ms ({spun * 1e3 / args.pages:6.2f} us a page)"
              f"   slept, read only: {only_read:7.3f} ms ({only_read * 1e3 / args.pages:6.2f} us a page)")
    idle = idle_wakeup_ms(args.repeat * 2)
    print(f"a thread that only waits on an Event, 1 s at a time: {idle:.3f} ms CPU per wake-up")


if __name__ == "__main__":
    main()
