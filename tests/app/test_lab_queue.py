r"""The lab's run queue: each configuration trains once across threads and processes, one device slot at a time."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from posenc_lab import queue as lab_queue
from posenc_lab.queue import LabQueue, QueueCancelled, cache_dir, config_key

ROOT = Path(__file__).resolve().parents[2]
POLL = 0.02

# A server process of its own: loads lab_queue from its file (not through posenc_ui, whose __init__ loads pandas),
# asks for one key, trains once go-<name> exists, and prints the result. Files under <dir> say what happened.
WORKER = textwrap.dedent(
    r"""
    import importlib.util, json, sys, time
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("lab_queue", sys.argv[1])
    lab_queue = sys.modules["lab_queue"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab_queue)
    folder, key, device, name = Path(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]

    def train():
        begin = time.time()
        with open(folder / "trained.log", "a") as log:
            log.write(name + "\n")
        (folder / f"started-{name}").touch()
        deadline = time.monotonic() + 20
        while not (folder / f"go-{name}").exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        (folder / f"span-{name}").write_text(json.dumps([begin, time.time()]))
        return {"trained_by": name, "key": key, "losses": (0.5, 0.25)}

    def on_wait(position):
        with open(folder / f"positions-{name}", "a") as log:
            log.write(f"{position}\n")
        return True

    result = lab_queue.LabQueue(folder / "cache").run(key, device, train, on_wait=on_wait, poll=0.02)
    print(json.dumps(result))
    """
)


def _wait_until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        time.sleep(0.002)


def _spawn(folder: Path, key: str, device: str, name: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", WORKER, lab_queue.__file__, str(folder), key, device, name]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(process: subprocess.Popen[str]) -> dict:
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err[-2000:]
    return json.loads(out)


def _positions(folder: Path, name: str) -> list[int]:
    return [int(line) for line in (folder / f"positions-{name}").read_text().split()]


def _span(folder: Path, name: str) -> tuple[float, float]:
    begin, end = json.loads((folder / f"span-{name}").read_text())
    return begin, end


def _start(target: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _recorder(into: list[int], answer: bool = True) -> Callable[[int], bool]:
    def on_wait(position: int) -> bool:
        into.append(position)
        return answer

    return on_wait


def _tickets(root: Path, device: str = "cpu") -> list[str]:
    folder = root / "queue" / device
    return sorted(path.name for path in folder.iterdir() if not path.name.startswith(".")) if folder.exists() else []


class _Gate:
    r"""A ``train`` that notes it started, waits for :meth:`open`, and returns ``{"name": name}``."""

    def __init__(self, name: str, fail: bool = False) -> None:
        self.name, self.fail = name, fail
        self.started, self.opened = threading.Event(), threading.Event()
        self.calls, self.span = 0, (0.0, 0.0)

    def __call__(self) -> dict:
        self.calls += 1
        begin = time.monotonic()
        self.started.set()
        assert self.opened.wait(10)
        self.span = (begin, time.monotonic())
        if self.fail:
            raise RuntimeError(f"{self.name} diverged")
        return {"name": self.name}

    def open(self) -> None:
        self.opened.set()


# ---- one training per configuration ----------------------------------------------------------------------------


def test_identical_requests_in_two_threads_train_once_and_both_get_the_result(tmp_path: Path) -> None:
    queue, train, positions, results = LabQueue(tmp_path), _Gate("first"), [], {}
    first = _start(lambda: results.setdefault("first", queue.run("k", "cpu", train, poll=POLL)))
    assert train.started.wait(10)
    second = _start(lambda: results.setdefault("second", queue.run("k", "cpu", train, _recorder(positions), POLL)))
    _wait_until(lambda: positions)
    assert queue.training("k")  # what the waiting reader is told: its configuration is training now
    train.open()
    first.join(10)
    second.join(10)
    assert train.calls == 1
    assert results["first"] == results["second"] == queue.cached("k") == {"name": "first"}
    assert min(positions) >= 1
    assert _tickets(tmp_path) == [] and not queue.training("k")


def test_identical_requests_in_two_processes_train_once(tmp_path: Path) -> None:
    a = _spawn(tmp_path, "same", "cpu", "a")
    _wait_until(lambda: (tmp_path / "started-a").exists())
    b = _spawn(tmp_path, "same", "cpu", "b")
    _wait_until(lambda: (tmp_path / "positions-b").exists())
    (tmp_path / "go-a").touch()
    (tmp_path / "go-b").touch()  # would let b finish, were it (wrongly) training too
    expected = {"trained_by": "a", "key": "same", "losses": [0.5, 0.25]}
    assert _result(a) == _result(b) == expected
    assert (tmp_path / "trained.log").read_text().split() == ["a"]
    assert min(_positions(tmp_path, "b")) >= 1
    assert LabQueue(tmp_path / "cache").cached("same") == expected


def test_a_finished_result_is_read_from_disk_without_training(tmp_path: Path) -> None:
    LabQueue(tmp_path).run("k", "cpu", lambda: {"steps": 300})
    again = LabQueue(tmp_path).run("k", "cuda", lambda: pytest.fail("trained again"))  # a new process, say
    assert again == {"steps": 300}


# ---- the device queue --------------------------------------------------------------------------------------------


def test_different_configurations_on_one_slot_train_one_at_a_time_in_order_of_arrival(tmp_path: Path) -> None:
    queue = LabQueue(tmp_path, slots_per_device=1)
    trains = {name: _Gate(name) for name in "abc"}
    positions: dict[str, list[int]] = {"b": [], "c": []}
    threads = [_start(lambda: queue.run("a", "cpu", trains["a"], poll=POLL))]
    assert trains["a"].started.wait(10)
    for name in "bc":
        threads.append(_start(lambda n=name: queue.run(n, "cpu", trains[n], _recorder(positions[n]), POLL)))
        _wait_until(lambda n=name: positions[n])
    assert positions["b"][0] == 1 and positions["c"][0] == 2
    trains["a"].open()
    assert trains["b"].started.wait(10)
    _wait_until(lambda: positions["c"][-1] == 1)  # moved up when a finished
    assert not trains["c"].started.is_set()
    trains["b"].open()
    trains["c"].open()
    for thread in threads:
        thread.join(10)
    assert set(positions["b"]) == {1}
    spans = [trains[name].span for name in "abc"]
    assert spans == sorted(spans)  # in order of arrival
    assert all(end <= begin for (_, end), (begin, _) in itertools.pairwise(spans))  # never two at once
    assert all(train.calls == 1 for train in trains.values())


def test_one_slot_is_shared_by_server_processes(tmp_path: Path) -> None:
    a = _spawn(tmp_path, "first", "cpu", "a")
    _wait_until(lambda: (tmp_path / "started-a").exists())
    b = _spawn(tmp_path, "second", "cpu", "b")
    _wait_until(lambda: (tmp_path / "positions-b").exists())
    time.sleep(0.1)  # b keeps waiting while a trains
    assert not (tmp_path / "started-b").exists()
    (tmp_path / "go-a").touch()
    (tmp_path / "go-b").touch()
    assert _result(a)["trained_by"] == "a" and _result(b)["trained_by"] == "b"
    assert set(_positions(tmp_path, "b")) == {1}
    assert _span(tmp_path, "a")[1] <= _span(tmp_path, "b")[0]


def test_two_slots_train_two_at_once_and_queue_the_third(tmp_path: Path) -> None:
    queue = LabQueue(tmp_path, slots_per_device=2)
    trains, waited = {name: _Gate(name) for name in "abc"}, {name: [] for name in "abc"}
    threads = []
    for name in "ab":
        threads.append(_start(lambda n=name: queue.run(n, "cpu", trains[n], _recorder(waited[n]), POLL)))
        assert trains[name].started.wait(10)  # both at once: the second never waited
    threads.append(_start(lambda: queue.run("c", "cpu", trains["c"], _recorder(waited["c"]), POLL)))
    _wait_until(lambda: waited["c"])
    assert waited["c"][0] == 1 and not trains["c"].started.is_set()
    trains["b"].open()
    assert trains["c"].started.wait(10)  # b's slot, while a still trains
    trains["a"].open()
    trains["c"].open()
    for thread in threads:
        thread.join(10)
    assert waited["a"] == waited["b"] == []


def test_devices_have_independent_queues(tmp_path: Path) -> None:
    queue, cpu, waited = LabQueue(tmp_path), _Gate("cpu run"), []
    thread = _start(lambda: queue.run("on-cpu", "cpu", cpu, poll=POLL))
    assert cpu.started.wait(10)
    result = queue.run("on-cuda", "cuda:0", lambda: {"name": "cuda run"}, _recorder(waited), POLL)
    assert result == {"name": "cuda run"} and waited == []
    assert cpu.started.is_set() and not cpu.opened.is_set()  # the cpu run is still training
    cpu.open()
    thread.join(10)


# ---- cancelling, failing, crashing -------------------------------------------------------------------------------


def test_cancelling_leaves_the_queue_and_blocks_nobody(tmp_path: Path) -> None:
    queue, first = LabQueue(tmp_path), _Gate("first")
    thread = _start(lambda: queue.run("x", "cpu", first, poll=POLL))
    assert first.started.wait(10)
    asked: list[int] = []
    with pytest.raises(QueueCancelled):  # a different configuration, waiting for the slot
        queue.run("y", "cpu", lambda: pytest.fail("ran"), _recorder(asked, answer=False), POLL)
    assert asked == [1]
    with pytest.raises(QueueCancelled):  # the same configuration, waiting for its first request
        queue.run("x", "cpu", lambda: pytest.fail("ran"), _recorder([], answer=False), POLL)
    assert len(_tickets(tmp_path)) == 1  # only the training one
    later, positions = _Gate("later"), []
    behind = _start(lambda: queue.run("z", "cpu", later, _recorder(positions), POLL))
    _wait_until(lambda: positions)
    assert positions[0] == 1  # the cancelled ones are not ahead of it
    first.open()
    later.open()
    thread.join(10)
    behind.join(10)
    assert later.calls == 1 and queue.cached("z") == {"name": "later"} and queue.cached("y") is None
    assert _tickets(tmp_path) == []


def test_a_cancelled_first_request_hands_the_configuration_to_an_identical_one(tmp_path: Path) -> None:
    queue, blocker, train = LabQueue(tmp_path), _Gate("blocker"), _Gate("k")
    _start(lambda: queue.run("blocker", "cpu", blocker, poll=POLL))
    assert blocker.started.wait(10)
    leaving, cancelled = threading.Event(), []

    def first() -> None:
        with pytest.raises(QueueCancelled):
            queue.run("k", "cpu", train, lambda _: not leaving.is_set(), POLL)
        cancelled.append(True)

    leaver = _start(first)
    _wait_until(lambda: len(_tickets(tmp_path)) == 2)
    results, waited = [], []
    follower = _start(lambda: results.append(queue.run("k", "cpu", train, _recorder(waited), POLL)))
    _wait_until(lambda: waited)
    assert waited[0] == 1 and not queue.training("k")  # its configuration is next, not yet training
    leaving.set()
    leaver.join(10)
    assert cancelled == [True]
    _wait_until(lambda: len(_tickets(tmp_path)) == 2)  # the identical request took its place in line
    blocker.open()
    train.open()
    follower.join(10)
    assert results == [{"name": "k"}] and train.calls == 1


def test_a_failing_run_releases_everything_stores_nothing_and_is_trained_again(tmp_path: Path) -> None:
    queue, broken = LabQueue(tmp_path), _Gate("broken", fail=True)
    errors, results, waited = [], [], []

    def first() -> None:
        try:
            queue.run("k", "cpu", broken, poll=POLL)
        except RuntimeError as error:
            errors.append(error)

    thread = _start(first)
    assert broken.started.wait(10)
    fixed = _Gate("fixed")
    follower = _start(lambda: results.append(queue.run("k", "cpu", fixed, _recorder(waited), POLL)))
    _wait_until(lambda: waited)
    broken.open()
    thread.join(10)
    assert [str(error) for error in errors] == ["broken diverged"]
    assert fixed.started.wait(10)  # the identical request waiting for it trains instead
    fixed.open()
    follower.join(10)
    assert results == [{"name": "fixed"}]
    with pytest.raises(RuntimeError, match="again"):  # the exception propagates, nothing is written
        queue.run("other", "cpu", _fails)
    assert queue.cached("other") is None
    assert sorted(path.name for path in (tmp_path / "results").iterdir()) == ["k.json"]  # no temporary files either
    assert queue.run("other", "cpu", lambda: {"ok": True}) == {"ok": True}  # the lock was released
    assert _tickets(tmp_path) == []


def _fails() -> dict:
    raise RuntimeError("failed again")


def test_an_unserialisable_result_is_an_error_and_stores_nothing(tmp_path: Path) -> None:
    queue = LabQueue(tmp_path)
    with pytest.raises(TypeError):
        queue.run("k", "cpu", lambda: {"model": object()})
    assert queue.cached("k") is None and list((tmp_path / "results").iterdir()) == []


def test_tickets_of_dead_processes_and_stale_tickets_are_ignored_and_removed(tmp_path: Path) -> None:
    queue = LabQueue(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    folder = tmp_path / "queue" / "cpu"
    folder.mkdir(parents=True, exist_ok=True)
    ticket = {"key": "crashed", "host": socket.gethostname(), "state": "running"}
    (folder / f"{1:020d}-{dead.pid}-dead").write_text(json.dumps({**ticket, "pid": dead.pid}))
    old = folder / f"{2:020d}-{os.getpid()}-old"
    old.write_text(json.dumps({**ticket, "pid": os.getpid()}))
    long_ago = time.time() - lab_queue.STALE_SECONDS - 60
    os.utime(old, (long_ago, long_ago))
    waited: list[int] = []
    assert queue.run("k", "cpu", lambda: {"ran": True}, _recorder(waited), POLL) == {"ran": True}
    assert waited == [] and _tickets(tmp_path) == []


def test_a_half_written_result_is_never_read(tmp_path: Path) -> None:
    queue = LabQueue(tmp_path)
    (tmp_path / "results" / ".k.json.x1y2.tmp").write_text('{"half": ')
    assert queue.cached("k") is None
    with pytest.raises(ValueError):
        queue.cached("../k")


# ---- timings, keys, directory ------------------------------------------------------------------------------------


def test_timings_round_trip_through_disk_and_the_last_measurement_wins(tmp_path: Path) -> None:
    queue = LabQueue(tmp_path)
    assert queue.timing("cpu", "lag") == {} and queue.import_seconds("cpu") is None
    queue.record_timing("cpu", "lag", "rope", 1000.0)
    queue.record_timing("cpu", "lag", "alibi", 1500.0)
    queue.record_timing("cpu", "lag", "rope", 1200.0)
    queue.record_timing("cuda", "lag", "rope", 90000.0)
    queue.record_timing("cpu", "retrieval", "rope", 800.0)
    queue.record_import_seconds("cpu", 2.5)
    reread = LabQueue(tmp_path)  # another server process
    assert reread.timing("cpu", "lag") == {"rope": 1200.0, "alibi": 1500.0}
    assert reread.timing("cuda", "lag") == {"rope": 90000.0}
    assert reread.timing("cpu", "retrieval") == {"rope": 800.0}
    assert reread.timing("cuda", "text") == {}
    assert reread.import_seconds("cpu") == 2.5 and reread.import_seconds("cuda") is None
    (tmp_path / "timings.json").write_text("not json")
    assert reread.timing("cpu", "lag") == {}


@dataclasses.dataclass(frozen=True)
class _Config:
    task: str = "lag"
    encodings: tuple[str, ...] = ("rope", "alibi")
    steps: int = 300
    lr: float = 3e-3


def test_config_keys_are_stable_and_change_with_every_field(monkeypatch: pytest.MonkeyPatch) -> None:
    base = dataclasses.asdict(_Config())
    key = config_key(base)
    assert len(key) == 64 and set(key) <= set("0123456789abcdef")
    assert config_key(dict(reversed(base.items()))) == key
    assert config_key(_Config()) == key
    assert config_key({**base, "encodings": list(base["encodings"])}) == key
    changes = {"task": "text", "encodings": ("alibi", "rope"), "steps": 301, "lr": 3e-4}
    changed = [config_key(dataclasses.replace(_Config(), **{name: value})) for name, value in changes.items()]
    assert len({key, *changed}) == 1 + len(changed)
    assert config_key({**base, "device": "cuda"}) != key
    monkeypatch.setattr(lab_queue, "FORMAT_VERSION", lab_queue.FORMAT_VERSION + 1)
    assert config_key(base) != key
    with pytest.raises(TypeError):
        config_key(["not", "a", "mapping"])


def test_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSENC_LAB_CACHE", str(tmp_path / "elsewhere"))
    assert cache_dir() == tmp_path / "elsewhere" and cache_dir().is_dir()
    monkeypatch.delenv("POSENC_LAB_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "posenc" / "lab" and cache_dir().is_dir()


def test_the_module_imports_neither_streamlit_nor_torch() -> None:
    script = "import sys, posenc_lab.queue; print('streamlit' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "False"]
