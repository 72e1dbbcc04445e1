r"""A result cache on disk for the lab's live runs, with one queue per device: each configuration trains once.

Three tabs pressing *Run* on the same settings used to train them three times, one after another, each tab waiting
without knowing its place. Here every request goes through :meth:`LabQueue.run`, across sessions (threads) and
server processes alike:

1. a finished result on disk is returned at once (:meth:`LabQueue.cached`);
2. otherwise the request takes the configuration's *key lock*. Whoever holds it is the one that trains: identical
   requests wait for that lock, then read the result instead of training again;
3. the holder takes a *ticket* in its device's queue and waits, in order of arrival, for one of the device's
   ``slots_per_device`` *slot locks*, so that a device trains at most that many runs at once;
4. holding both, it trains, writes the result atomically and lets go.

While a request waits, ``on_wait(position)`` is called every ``poll`` seconds: 1 means next to run (or, for an
identical request, that its configuration is next or already training: :meth:`LabQueue.training` tells which);
returning ``False`` leaves the queue (:class:`QueueCancelled`). The caller's thread only sleeps and polls
meanwhile, so a page that gives up its turn (:meth:`posenc_ui.turns.Turns.aside`) keeps other pages responsive.

The cache directory (:func:`cache_dir`) holds::

    results/<key>.json            finished results, written to a hidden temporary file and renamed into place
    locks/key-<key>.lock          one per configuration being run
    locks/slot-<device>-<i>.lock  the device's slots
    queue/<device>/<ticket>       one per configuration waiting or training on that device
    timings.json                  measured throughput and import times, for the page's estimates

Locks are :class:`filelock.FileLock` (``flock``): the operating system drops them when a process dies, so a crash
never leaves a configuration or a slot locked, and a ticket left by a dead process is ignored and removed. Tickets
only order the queue and report positions; the slot locks alone cap the runs. Every process must use the same
``slots_per_device``. Nothing here imports Streamlit or torch: the rules are tested without a server
(``tests/app/test_lab_queue.py``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import socket
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

__all__ = ["FORMAT_VERSION", "STALE_SECONDS", "LabQueue", "QueueCancelled", "cache_dir", "config_key"]

#: Part of every key: bump it when what a run stores changes, and results in the old format are never read again.
FORMAT_VERSION = 1
#: A ticket untouched for this long is ignored even if its process seems alive (a reused pid, another host). Waiting
#: requests touch theirs at every poll; a training one does not, but a run lasts minutes, not hours.
STALE_SECONDS = 6 * 3600.0
#: The environment variable that moves the cache (tests, or a shared disk for several servers).
CACHE_ENV = "POSENC_LAB_CACHE"

_HOST = socket.gethostname()
_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")


class QueueCancelled(Exception):
    r"""Raised by :meth:`LabQueue.run` when ``on_wait`` returned ``False``: the request left the queue, untrained."""


def cache_dir() -> Path:
    r"""The lab's cache directory: ``$POSENC_LAB_CACHE`` if set, else ``~/.cache/posenc/lab``; created if missing."""
    configured = os.environ.get(CACHE_ENV)
    root = Path(configured).expanduser() if configured else Path.home() / ".cache" / "posenc" / "lab"
    root.mkdir(parents=True, exist_ok=True)
    return root


def config_key(config: Mapping[str, Any] | Any) -> str:
    r"""The cache key of a configuration: SHA-256 (hex) of its canonical JSON, with :data:`FORMAT_VERSION`.

    ``config`` is a mapping or a dataclass instance (such as ``LabConfig``). Keys are sorted, so the order a mapping
    was built in does not matter; tuples and lists hash alike, sets in sorted order. Whatever changes the result but
    is not a field belongs in the mapping too: ``{**dataclasses.asdict(config), "device": "cuda"}``.
    """
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        config = dataclasses.asdict(config)
    elif not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping or a dataclass instance, got {type(config).__name__}")
    canonical = _dumps({"format": FORMAT_VERSION, "config": dict(config)}, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True)
class _Ticket:
    r"""A request in a device's queue: its file (named so that names sort by arrival), key and state."""

    path: Path
    key: str
    running: bool


