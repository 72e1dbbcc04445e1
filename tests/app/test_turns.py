r"""The page queue: one page script at a time, first come first served, and a turn is never lost."""

from __future__ import annotations

import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from posenc_ui import frame
from posenc_ui.catalog import ROOT
from posenc_ui.turns import TURNS, Turns


def _wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        time.sleep(0.001)


def _start_queued(turns: Turns, name: str, order: list[str]) -> threading.Thread:
    r"""A thread that takes a turn, notes its name, and leaves; returns once it is waiting in the queue."""

    def take() -> None:
        with turns:
            order.append(name)

    queued = turns.waiting
    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    _wait_until(lambda: turns.waiting == queued + 1)
    return thread


def test_turns_are_given_in_the_order_they_were_asked_for() -> None:
    turns, order = Turns(), []
    names = [f"student {i}" for i in range(12)]
    with turns:
        threads = [_start_queued(turns, name, order) for name in names]
        assert order == []  # nobody runs while the turn is held
    for thread in threads:
        thread.join(timeout=10)
    assert order == names


def test_no_two_threads_ever_hold_a_turn_together() -> None:
    turns, inside, most, lock = Turns(), [0], [0], threading.Lock()

    def work() -> None:
        for _ in range(200):
            with turns:
                with lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                time.sleep(0)  # invite a switch while holding the turn
                with lock:
                    inside[0] -= 1

    threads = [threading.Thread(target=work, daemon=True) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert most[0] == 1
    assert not turns._held and turns.waiting == 0


def test_an_exception_in_the_body_gives_the_turn_back() -> None:
    turns = Turns()
    with pytest.raises(ZeroDivisionError), turns:
        raise ZeroDivisionError("a bug")
    assert not turns._held
    with turns:  # and it can be taken again at once
        pass


def test_aside_lends_the_turn_to_the_queue_and_takes_it_back_after_them() -> None:
    turns, order = Turns(), []
    with turns:
        waiter = _start_queued(turns, "waiting student", order)
        with turns.aside():
            waiter.join(timeout=10)  # they ran while we were aside
            assert order == ["waiting student"]
        assert turns._held  # ours again
    assert not turns._held


def test_leaving_a_turn_this_thread_does_not_hold_is_a_clear_error() -> None:
    turns = Turns()
    with pytest.raises(RuntimeError, match="without a turn held by this thread"):
        turns.release()
    errors: list[Exception] = []

    def leave() -> None:
        try:
            turns.release()
        except RuntimeError as err:
            errors.append(err)

    with turns:
        other = threading.Thread(target=leave, daemon=True)
        other.start()
        other.join(timeout=10)
        assert turns._held  # another thread cannot give our turn away
    assert len(errors) == 1


def test_a_page_that_fails_midway_gives_the_turn_back_and_the_next_run_works(monkeypatch) -> None:
    def broken_text(self, key: str, **fmt: object) -> None:
        raise ZeroDivisionError("a bug in the page")

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    with monkeypatch.context() as patch:
        patch.setattr(frame.Page, "text", broken_text)
        at.run()
    assert at.exception and at.exception[0].value == "a bug in the page"
    assert not TURNS._held
    at.run()
    assert not at.exception
    assert not TURNS._held


@pytest.mark.parametrize(("setting", "queued"), [(None, True), ("on", True), (" OFF ", False), ("off", False)])
def test_the_page_queue_is_a_server_setting(setting: str | None, queued: bool) -> None:
    from posenc_ui.turns import QUEUE_ENV, NoTurns, queue_from_env

    turns = queue_from_env({} if setting is None else {QUEUE_ENV: setting})
    assert isinstance(turns, Turns if queued else NoTurns)
    with turns, turns.aside():  # the same interface either way
        pass


def test_an_unknown_queue_setting_is_refused_by_name() -> None:
    from posenc_ui.turns import QUEUE_ENV, queue_from_env

    with pytest.raises(ValueError, match=f"{QUEUE_ENV}='sometimes'.*'on' or 'off'"):
        queue_from_env({QUEUE_ENV: "sometimes"})
