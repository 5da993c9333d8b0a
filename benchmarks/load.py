"""A lecture hall against one server: N users acting at the same moment, and the worst-case
cache fill, measured at the websocket, as Streamlit's own browser client talks to the server.

    python -m benchmarks.load                      # 20 users, the shipped model
    python -m benchmarks.load --users 5 --rounds 1 --fill 10
    python -m benchmarks.load --baseline /tmp/before   # another checkout, side by side
    python -m benchmarks.load --dry-run            # a tiny random model, seconds

Each action is what a browser does when a student opens a link or moves to another page: a new
session on ``/_stcore/stream`` asks for one script run of a page with a query string (the
app keeps every setting in the URL); its time is from that request to the server's
``script_finished``, so it is the server's time plus loopback. Every round, all users start the
same kind of action together (a barrier) and each waits ``--think`` seconds between actions:

- new sentence: the Translate page with a sentence no one has asked for (a cache miss);
- page switch: the Attention page on the user's sentence (a cache hit);
- head change: the same page with another layer and head;
- beam step: the Beam search page at another step;
- heads lab: the Heads lab on the user's sentence.

Then the fill: ``--fill`` distinct long sentences with beam 8 on the Translate, Attention and
Training dynamics pages (every training snapshot on the sentence), one after another: the worst
case for what the caches hold. The server's resident memory (RSS) is read after start, after the
load, after the fill, and ``--settle`` seconds later, once Streamlit has dropped the closed
sessions (it keeps a closed tab's session for 120 s in case it reconnects).

Measure on a quiet machine: beside other work, the server's share of the cores follows its
number of runnable threads, so app/admission.py's gate (two script runs at a time) looks far
slower there than it is.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchmarks.flags import at_least, checkout_folder

ROOT = Path(__file__).resolve().parent.parent
SUBJECTS = ["dog", "cat", "child", "teacher", "farmer", "doctor"]
PLACES = ["garden", "house", "street", "park", "river", "school"]
VERBS = ["sees", "likes", "paints", "finds", "visits"]
LONG_TAIL = (
    "while two young children in red shirts are playing football next to a large fountain "
    "and their parents sit on a wooden bench in the warm evening sun"
)


@dataclass(frozen=True)
class Action:
    """One script run a browser would ask for: a page (its URL path) and a query string."""

    name: str
    page: str
    query: str


def sentence(user: int, round_: int) -> str:
    """A short sentence that no other (user, round) gets: each one is a cache miss."""
    index = round_ * 1000 + user
    subject, verb, place = SUBJECTS[index % 6], VERBS[index % 5], PLACES[(index // 6) % 6]
    return f"The {subject} {verb} the {place} number {index}."


def long_sentence(number: int) -> str:
    """Longer than the model reads (cut at its source budget, 64 pieces for the shipped model),
    each one distinct: the largest trace the app keeps."""
    subject, verb = SUBJECTS[number % 6], VERBS[number % 5]
    return f"On day {number} the {subject} {verb} the city {LONG_TAIL}, {LONG_TAIL}."


def query(**settings: object) -> str:
    return urllib.parse.urlencode(settings)


def actions_of_round(user: int, round_: int) -> list[Action]:
    text = sentence(user, round_)
    layer, head = 1 + (user + round_) % 6, 1 + user % 8
    return [
        Action("new sentence", "translate", query(text=text)),
        Action("page switch", "attention", query(text=text)),
        Action("head change", "attention", query(text=text, layer=layer, head=head)),
        Action("beam step", "beam_search", query(text=text, step=2 + user % 3)),
        Action("heads lab", "head_lab", query(text=text)),
    ]


def run_action(url: str, action: Action, timeout: float = 300) -> float:
    """Seconds from asking for the script run to the server's ``script_finished``. Raises
    RuntimeError when the page shows an exception or the run does not finish normally."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    request = BackMsg()
    request.rerun_script.query_string = action.query
    request.rerun_script.page_name = action.page
    stream = url.replace("http://", "ws://") + "/_stcore/stream"
    with connect(
        stream, subprotocols=["streamlit"], max_size=None, open_timeout=60, ping_interval=None
    ) as socket:
        start = time.perf_counter()
        socket.send(request.SerializeToString())
        while True:
            message = ForwardMsg()
            message.ParseFromString(socket.recv(timeout=timeout))
            if message.WhichOneof("type") == "delta":
                element = message.delta.new_element
                if element.WhichOneof("type") == "exception":
                    raise RuntimeError(f"{action.name}: {element.exception.message}")
            if message.WhichOneof("type") == "script_finished":
                if message.script_finished != ForwardMsg.FINISHED_SUCCESSFULLY:
                    raise RuntimeError(
                        f"{action.name}: script ended with {message.script_finished}"
                    )
                return time.perf_counter() - start


