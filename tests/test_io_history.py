"""The history of a resumed file: the lines of the file it continues, then the resumed run's own."""

from __future__ import annotations

from meanfield.io import continued_history

EARLIER = "2000-01-01T00:00:00+00:00 meanfield.solve(...)\n2000-01-01T00:00:01+00:00 meanfield solve --beta 2"
RESUMED = "2000-01-02T00:00:00+00:00 meanfield.solve(...)"


def test_a_resumed_run_continues_the_earlier_lines_oldest_first():
    attrs = continued_history({"beta": 2.0, "history": RESUMED}, EARLIER)
    assert attrs["history"].split("\n") == [*EARLIER.split("\n"), RESUMED]
    assert attrs["beta"] == 2.0


def test_a_line_equal_to_an_earlier_one_is_kept():
    """Two runs in the same second write the same line: both happened, both stay."""
    first = EARLIER.split("\n")[0]
    assert continued_history({"history": first}, EARLIER)["history"].split("\n") == [*EARLIER.split("\n"), first]


def test_without_an_earlier_history_the_attrs_are_unchanged():
    assert continued_history({"history": RESUMED}, "") == {"history": RESUMED}
    assert continued_history({"beta": 1.0}, "") == {"beta": 1.0}
    assert continued_history({}, EARLIER) == {"history": EARLIER}
