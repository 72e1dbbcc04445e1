r"""One simulated student for ``bench/load.py``: a browser tab speaking Streamlit's websocket protocol, and its walk.

A :class:`Session` does what a tab does: ``GET /`` (cookies), a websocket to ``/_stcore/stream`` (subprotocol
``streamlit``), then one ``BackMsg.rerun_script`` per action, read back as ``ForwardMsg`` protobufs until
``script_finished``. Like a browser it keeps Streamlit's message cache: an element it already holds comes back as its
hash, and a slider drawn inside a section (a Streamlit fragment: the delta carries its ``fragment_id``) is moved the
way a browser moves it, by rerunning that section alone. :func:`walk` is one round of one student: every page, then
slider moves on it, with think time between actions, everything measured into :class:`Stats`.
"""

from __future__ import annotations

import random
import socket
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import websocket
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.Slider_pb2 import Slider

#: Browsers send small frames at once (TCP_NODELAY); without it Nagle's algorithm meets the server's delayed ACK
#: and every rerun waits ~40 ms on loopback for nothing.
NO_DELAY = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)


@dataclass
class Run:
    r"""What one rerun produced: its duration, sliders, errors, and what the server told about pages and URL."""

    seconds: float = 0.0
    sliders: dict[str, Slider] = field(default_factory=dict)
    fragments: dict[str, str] = field(default_factory=dict)  # slider id → the section (fragment) that drew it
    errors: list[str] = field(default_factory=list)
    received: int = 0  # bytes of the ForwardMsgs the rerun brought (a count: unlike its seconds, load cannot move it)
    messages: int = 0


@dataclass
class Stats:
    r"""Everything a session measured (shared by its thread and the reporter; appended only)."""

    times: list[float] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # the page of each rerun in ``times`` (its URL path, or "home")
    errors: list[str] = field(default_factory=list)
    upstreams: list[str] = field(default_factory=list)  # X-Upstream of each connection (behind nginx)
    reconnects: int = 0
    section_moves: int = 0  # slider moves that reran only their section
    by_page: dict[str, list[float]] = field(default_factory=dict)  # rerun seconds per page (and move)
    log: list[tuple[float, str]] = field(default_factory=list)  # (time, "ok" | "error") of every rerun


