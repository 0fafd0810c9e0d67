"""The time rules on the log's clock: burst, silence, after-quiet in lines per second.

Same questions as the stretch rules of rlm/corpus/signals.py, asked of time instead of line
counts: a stretch of 1/256 of the file is a minute when the log is busy and an hour when it is
quiet, so "its share of a stretch jumped" and "absent for 30 stretches" say little about time
when the line rate is uneven. Here each block (rlm/corpus/clock.py) has a start and an end on
the log's clock; a shape's expected count in a block is its average rate times the block's
duration, and gaps are measured in seconds. Each pick says which minutes it means.
"""

from __future__ import annotations

import math

from rlm.corpus.clock import MIN_DUR_S, Clock, duration

BURST_X = 10  # a burst: at least this many times the shape's average rate
SILENCE_SHARE = 0.10  # a silence lasts at least this share of the time the log was written ...
SILENCE_GAPS = 8  # ... and this many of the shape's usual spacings, after the shape was on
SILENCE_ON = 0.20  # for at least this share of the span (a flood that ends is not a heartbeat)
QUIET_SHARE = 0.20  # a return follows a quiet stretch of at least this share of the span ...
QUIET_GAPS = 4  # ... and this many usual spacings


def _never(template: bytes, block: int, last: bool) -> float | None:
    return None


def bursts(t: bytes, ids, counts, total: int, clock: Clock, pick, seen=_never) -> list:
    """Runs of blocks where the shape's rate is >= BURST_X times its average rate.
    `seen(template, block, last)`: the exact time of its first/last line in a block, or None."""
    rate = total / max(clock.span, 1.0)
    out, run, n = [], [], 0
    for b, c in zip(ids, counts):
        mu = rate * clock.dur(b)
        if c >= 10 and c >= BURST_X * mu and c > mu + 6 * math.sqrt(mu) + 5:
            if run and b != run[-1] + 1:
                out.append(_burst(t, run, n, rate, clock, pick, seen))
                run, n = [], 0
            run.append(b)
            n += c
    if run:
        out.append(_burst(t, run, n, rate, clock, pick, seen))
    return out


def _burst(t, run, n, rate, clock: Clock, pick, seen):
    a = seen(t, run[0], False) or clock.start[run[0]]
    b = seen(t, run[-1], True) or clock.end[run[-1]]
    x = n / max(clock.active(a, b), MIN_DUR_S) / rate
    return pick(t, "burst", f"its rate is {min(x, 9999):.0f}x its average "
                            f"{clock.between(a, b)} ({n:,} lines in {duration(b - a)}; on average "
                            f"{_per(rate)})", windows=run)


def _per(rate: float) -> str:
    for unit, s in (("second", 1), ("minute", 60), ("hour", 3600)):
        if rate * s >= 1:
            return f"{rate * s:.3g} per {unit}"
    return f"{rate * 86_400:.3g} per day"


def _usual(ids, counts, clock: Clock) -> float:
    """The shape's usual spacing on the clock: the time of the blocks it is in over its count
    there (a heartbeat every minute in a block of an hour: 60 s, not "once a block")."""
    return max(sum(clock.dur(b) for b in ids) / max(sum(counts), 1), MIN_DUR_S)


def silence(t: bytes, ids, counts, clock: Clock, pick, seen=_never) -> list:
    """A shape seen steadily for a good while, then never again for a long while."""
    usual = _usual(ids, counts, clock)
    order = clock.in_time_order(ids)
    holes = sorted(clock.start[b] - clock.end[a] for a, b in zip(order, order[1:])) or [0.0]
    steady = holes[int(0.9 * (len(holes) - 1))] <= 3 * usual  # no long holes while it was on
    need = max(SILENCE_SHARE * clock.span, SILENCE_GAPS * usual)
    final = max(ids, key=lambda b: clock.end[b])  # the block of its last sighting
    if not steady or clock.active(clock.start[final], clock.last) < need:  # cannot be enough
        return []
    stopped = seen(t, final, True) or clock.end[final]
    began = seen(t, order[0], False) or clock.start[order[0]]
    silent = clock.active(stopped, clock.last)
    if silent >= need and clock.active(began, stopped) >= SILENCE_ON * clock.span:
        return [pick(t, "silence", f"seen about every {duration(usual)} from "
                                   f"{clock.label(began)}, last at {clock.label(stopped)}, then "
                                   f"silent to the end of {clock.scope} at {clock.label(clock.last)} "
                                   f"({duration(silent)})", windows=[final])]
    return []


def after_quiet(t: bytes, ids, counts, clock: Clock, pick, seen=_never) -> list:
    """A shape that comes back after a quiet time much longer than its usual spacing."""
    if len(ids) < 4:
        return []
    usual = _usual(ids, counts, clock)
    need = max(QUIET_SHARE * clock.span, QUIET_GAPS * usual)
    # the longest possible quiet before each block it is in (after the latest sighting so far)
    best, latest = None, None
    for b in clock.in_time_order(ids):
        if latest is not None:
            bound = clock.active(clock.start[latest], clock.end[b])
            if best is None or bound > best[0]:
                best = (bound, latest, b)
        if latest is None or clock.end[b] > clock.end[latest]:
            latest = b
    if best is None or best[0] < need:
        return []
    _, a, b = best
    since = seen(t, a, True) or clock.end[a]
    back = seen(t, b, False) or clock.start[b]
    quiet = clock.active(since, back)
    if quiet >= need:
        return [pick(t, "after-quiet", f"back at {clock.label(back)} after "
                                       f"{duration(quiet)} without it (last at "
                                       f"{clock.label(since)}; usually every {duration(usual)})",
                     windows=[b])]
    return []
