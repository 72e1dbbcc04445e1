r"""The address bar ends at what the last run showed, however the browser's requests and the server's writes cross.

Each rerun request carries the query string the browser has at that moment; a run's write reaches the browser later,
in order. ▶ then ◀ pressed at once sent ◀'s request before ▶'s write arrived: ◀'s run saw its own figure in the
request, wrote nothing, and the address bar then showed ▶'s figure (a Chromium test caught it under CI's load).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as hst

from posenc_ui.frame.present import STEP
from posenc_ui.frame.widgets import URL_SENT, url_is_stale

URLS = hst.sampled_from([{"lang": "en"}, {"lang": "en", "figure": "window"}, {"lang": "en", "figure": "offsets"}])


@settings(max_examples=400, deadline=None)
@given(
    start=URLS,
    runs=hst.lists(hst.tuples(URLS, hst.integers(0, 8), hst.booleans()), min_size=1, max_size=8),
)
def test_any_interleaving_of_requests_and_writes_ends_at_the_last_runs_view(start, runs) -> None:
    # a browser and one session's server: `delivered` writes reach the address bar before each request leaves;
    # a run stopped for a rerun before its write sends nothing (Streamlit checks before it sends a message)
    address, in_flight, last_sent = dict(start), [], None
    finished = []
    for wanted, delivered, stopped in runs:
        for _ in range(min(delivered, len(in_flight))):
            address = in_flight.pop(0)
        asked = dict(address)
        if stopped:
            continue
        finished.append(wanted)
        if url_is_stale(asked, last_sent, wanted):
            in_flight.append(dict(wanted))
            last_sent = dict(wanted)
    address = in_flight[-1] if in_flight else address
    if finished:
        assert address == finished[-1]


def test_a_write_is_skipped_only_when_the_browser_and_the_last_write_both_agree() -> None:
    here, there = {"lang": "en", "figure": "window"}, {"lang": "en", "figure": "offsets"}
    assert not url_is_stale(here, None, here)  # a first run the address bar already shows
    assert not url_is_stale(here, here, here)
    assert url_is_stale(here, there, here)  # ◀ asked before ▶'s write arrived
    assert url_is_stale(there, here, here)


def test_a_step_back_asked_before_the_step_forward_was_written_writes_its_figure(open_page) -> None:
    at = open_page("pages/6_RoPE.py", lang="en", params={"present": "true", "figure": "window"})
    at.button(key="present_next").click().run()
    assert at.query_params["figure"] == "offsets" and at.session_state[URL_SENT]["figure"] == "offsets"
    at.query_params["figure"] = "window"  # ◀'s request left before ▶'s write reached the browser
    at.session_state[STEP] = ("rope", "window")  # what ◀'s callback sets
    at.run()
    assert at.session_state[URL_SENT] == {"lang": "en", "present": "true", "figure": "window"}
