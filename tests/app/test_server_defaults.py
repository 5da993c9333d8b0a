"""`streamlit run` from the repository root takes .streamlit/config.toml: it listens on 127.0.0.1
only, refuses a websocket whose Host is a foreign name (DNS rebinding), and shows a user no
exception details."""

import socket
import subprocess
import sys

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from support.browser import ROOT, free_port, stop_server, wait_until_healthy

pytestmark = pytest.mark.slow  # a `streamlit run` server

SECRET = "/secret/server/path"


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    """A script that fails, run with no flag but the port, so the repository's config decides."""
    script = tmp_path_factory.mktemp("app") / "failing.py"
    script.write_text(f"raise RuntimeError({SECRET!r})\n")
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port)]
    server = subprocess.Popen(
        [*command, "--server.headless", "true"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", server)
        yield port
    finally:
        stop_server(server)


def refuses_connections(address: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family) as probe:
        probe.settimeout(2)
        return probe.connect_ex((address, port)) != 0


def test_the_server_listens_on_127_0_0_1_only(port):
    # Linux routes all of 127/8 to the loopback device: a server bound to every interface
    # answers on 127.0.0.2, one bound to 127.0.0.1 does not
    assert not refuses_connections("127.0.0.1", port)
    assert refuses_connections("127.0.0.2", port)
    assert refuses_connections("::1", port)


def test_a_websocket_with_a_foreign_host_is_refused(port):
    with socket.create_connection(("127.0.0.1", port)) as sock, pytest.raises(InvalidStatus) as no:
        # what a browser sends after DNS rebinding: the foreign name as Host and as Origin
        connect(
            f"ws://rebound.example:{port}/_stcore/stream",
            sock=sock,
            origin="http://rebound.example",
        )
    assert no.value.response.status_code == 403


def test_an_uncaught_exception_shows_no_details(port):
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    with connect(url, origin=f"http://127.0.0.1:{port}", subprotocols=["streamlit"]) as stream:
        rerun = BackMsg()
        rerun.rerun_script.SetInParent()
        stream.send(rerun.SerializeToString())
        exceptions = []
        while True:
            message = ForwardMsg.FromString(stream.recv(timeout=60))
            if message.WhichOneof("type") == "script_finished":
                break
            if message.delta.new_element.WhichOneof("type") == "exception":
                exceptions.append(message.delta.new_element.exception)
    assert len(exceptions) == 1
    shown = exceptions[0]
    assert "redacted" in shown.message and SECRET not in shown.message
    assert not shown.type and not shown.stack_trace
