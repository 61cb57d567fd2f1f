"""The fit behind sure and possible conflicts (`ankita.dev._fit`, benchmarks/fit_standing.py):
a logistic regression over the signals of flagged pairs, scored by leaving a source out."""

import random

from ankita.analysis._standing import (
    POSSIBLE,
    POSSIBLE_LINE,
    SIGNALS,
    SURE_LINE,
    WEIGHTS,
    likelihood,
)
from ankita.dev._fit import Row, fit, leave_one_out, split, weights_table


def rows(source, count, seed, slot_real=0.9, other_real=0.1):
    """Flags where the slot signal (index 0) says real conflict most of the time."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        slot = float(n % 2)
        real = rng.random() < (slot_real if slot else other_real)
        values = (slot, *(rng.random() for _ in SIGNALS[1:]))
        out.append(Row(source, values, real, f"a{n}", f"b{n}"))
    return out


def test_the_fit_finds_the_signal_that_tells_real_conflicts():
    weights = fit(rows("one", 200, 1) + rows("two", 60, 2))
    assert len(weights) == len(SIGNALS) + 1
    assert weights[0] > 2.0  # the slot signal
    assert all(abs(w) < weights[0] / 2 for w in weights[1:-1])  # noise weighs less


def test_a_large_source_does_not_set_the_weights_alone():
    # "big" says the slot signal means nothing; two small sources say it means a conflict.
    big = rows("big", 900, 3, slot_real=0.5, other_real=0.5)
    small = rows("a", 60, 4) + rows("b", 60, 5)
    assert fit(big + small)[0] > fit(big)[0] + 0.5


def test_leave_one_out_scores_each_source_by_the_others_worst_first():
    good = rows("good", 100, 6)
    bad = [Row("bad", (1.0, *r.values[1:]), False, r.a, r.b) for r in rows("bad", 40, 7)]
    folds = leave_one_out(good + rows("more", 100, 8) + bad, (SURE_LINE, POSSIBLE_LINE))
    assert [name for name, _ in folds][0] == "bad"  # every sure flag there is false
    held = dict(folds)["bad"]
    assert held["flags"] == 40 and held["sure"] + held["possible"] + held["dropped"] == 40
    assert held["sure_real"] == 0


def test_split_counts_real_flags_by_where_they_fall():
    weights = fit(rows("x", 100, 9))
    counts = split(rows("x", 100, 9), weights, (SURE_LINE, POSSIBLE_LINE))
    assert counts["real"] == sum(r.real for r in rows("x", 100, 9))
    assert counts["sure_real"] + counts["possible_real"] + counts["dropped_real"] == counts["real"]


def test_a_flag_a_reading_rules_out_is_fitted_on_but_counted_as_dropped():
    found = rows("x", 100, 10)
    out = [Row(r.source, r.values, r.real, r.a, r.b, ruled_out=True) for r in found[:30]]
    weights = fit(found)
    assert fit(out + found[30:]) == weights  # the same signals: the same fit
    counts = split(out + found[30:], weights, (SURE_LINE, POSSIBLE_LINE))
    assert counts["dropped"] >= 30
    assert counts["dropped_real"] >= sum(r.real for r in out)


def test_the_shipped_weights_name_every_signal_and_keep_their_lines():
    table = dict(weights_table(WEIGHTS))
    assert list(table) == [*SIGNALS, "intercept"]
    assert 0.0 < POSSIBLE_LINE < SURE_LINE < 1.0
    # A named slot that disagrees (a value, a number) is sure; a bare flag is not.
    slot_only = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.5, 0.5, 0.0)
    bare = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.3, 0.1, 0.0)
    assert likelihood(slot_only) >= SURE_LINE > likelihood(bare)
    assert POSSIBLE == "possible"