class LabQueue:
    r"""Results of lab runs on disk under ``root``, each trained once, at most ``slots_per_device`` at a time."""

    def __init__(self, root: str | os.PathLike[str] | None = None, slots_per_device: int = 1) -> None:
        if slots_per_device < 1:
            raise ValueError(f"slots_per_device must be at least 1, got {slots_per_device}")
        self.root = Path(root) if root is not None else cache_dir()
        self.slots_per_device = slots_per_device
        for folder in (self._results, self._locks, self._queues):
            folder.mkdir(parents=True, exist_ok=True)

    @property
    def _results(self) -> Path:
        return self.root / "results"

    @property
    def _locks(self) -> Path:
        return self.root / "locks"

    @property
    def _queues(self) -> Path:
        return self.root / "queue"

    @property
    def _timings_path(self) -> Path:
        return self.root / "timings.json"

    # ---- results --------------------------------------------------------------------------------------------------

    def result_path(self, key: str) -> Path:
        r"""Where the finished result of ``key`` is (or will be) stored; it appears there whole, or not at all."""
        return self._results / f"{_checked(key)}.json"

    def cached(self, key: str) -> dict[str, Any] | None:
        r"""The finished result stored under ``key``, or ``None`` (results are renamed into place whole)."""
        found = _read_json(self.result_path(key))
        return found if isinstance(found, dict) else None

    def run(
        self,
        key: str,
        device: str,
        train: Callable[[], dict[str, Any]],
        on_wait: Callable[[int], bool] | None = None,
        poll: float = 0.25,
    ) -> dict[str, Any]:
        r"""The result for ``key``: from disk, from an identical request already under way, or from ``train()``.

        ``train`` runs only while this request holds the key's lock and one of ``device``'s slots; what it returns
        must be JSON-serialisable, and is returned as read back (so every reader of a key gets an equal dict).
        ``on_wait(position)`` is called every ``poll`` seconds while waiting; only ``False`` cancels
        (:class:`QueueCancelled`). An exception from ``train`` or ``on_wait`` releases everything and propagates;
        nothing is stored, and the next request for the key trains it.
        """
        if poll <= 0:
            raise ValueError(f"poll must be positive, got {poll}")
        found = self.cached(key)
        if found is not None:
            return found
        arrived = time.time_ns()  # a request that inherits the key after a failed run keeps its place in line
        with contextlib.ExitStack() as held:
            key_lock = FileLock(self._locks / f"key-{key}.lock")
            _acquire(key_lock, lambda: self._position_of_key(key), on_wait, poll)
            held.callback(key_lock.release)
            found = self.cached(key)  # an identical request may have trained it while we waited for its lock
            if found is not None:
                return found
            ticket = self._queue(device) / f"{arrived:020d}-{os.getpid()}-{uuid.uuid4().hex}"
            _write_ticket(ticket, key, running=False)
            held.callback(ticket.unlink, missing_ok=True)
            slot = self._take_slot(device, ticket, key, on_wait, poll)
            held.callback(slot.release)
            held.callback(ticket.unlink, missing_ok=True)  # (again) gone before the slot frees: the next one may start
            found = self.cached(key)
            if found is not None:
                return found
            _write_ticket(ticket, key, running=True)
            text = _dumps(train())
            _write_atomic(self._results / f"{key}.json", text, durable=True)
            return json.loads(text)

    def training(self, key: str) -> bool:
        r"""Whether ``key`` is training now on some device (rather than waiting for a slot, or not asked for)."""
        _checked(key)
        return any(ticket.key == key and ticket.running for folder in self._devices() for ticket in _scan(folder))

    # ---- the queue ------------------------------------------------------------------------------------------------

    def _queue(self, device: str) -> Path:
        folder = self._queues / _device_name(device)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def _devices(self) -> list[Path]:
        with contextlib.suppress(FileNotFoundError):
            return sorted(path for path in self._queues.iterdir() if path.is_dir())
        return []

    def _take_slot(
        self, device: str, ticket: Path, key: str, on_wait: Callable[[int], bool] | None, poll: float
    ) -> FileLock:
        r"""One of ``device``'s slot locks, taken once ``ticket`` is among the first ``slots_per_device`` in line."""
        while True:
            tickets = _scan(ticket.parent)
            names = [t.path.name for t in tickets]
            if ticket.name not in names:  # removed as stale by someone: put it back, in its place
                _write_ticket(ticket, key, running=False)
                continue
            ahead = tickets[: names.index(ticket.name)]
            if len(ahead) < self.slots_per_device:
                for index in range(self.slots_per_device):
                    slot = FileLock(self._locks / f"slot-{_device_name(device)}-{index}.lock")
                    with contextlib.suppress(Timeout):
                        slot.acquire(blocking=False)
                        return slot
            _wait(on_wait, 1 + sum(not t.running for t in ahead))
            _touch(ticket, key)
            time.sleep(poll)

    def _position_of_key(self, key: str) -> int:
        r"""Where the request that holds ``key`` stands in its device's queue: 1 if next or training (or unseen)."""
        for folder in self._devices():
            tickets = _scan(folder)
            for index, ticket in enumerate(tickets):
                if ticket.key == key:
                    return 1 if ticket.running else 1 + sum(not t.running for t in tickets[:index])
        return 1

    # ---- timings, for estimates -----------------------------------------------------------------------------------

    def record_timing(self, device: str, task: str, encoding: str, tokens_per_second: float) -> None:
        r"""Store a measured training throughput (the last measurement wins)."""
        with self._updating_timings() as timings:
            per_task = timings.setdefault(device, {}).setdefault("tokens_per_second", {}).setdefault(task, {})
            per_task[encoding] = float(tokens_per_second)

    def timing(self, device: str, task: str) -> dict[str, float]:
        r"""Measured tokens per second on ``device`` for ``task``, by encoding (empty if never measured)."""
        found = _dig(_read_json(self._timings_path), device, "tokens_per_second", task)
        return {str(name): float(value) for name, value in found.items()} if isinstance(found, dict) else {}

    def record_import_seconds(self, device: str, seconds: float) -> None:
        r"""Store how long importing torch and starting ``device`` took (measured by the caller)."""
        with self._updating_timings() as timings:
            timings.setdefault(device, {})["import_seconds"] = float(seconds)

    def import_seconds(self, device: str) -> float | None:
        r"""The last measured torch import and ``device`` start-up time in seconds, or ``None``."""
        found = _dig(_read_json(self._timings_path), device, "import_seconds")
        return float(found) if isinstance(found, int | float) else None

    @contextlib.contextmanager
    def _updating_timings(self) -> Iterator[dict[str, Any]]:
        r"""The timings as a dict to change in place; written back atomically, one writer at a time."""
        with FileLock(self._locks / "timings.lock", timeout=30):
            timings = _read_json(self._timings_path)
            timings = timings if isinstance(timings, dict) else {}
            yield timings
            _write_atomic(self._timings_path, _dumps(timings, indent=1), durable=True)


