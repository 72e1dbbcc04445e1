r"""Nagle's algorithm on the server's connections (``posenc_ui.frame.process.no_delay``).

The listener is bound by Streamlit's own function and served by asyncio, the path ``streamlit run`` takes, so the
tests see what a tab's connection gets. They read the socket option; no test times anything.
"""

from __future__ import annotations

import asyncio
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest
from streamlit.web.server.starlette.starlette_server import _bind_socket

from posenc_ui.frame.process import NO_DELAY_ENV, no_delay, settle_process


def nodelay(sock: socket.socket) -> bool:
    return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))


def accepted_nodelay(listener: socket.socket) -> bool:
    r"""Serve ``listener`` with asyncio as uvicorn does, connect one client: does asyncio's transport have Nagle off?"""

    async def main() -> bool:
        seen: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                seen.set_result(nodelay(transport.get_extra_info("socket")))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
        async with server:
            port = listener.getsockname()[1]
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            result = await asyncio.wait_for(seen, timeout=10)
            writer.close()
            return result

    # In a thread of its own: in a full run, pytest-playwright's sync API keeps an event loop running on this one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, main()).result(timeout=30)


@pytest.fixture()
def listener():
    sock = _bind_socket("127.0.0.1", 0, 8)
    yield sock
    sock.close()


def test_streamlit_s_own_listener_leaves_nagle_on(listener: socket.socket) -> None:
    # Why no_delay exists: the listener reports protocol 0, so asyncio does not turn Nagle off on its connections.
    # When this fails, the pinned Streamlit binds its socket differently and no_delay may be unnecessary.
    assert listener.proto == 0
    assert not accepted_nodelay(listener)


def test_no_delay_turns_nagle_off_for_the_listener_and_every_later_connection(listener: socket.socket) -> None:
    assert no_delay() >= 1
    assert nodelay(listener)
    assert accepted_nodelay(listener)


def test_no_delay_reaches_the_connections_already_open(listener: socket.socket) -> None:
    client = socket.create_connection(listener.getsockname())
    listener.setblocking(True)
    served, _ = listener.accept()
    with client, served:
        assert not nodelay(served)
        no_delay()
        assert nodelay(served) and nodelay(client)


def test_no_delay_leaves_other_sockets_and_descriptors_alone() -> None:
    left, right = socket.socketpair()  # AF_UNIX: no TCP option to set
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with left, right, udp:
        no_delay()
        for sock in (left, right, udp):
            assert sock.fileno() >= 0  # still open, still this process's
        left.sendall(b"x")
        assert right.recv(1) == b"x"


def test_the_environment_can_keep_nagle_on_for_a_side_by_side_bench(monkeypatch, listener: socket.socket) -> None:
    import posenc_ui.frame.process as process

    monkeypatch.setattr(process, "_settled", False)
    monkeypatch.setenv(NO_DELAY_ENV, "off")
    monkeypatch.setattr(process, "freeze_heap", lambda: None)  # the rest of the settling is not under test
    monkeypatch.setattr(process, "young_collections", lambda: None)
    monkeypatch.setattr(process, "one_blas_thread", lambda: None)
    settle_process()
    assert not nodelay(listener)
    monkeypatch.setattr(process, "_settled", False)
    monkeypatch.delenv(NO_DELAY_ENV)
    settle_process()
    assert nodelay(listener)