def resident_mb(pid: int) -> float:
    """The process's resident set size in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@contextmanager
def server(checkout: Path, model: Path, log: Path) -> Iterator[tuple[str, int]]:
    """``streamlit run`` of ``checkout``'s app on a free local port: (address, process id)."""
    from support.browser import free_port, stop_server, streamlit_command, wait_until_healthy

    port = free_port()
    env = {**os.environ, "ATTENTION_LAB_MODEL": str(model), "PYTHONPATH": str(checkout)}
    with open(log, "w") as out:
        process = subprocess.Popen(
            streamlit_command(port), cwd=checkout, env=env, stdout=out, stderr=out
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_healthy(url, process)
            yield url, process.pid
        finally:
            stop_server(process)


def simultaneous(url: str, actions: list[Action], think: float) -> list[tuple[str, float]]:
    """Every user's actions in order, all users starting each action together."""
    barrier = threading.Barrier(len(actions))
    times: list[tuple[str, float]] = []
    errors: list[BaseException] = []

    def user(own: list[Action]) -> None:
        for action in own:
            barrier.wait()
            try:
                times.append((action.name, run_action(url, action)))
            except BaseException as error:  # reported after the round; others go on
                errors.append(error)
            time.sleep(think)

    threads = [threading.Thread(target=user, args=(own,)) for own in actions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(f"{len(errors)} actions failed, first: {errors[0]}")
    return times


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(checkout: Path, model: Path, args: argparse.Namespace) -> dict[str, object]:
    """Latencies per action kind, and RSS after start, after the load and after the fill."""
    with (
        tempfile.TemporaryDirectory() as scratch,
        server(checkout, model, Path(scratch) / "server.log") as (url, pid),
    ):
        for action in actions_of_round(0, -1):  # load the model, compile, warm the code paths
            run_action(url, action)
        memory = {"after start": resident_mb(pid)}
        times: list[tuple[str, float]] = []
        for round_ in range(args.rounds):
            plan = [actions_of_round(user, round_) for user in range(args.users)]
            times += simultaneous(url, plan, args.think)
        memory["after the load"] = resident_mb(pid)
        for number in range(args.fill):
            text = long_sentence(number)
            for page in ("translate", "attention", "training"):
                run_action(url, Action("fill", page, query(text=text, beam=8)))
        memory[f"after {args.fill} long sentences, beam 8"] = resident_mb(pid)
        # Streamlit keeps a closed tab's session (its state and messages) for a while, in case
        # it reconnects: what stays after that is what the caches hold
        time.sleep(args.settle)
        run_action(url, actions_of_round(0, -1)[0])
        memory[f"{args.settle:.0f} s later (closed sessions expired)"] = resident_mb(pid)
    by_kind: dict[str, list[float]] = {}
    for name, seconds in times:
        by_kind.setdefault(name, []).append(seconds)
    by_kind["all actions"] = [seconds for _, seconds in times]
    return {"latency": by_kind, "memory": memory}


def report(results: dict[str, dict[str, object]]) -> None:
    labels = list(results)
    print(f"\n{'latency, s':28}" + "".join(f"{label:>30}" for label in labels))
    print(f"{'':28}" + "".join(f"{'median / p95 / max':>30}" for _ in labels))
    kinds = results[labels[0]]["latency"]
    for kind in kinds:
        cells = []
        for label in labels:
            values = results[label]["latency"][kind]
            cells.append(
                f"{statistics.median(values):.2f} / {percentile(values, 0.95):.2f} / "
                f"{max(values):.2f}"
            )
        print(f"{kind:28}" + "".join(f"{cell:>30}" for cell in cells))
    print(f"\n{'server RSS, MB':40}" + "".join(f"{label:>18}" for label in labels))
    for moment in results[labels[0]]["memory"]:
        print(
            f"{moment:40}"
            + "".join(f"{results[label]['memory'][moment]:>18.0f}" for label in labels)
        )


def main() -> None:
    from benchmarks.app_timings import random_model
    from core import DEFAULT_MODEL

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=Path(DEFAULT_MODEL), help="model directory")
    parser.add_argument(
        "--users", type=at_least(1), default=20, help="users acting at the same moment"
    )
    parser.add_argument("--rounds", type=at_least(1), default=3, help="rounds of the five actions")
    parser.add_argument("--think", type=float, default=0.0, help="seconds between a user's actions")
    parser.add_argument(
        "--fill", type=at_least(0), default=40, help="distinct long sentences, beam 8"
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=135,
        help="seconds to wait after the fill: Streamlit drops closed sessions after 120 s",
    )
    parser.add_argument("--baseline", type=checkout_folder, help="another checkout, measured first")
    parser.add_argument("--dry-run", action="store_true", help="random model, 2 users, 1 round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        model = args.model.resolve()
        if args.dry_run:
            model = random_model(Path(scratch))  # seconds to build: the run, not its numbers
            args.users, args.rounds, args.fill, args.settle = 2, 1, 2, 0
        checkouts = {"this checkout": ROOT}
        if args.baseline:
            checkouts = {f"baseline {args.baseline}": args.baseline.resolve(), **checkouts}
        print(f"{args.users} users, {args.rounds} rounds, think {args.think} s, model {model}")
        results = {}
        for label, checkout in checkouts.items():
            results[label] = measure(checkout, model, args)
            print(f"{label}: done", flush=True)
        report(results)


if __name__ == "__main__":
    main()