# ---- helpers ------------------------------------------------------------------------------------------------------


def _acquire(lock: FileLock, position: Callable[[], int], on_wait: Callable[[int], bool] | None, poll: float) -> None:
    r"""Take ``lock``; each ``poll`` seconds without it, report ``position()`` to ``on_wait`` (``False`` cancels)."""
    with contextlib.suppress(Timeout):
        lock.acquire(blocking=False)
        return
    while True:
        _wait(on_wait, position())
        with contextlib.suppress(Timeout):
            lock.acquire(timeout=poll)
            return


def _wait(on_wait: Callable[[int], bool] | None, position: int) -> None:
    r"""Tell the waiting reader its ``position``; raise :class:`QueueCancelled` if it answers ``False``."""
    if on_wait is not None and on_wait(position) is False:
        raise QueueCancelled(f"left the queue at position {position}")


def _scan(folder: Path) -> list[_Ticket]:
    r"""The live tickets in ``folder`` in order of arrival; those of dead processes, or stale, are removed."""
    try:
        paths = sorted(path for path in folder.iterdir() if not path.name.startswith("."))
    except FileNotFoundError:
        return []
    now, tickets = time.time(), []
    for path in paths:
        try:
            age = now - path.stat().st_mtime
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:  # done meanwhile
            continue
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict) or age > STALE_SECONDS or not _alive(data.get("pid"), data.get("host")):
            if data is not None or age > STALE_SECONDS:  # an unreadable one only once stale: it may be in flux
                path.unlink(missing_ok=True)
            continue
        tickets.append(_Ticket(path, str(data.get("key")), data.get("state") == "running"))
    return tickets


def _alive(pid: object, host: object) -> bool:
    r"""Whether process ``pid`` may still be running (a process on another host is assumed to be)."""
    if host != _HOST:
        return True
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process: alive
        return True
    return True


def _write_ticket(path: Path, key: str, *, running: bool) -> None:
    state = "running" if running else "queued"
    _write_atomic(path, _dumps({"key": key, "pid": os.getpid(), "host": _HOST, "state": state}))


def _touch(ticket: Path, key: str) -> None:
    r"""Show that ``ticket``'s request still waits (see :data:`STALE_SECONDS`); put it back if it was removed."""
    try:
        os.utime(ticket)
    except FileNotFoundError:
        _write_ticket(ticket, key, running=False)


def _write_atomic(path: Path, text: str, *, durable: bool = False) -> None:
    r"""Write ``text`` to ``path`` through a hidden temporary file and a rename: readers see all of it or none."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            if durable:  # a result must survive a crash right after the rename
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _read_json(path: Path) -> Any:
    r"""The JSON in ``path``, or ``None`` if it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _dumps(value: Any, **options: Any) -> str:
    r"""``value`` as JSON with sorted keys; sets sorted, paths as text, NumPy values through ``tolist()``."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=_plain, **options)


def _plain(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(value, key=_dumps)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if callable(getattr(value, "tolist", None)):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def _dig(data: Any, *path: str) -> Any:
    for name in path:
        if not isinstance(data, dict):
            return None
        data = data.get(name)
    return data


def _checked(key: str) -> str:
    r"""``key`` if it is safe as a file name (letters, digits, ``_`` and ``-``), else ``ValueError``."""
    if not isinstance(key, str) or not _NAME.fullmatch(key):
        raise ValueError(f"a cache key is 1–128 letters, digits, '_' or '-', got {key!r}")
    return key


def _device_name(device: str) -> str:
    r"""``device`` as a folder name: ``cuda:0`` → ``cuda_0``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", device).lstrip(".") or "_"