class Session:
    r"""One browser tab: cookies from ``GET /``, then one websocket carrying BackMsg / ForwardMsg protobufs."""

    def __init__(self, base: str, *, deadline: float, lang: str = "en") -> None:
        self.base = base.rstrip("/")
        self.deadline = deadline
        self.home_query = self.query = f"lang={lang}"
        self.pages: dict[str, str] = {}  # url_pathname → page_script_hash
        self.widgets: dict[str, float] = {}  # slider id → value this tab has set
        self.ws: websocket.WebSocket | None = None
        self.cookies: dict[str, str] = {}
        self.upstream = ""
        # The browser's message cache: a big element already held is sent again only as its hash (Streamlit's
        # ForwardMsg cache). hash → script runs finished when it was last used; dropped past ``max_age`` runs.
        self.cache: dict[str, int] = {}
        self.runs = 0
        self.max_age = 2

    def connect(self) -> None:
        r"""``GET /`` (keeping cookies, as a browser does: a proxy's route cookie), then the websocket."""
        request = urllib.request.Request(f"{self.base}/", headers=self._cookie_header())
        with urllib.request.urlopen(request, timeout=self.deadline) as resp:
            for cookie in resp.headers.get_all("Set-Cookie") or []:
                name, _, value = cookie.split(";", 1)[0].partition("=")
                self.cookies[name.strip()] = value.strip()
        ws_url = "ws" + self.base[len("http") :] + "/_stcore/stream"
        headers = [f"{k}: {v}" for k, v in self._cookie_header().items()]
        self.ws = websocket.create_connection(
            ws_url, subprotocols=["streamlit"], header=headers, timeout=self.deadline, sockopt=NO_DELAY
        )
        self.upstream = (self.ws.getheaders() or {}).get("x-upstream", "")  # set by bench/scaleout's nginx

    def _cookie_header(self) -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}

    def close(self) -> None:
        if self.ws is not None:
            try:
                self.ws.close()
            except (OSError, websocket.WebSocketException):
                pass
            self.ws = None

    def rerun(self, page_hash: str = "", widget: tuple[str, float] | None = None, fragment: str = "") -> Run:
        r"""Send one ``rerun_script`` and read ForwardMsgs until ``script_finished`` or the deadline.

        ``fragment``: the section the slider was drawn in, which a browser reruns alone (``fragment_id``).
        """
        msg = self._rerun_script(page_hash, widget)
        msg.rerun_script.fragment_id = fragment
        run = Run()
        began = time.perf_counter()
        self.ws.send_binary(msg.SerializeToString())
        while True:
            left = self.deadline - (time.perf_counter() - began)
            if left <= 0:
                run.errors.append(f"rerun exceeded the {self.deadline:.0f} s deadline")
                break
            self.ws.settimeout(left)
            try:
                data = self.ws.recv()
            except websocket.WebSocketTimeoutException:
                continue
            if not data:  # the server closed the connection
                raise websocket.WebSocketConnectionClosedException("connection closed by the server")
            if isinstance(data, str):
                continue
            run.received += len(data)
            run.messages += 1
            fwd = ForwardMsg()
            fwd.ParseFromString(data)
            if self._receive(fwd, run):
                break
        run.seconds = time.perf_counter() - began
        return run

    def _rerun_script(self, page_hash: str, widget: tuple[str, float] | None) -> BackMsg:
        r"""The ``rerun_script`` BackMsg a browser sends: the page, the query string, its cached hashes, the slider."""
        if widget is None:  # a page switch: the browser drops the query string, the link carries the language
            self.query = self.home_query
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query
        state.page_script_hash = page_hash
        state.cached_message_hashes.extend(self.cache)
        if widget is not None:
            ws = state.widget_states.widgets.add()
            ws.id = widget[0]
            ws.double_array_value.data[:] = [widget[1]]
        return msg

    def _receive(self, fwd: ForwardMsg, run: Run) -> bool:
        r"""Take in one ForwardMsg (cache, pages, query, errors, sliders); True when it finishes this rerun."""
        kind = fwd.WhichOneof("type")
        if kind == "ref_hash":
            self.cache[fwd.ref_hash] = self.runs
        elif fwd.metadata.cacheable and fwd.hash:
            self.cache[fwd.hash] = self.runs
        if kind == "new_session":
            self.max_age = fwd.new_session.config.max_cached_message_age or self.max_age
        if kind in ("new_session", "navigation"):  # classic pages/ apps list their pages in `navigation`
            pages = getattr(fwd, kind).app_pages
            self.pages.update({p.url_pathname: p.page_script_hash for p in pages})
        elif kind == "page_info_changed":
            self.query = fwd.page_info_changed.query_string
        elif kind == "page_not_found":
            run.errors.append(f"page not found: {fwd.page_not_found.page_name!r}")
        elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
            _read_element(fwd.delta.new_element, run, fwd.delta.fragment_id)
        elif kind == "script_finished":
            return self._finished(fwd.script_finished, run)
        return False

    def _finished(self, status: int, run: Run) -> bool:
        r"""``script_finished``: True when it ends this rerun (then the message cache ages by one run)."""
        if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            return False  # an earlier run (one past its deadline) was cut short by ours; ours follows
        if status not in (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
            run.errors.append(f"script finished with status {status}")
        self.runs += 1
        self.cache = {h: seen for h, seen in self.cache.items() if self.runs - seen <= self.max_age}
        return True


def _read_element(element: Element, run: Run, fragment: str) -> None:
    r"""An exception on the page is an error; a slider is one the walk may move (``fragment``: its section)."""
    what = element.WhichOneof("type")
    if what == "exception":
        run.errors.append(f"exception: {element.exception.type}: {element.exception.message[:200]}")
    elif what == "slider" and element.slider.type == Slider.SLIDER:
        run.sliders[element.slider.id] = element.slider
        if fragment:
            run.fragments[element.slider.id] = fragment


def new_value(slider: Slider, rng: random.Random) -> float | None:
    r"""A grid value of ``slider`` other than its current one (``None`` when it has a single position)."""
    step = slider.step or 1
    positions = round((slider.max - slider.min) / step)
    if positions < 1:
        return None
    current = slider.value[0] if slider.value else slider.min
    for _ in range(8):
        value = slider.min + rng.randint(0, positions) * step
        if abs(value - current) > step / 2:
            return float(int(value)) if slider.data_type == Slider.INT else value
    return None


def walk(
    session: Session,
    stats: Stats,
    *,
    pages: Sequence[str],
    moves: int,
    think: float,
    stop_at: float,
    rng: random.Random,
    reconnect: bool,
) -> None:
    r"""One round: every page in ``pages`` (URL paths), then ``moves`` slider moves on it."""

    def act(
        page_hash: str = "",
        widget: tuple[str, float] | None = None,
        where: str = "home",
        retry: bool = True,
        fragment: str = "",
    ) -> Run | None:
        if time.monotonic() > stop_at:
            return None
        if think and retry:
            time.sleep(min(think * rng.uniform(0.5, 1.5), max(0.0, stop_at - time.monotonic())))
        try:
            if session.ws is None:
                session.connect()
                stats.upstreams.append(session.upstream)
                stats.reconnects += 1
            run = session.rerun(page_hash, widget, fragment)
        except (OSError, websocket.WebSocketException) as err:
            stats.errors.append(f"connection: {type(err).__name__}: {err}")
            stats.log.append((time.monotonic(), "error"))
            session.close()
            if not reconnect:
                raise
            # a browser reconnects at once and reruns the page it shows (once; later actions retry again)
            return act(page_hash, None, f"{where} (reconnect)", retry=False) if retry else None
        stats.times.append(run.seconds)
        stats.paths.append(where.split(" ", 1)[0])  # the page's URL path ("home" for the home page)
        stats.by_page.setdefault(where, []).append(run.seconds)
        stats.errors.extend(f"{where}: {e}" for e in run.errors)
        stats.log.append((time.monotonic(), "error" if run.errors else "ok"))
        return run

    for path in pages:
        if not session.pages and act() is None:  # (re)connected: the home page first, to learn the page hashes
            continue
        if path not in session.pages:
            stats.errors.append(f"page {path!r} not served (server lists {sorted(session.pages)})")
            continue
        page = session.pages[path]
        run = act(page, where=path)
        if run is not None:
            move_sliders(
                run,
                lambda widget, where, fragment: act(page, widget, where, fragment=fragment),  # noqa: B023
                path=path,
                moves=moves,
                rng=rng,
                stats=stats,
            )


def move_sliders(
    first: Run,
    act: Callable[[tuple[str, float], str, str], Run | None],
    *,
    path: str,
    moves: int,
    rng: random.Random,
    stats: Stats,
) -> None:
    r"""``moves`` moves of the sliders that ``first`` (a page's run) drew; one drawn in a section reruns it alone."""
    sliders, fragments = dict(first.sliders), dict(first.fragments)  # a section's rerun sends only its own
    for _ in range(moves):
        if not sliders:
            break
        slider = rng.choice(list(sliders.values()))
        value = new_value(slider, rng)
        if value is None:
            continue
        fragment = fragments.get(slider.id, "")
        moved = act((slider.id, value), f"{path} {slider.label}={value:g}", fragment)
        stats.section_moves += bool(fragment and moved)
        if moved is not None:
            sliders.update(moved.sliders)
            fragments.update(moved.fragments)
