"""The command line on a real terminal: run in a pseudo-terminal (pexpect), its output fed to a
terminal emulator (pyte), and what a person would see checked, line by line, at the end and
while it ran. Signals go to the real child process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pexpect
import pyte
import pytest
from fakeserver import Answer, FakeServer, refused_port_fixture  # noqa: F401 - refused_port
from helpers import DEMO, GRAPH, WorkspaceMaker, cli_command, run_record
from hubwriter.synth import write_workspace
from support.holds import DEADLINE, BuildingHold, hold_reading, holding, segments, wait_until

COLUMNS, ROWS = 400, 50
SECRET = "sk-cli-7d1e9a0c44b2"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENLINEAGE", "XDG_", "COLUMNS", "LINES"))
    }
    clean.update(
        {
            "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "config"),
            "OPENLINEAGE_EXPORT_SECRETS": "file",
            "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
            "HOME": str(tmp_path / "home"),
            "TERM": "xterm-256color",
        }
    )
    return clean


BAD_LINES: dict[Path, int] = {}


@pytest.fixture(scope="module")
def big_trail(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trail that takes a few seconds to read and build, with a bad line every 150."""
    root = tmp_path_factory.mktemp("big") / "ws"
    BAD_LINES[root] = write_workspace(root, 4000, seed=7, bad_every=150, segment_lines=1500)[
        "bad_lines"
    ]
    return root


@dataclass
class Terminal:
    """A command running in a pseudo-terminal, and what its screen showed."""

    child: pexpect.spawn
    screen: pyte.HistoryScreen
    stream: pyte.ByteStream
    frames: list[str] = field(default_factory=list)
    """The line the cursor was on after each chunk of output: the bar as it moved."""

    def pump(self, until: str | None = None, timeout: float = DEADLINE) -> bool:
        """Read output until ``until`` appears on the screen (True), or the end (False)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.read_some(1):
                return False
            if until is not None and any(until in row for row in self.screen.display):
                return True
        raise AssertionError(f"timed out; screen:\n{self.text()}\n{self._signals()}")

    def read_some(self, wait: float = 0.02) -> bool:
        """Feed what the child printed within ``wait`` seconds to the screen; False at its end.
        The child never blocks on a full terminal while a test waits with this."""
        try:
            data = self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.stream.feed(data)
        self.frames.append(self.screen.display[self.screen.cursor.y])
        return True

    def show(self, what: str, frame: Callable[[str], bool]) -> str:
        """Read output until a frame (the cursor's line) satisfies ``frame``; that frame."""

        def seen() -> bool:
            return any(frame(f) for f in self.frames)

        wait_until(
            seen,
            lambda: f"{what}; screen:\n{self.text()}\n{self._signals()}",
            while_waiting=self.read_some,
        )
        return next(f for f in self.frames if frame(f))

    def _signals(self) -> str:
        """The child's signal state, for a timeout's message."""
        try:
            status = Path(f"/proc/{self.child.pid}/status").read_text()
        except OSError:
            return "(the child is gone)"
        return " ".join(
            line
            for line in status.splitlines()
            if line.startswith(("State", "SigBlk", "SigIgn", "SigCgt", "SigPnd"))
        )

    def finish(self) -> int:
        self.pump()
        self.child.close()
        return int(
            self.child.exitstatus
            if self.child.exitstatus is not None
            else 128 + self.child.signalstatus
        )

    def lines(self) -> list[str]:
        """Every line of the scrollback and the screen, as a person would read them."""
        history = [
            "".join(row[x].data for x in range(self.screen.columns)).rstrip()
            for row in self.screen.history.top
        ]
        return [line for line in history + [row.rstrip() for row in self.screen.display] if line]

    def text(self) -> str:
        return "\n".join(self.lines())


def _as_a_shell_starts_it() -> None:
    """A shell starts a foreground command with Ctrl-C and SIGTERM at their defaults and no
    signal blocked, whatever the test process inherited or was left with (an ignored or blocked
    signal is inherited across exec: the prompt's Ctrl-C would then do nothing)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def on_terminal(
    args: list[str], env: dict[str, str], cwd: Path | None = None, columns: int = COLUMNS
) -> Terminal:
    screen = pyte.HistoryScreen(columns, ROWS, history=20_000)
    program, *arguments = cli_command(*args)
    child = pexpect.spawn(
        program,
        arguments,
        env=env,
        cwd=str(cwd) if cwd else None,
        dimensions=(ROWS, columns),
        preexec_fn=_as_a_shell_starts_it,
    )
    return Terminal(child, screen, pyte.ByteStream(screen))


def test_bad_entries_print_above_the_bar_and_every_phase_shows_progress(
    big_trail: Path, env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    with holding() as holds:
        reading = hold_reading(holds, big_trail)
        building = BuildingHold(holds, big_trail)
        term = on_terminal(["export", "--dry-run", "-o", str(out), "-w", str(big_trail)], env)
        # Held while reading (the first segment read): the bar shows megabytes read.
        reading.wait("reading the trail", term.read_some)
        term.show(
            "the reading bar in megabytes",
            lambda f: f.startswith("reading the trail") and " MB" in f,
        )
        reading.release()
        # Held while building (the first segment's runs built): runs, rate and ETA.
        building.wait(term.read_some)
        term.show(
            "the building bar with rate and ETA",
            lambda f: (
                f.startswith("building events")
                and "runs/s" in f
                and "/4,000 runs" in f
                and "ETA" in f
            ),
        )
        holds.release_all()
        assert term.finish() == 1, term.text()
    lines = term.lines()
    # Each bad entry is one clean line; no bar was printed into them, none stays behind.
    bad = [line for line in lines if "bad entry:" in line]
    assert bad and all(line.startswith("bad entry: .workspace/lineage/audit/") for line in bad), (
        term.text()
    )
    assert len(bad) == BAD_LINES[big_trail] < 50  # every 150th line
    assert not any(
        "━" in line or "reading the trail" in line or "building events" in line for line in lines
    ), term.text()
    assert lines[-1].endswith("bad entries on the audit trail were skipped (listed above)")
    assert any(line.startswith("dry run: 4000 runs") for line in lines)
    assert len(out.read_bytes().splitlines()) > 4000


def test_a_server_that_is_down_is_said_as_it_happens_and_in_the_summary(
    env: dict[str, str], tmp_path: Path, refused_port: int
) -> None:
    root = tmp_path / "acme-analytics"
    shutil.copytree(DEMO, root)
    port = refused_port
    (root / ".workspace" / "settings.json").write_text(
        json.dumps({"openlineage.url": f"http://127.0.0.1:{port}", "openlineage.retry.maxTime": 3})
    )
    term = on_terminal(["export", "-w", str(root)], env)
    assert term.finish() == 4, term.text()
    lines = term.lines()
    retrying = [line for line in lines if "retrying:" in line]
    assert retrying, term.text()
    assert all(
        line.startswith(f"retrying: http://127.0.0.1:{port} refuses connections (attempt ")
        and "giving up in " in line
        for line in retrying
    )
    # One line per retry of the destination, whatever the number of runs in flight (16),
    # counting down the 3 s window (from 3 s, less what the first attempts took: a busy
    # machine's time, not ours to fix).
    said = [re.search(r"\(attempt (\d+), giving up in (\d+) s\)$", line) for line in retrying]
    assert all(said), retrying
    attempts = [int(found[1]) for found in said if found]
    assert attempts == list(range(1, len(attempts) + 1)), term.text()
    left = [int(found[2]) for found in said if found]
    assert left == sorted(left, reverse=True) and left[0] <= 3, retrying
    summary = lines[lines.index(retrying[-1]) + 1 :]
    url = f"http://127.0.0.1:{port}"
    assert summary[0].startswith(
        f"stopped: the server at {url}/api/v1/lineage could not be reached for 3 s ("
    ), term.text()
    assert summary[1] == (
        "0 of 31 runs sent before it stopped (0 events); 31 pending: the next export sends them"
    )
    assert summary[2] == (
        "hint: is the server running, and is openlineage.url (from "
        "settings.json) the address?; --url tries another server for one "
        "export"
    )
    assert summary[3:] == [
        "never run: churn-model (OpenLineage is a log of runs; nothing to export)"
    ], term.text()
    closing = "\n".join(summary[:3])
    assert closing.count(url) == 1, "the address is said once"
    assert closing.count("running") == 1, "the advice is given once"
    assert not any("exported to" in line or "━" in line for line in lines), term.text()


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_the_progress_bar_fits_on_one_line_of_the_terminal(
    big_trail: Path, env: dict[str, str], tmp_path: Path, columns: int
) -> None:
    out = tmp_path / "events.jsonl"
    with holding() as holds:
        building = BuildingHold(holds, big_trail)
        term = on_terminal(
            ["export", "--dry-run", "-o", str(out), "-w", str(big_trail)], env, columns=columns
        )
        building.wait(term.read_some)
        # The cursor's line is the bar's only line: label, bar, count and ETA, whole.
        frame = term.show(
            f"the building bar with its ETA on one line of {columns} columns",
            lambda f: (
                f.startswith("building events")
                and re.search(r"/4,000 runs .*ETA \d+[smh]( \d+m)?\s*$", f) is not None
            ),
        )
        holds.release_all()
        assert term.finish() == 1, term.text()
    assert len(frame.rstrip()) < columns, frame
    assert "━" in frame, "the bar itself is there"


def test_secrets_set_asks_twice_and_ctrl_c_at_the_prompt_exits_130(
    env: dict[str, str], tmp_path: Path
) -> None:
    term = on_terminal(["secrets", "set", "marquez-prod"], env)
    term.child.expect("value for marquez-prod: ")
    term.child.sendline("first-try")
    term.child.expect("value for marquez-prod again: ")
    term.child.sendline("second-try")
    term.child.expect("do not match")
    term.child.expect("value for marquez-prod: ")
    term.child.sendline(SECRET)
    term.child.expect("again: ")
    term.child.sendline(SECRET)
    assert term.finish() == 0
    stored = json.loads((tmp_path / "config" / "secrets.json").read_text())
    assert stored == {"marquez-prod": SECRET}
    assert SECRET not in term.text()

    term = on_terminal(["secrets", "set", "other"], env)
    term.child.expect("value for other: ")
    term.child.sendintr()
    assert term.finish() == 130, term.text()
    assert "Aborted" not in term.text() and "Traceback" not in term.text()
    assert "interrupted" in term.text()

    # A name that cannot be one is refused before the value is asked for.
    term = on_terminal(["secrets", "set", "my key"], env)
    assert term.finish() == 2, term.text()
    assert "value for" not in term.text() and "a secret's name must be" in term.text()


def test_ctrl_c_of_a_dry_run_leaves_no_half_written_file_and_says_what_it_did(
    big_trail: Path, env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    out.write_text("the previous events\n")
    with holding() as holds:
        building = BuildingHold(holds, big_trail)
        term = on_terminal(["export", "--dry-run", "-o", str(out), "-w", str(big_trail)], env)
        building.wait(term.read_some)  # events of the first segment's runs written, not all
        term.child.sendintr()
        wait_until(
            lambda: "interrupting (Ctrl-C)" in term.text(),
            lambda: f"the export to say what Ctrl-C does; screen:\n{term.text()}",
            while_waiting=term.read_some,
        )
        holds.release_all()
        assert term.finish() == 130, term.text()
    text = term.text()
    assert "requests in flight" not in text and "what was accepted" not in text, text
    assert "interrupting (Ctrl-C): stopping after the run being built" in text
    ended = [line for line in term.lines() if line.startswith("interrupted (Ctrl-C): ")]
    assert len(ended) == 1 and " of 4000 runs built (" in ended[0], text
    built = int(ended[0].removeprefix("interrupted (Ctrl-C): ").split()[0].replace(",", ""))
    assert 0 < built < 4000, text
    assert ended[0].endswith(f"nothing was written to {out}; nothing was sent")
    assert out.read_text() == "the previous events\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def wait_for_our_code(pid: int) -> None:
    """Wait until the interpreter runs our first line: it then catches SIGTERM (the
    interpreter's own start, before any code of ours, is not ours to make interruptible)."""

    def caught() -> bool:
        status = Path(f"/proc/{pid}/status").read_text()
        mask = int(
            next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16
        )
        return bool(mask & (1 << (signal.SIGTERM - 1)))

    wait_until(caught, "the command to start (to catch SIGTERM)")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("moment", ["starting", "reading", "building"])
def test_ctrl_c_at_any_moment_is_exit_130_without_a_traceback(
    big_trail: Path, env: dict[str, str], tmp_path: Path, moment: str
) -> None:
    """Each moment is one the export is held at until the signal was sent: its code just
    started (the trail's first segment held); reading the trail (a segment read, the next one
    held); building events (a segment's runs built, the next one held)."""
    out = tmp_path / "events.jsonl"
    with holding() as holds:
        if moment == "starting":
            holds.take(segments(big_trail)[0])
        reading = hold_reading(holds, big_trail) if moment == "reading" else None
        building = BuildingHold(holds, big_trail) if moment == "building" else None
        proc = subprocess.Popen(
            cli_command(
                "export",
                "--dry-run",
                "-o",
                str(out),
                "-w",
                str(big_trail),
            ),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_for_our_code(proc.pid)
            if reading is not None:
                reading.wait("reading the trail")
            if building is not None:
                building.wait()
            proc.send_signal(signal.SIGINT)
        finally:
            holds.release_all()
            _, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Aborted" not in err, err
    assert "interrupted" in err
    assert not out.exists() and not list(tmp_path.glob(".events.jsonl.*"))


def test_progress_json_is_one_object_a_line_for_a_host(
    big_trail: Path, env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    proc = subprocess.run(
        cli_command(
            "export",
            "--dry-run",
            "-o",
            str(out),
            "--json",
            "--progress",
            "json",
            "-w",
            str(big_trail),
        ),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [json.loads(line) for line in proc.stderr.splitlines()]  # every line is JSON
    summary = json.loads(proc.stdout)
    assert proc.returncode == summary["exitCode"] == 1
    kinds = [line["event"] for line in lines]
    assert kinds.count("badEntry") == BAD_LINES[big_trail] == summary["badEntries"]["count"]
    progress = [line for line in lines if line["event"] == "progress"]
    phases = [p["phase"] for p in progress]
    assert phases[0] == "reading" and phases[-1] == "building"
    assert phases == sorted(phases, key=["reading", "building"].index)
    reading = [(p["bytesDone"], p["bytesTotal"]) for p in progress if p["phase"] == "reading"]
    total = reading[0][1]
    assert reading[0] == (0, total) and reading[-1] == (total, total) and total > 1_000_000
    assert [done for done, _ in reading] == sorted(done for done, _ in reading)
    last = progress[-1]
    assert last["runsDone"] == last["runsTotal"] == 4000
    assert last["eventsBuilt"] == summary["events"]["built"] > 0, "a dry run builds events"
    assert last["eventsSent"] == summary["events"]["sent"] == 0, "and sends none"
    # The summary in the CLI's own words, for a host to show (the editor's output channel).
    assert lines[-2]["event"] == "summary"
    assert lines[-2]["text"].startswith(
        f"dry run: 4000 runs, {summary['events']['built']} events built"
    )
    assert f"{BAD_LINES[big_trail]:,} bad entries on the audit trail" in lines[-2]["text"]
    assert lines[-1] == {"event": "finished", "exitCode": 1}


TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"
RED = "\x1b[31m"
FORGED = "exported to https://prod.example.com/api/v1/lineage: 9 of 9 runs sent (27 events)"


def test_what_strangers_wrote_reaches_the_terminal_escaped_never_acting_on_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A pipeline id (from the workspace), a trace id (from the trail) and a server's error
    body carrying escape sequences and line breaks: printed with them escaped. The title stays,
    the screen is not cleared, no colour changes, and no line is forged."""
    ws = WorkspaceMaker(tmp_path / "ws")
    pipeline = f"sales{TITLE}\n{FORGED}\r"
    graph = json.loads(json.dumps(GRAPH))
    graph["pipelines"][0]["id"] = pipeline
    graph["pipelines"][1]["id"] = f"never{CLEAR}"
    ws.graph(graph)
    ws.segment("2026-11-02.jsonl", [run_record(f"run-1{RED}", pipeline=pipeline)])
    with FakeServer(Answer(400, body=f"bad event {TITLE}{CLEAR}{RED}\x9b2J done")) as server:
        ws.settings({"openlineage.url": server.url})
        term = on_terminal(["export", "--progress", "none", "-w", str(ws.root)], env)
        code = term.finish()
    text = term.text()
    assert code == 1, text
    screen = term.screen
    assert screen.title == "", f"the title was set to {screen.title!r}"
    # Nothing was cleared: the first line the command printed is still the first one.
    lines = term.lines()
    assert lines[0].startswith("nothing exported to http://127.0.0.1:"), text
    assert not any(line.startswith("exported to https://prod") for line in lines), text
    # Every character drawn in the default colour.
    colours = {char.fg for row in screen.buffer.values() for char in row.values()}
    assert colours <= {"default"}, colours
    escaped = "sales\\x1b]0;pwned\\x07\\nexported to https://prod.example.com"
    assert any(escaped in line for line in lines), text
    assert any(
        "bad event \\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\\x1b[31m\\x9b2J done" in line for line in lines
    ), text
    assert any("run-1\\x1b[31m" in line for line in lines), text
    assert any(line.startswith("never run: never\\x1b[2J") for line in lines), text

    # status and settings list print the stranger's values escaped too.
    (ws.root / ".workspace" / "settings.json").write_text(
        json.dumps({"openlineage.url": server.url, "openlineage.namespace": f"ns{TITLE}\n{FORGED}"})
    )
    for command in (["status"], ["settings", "list"], ["settings", "get", "openlineage.namespace"]):
        term = on_terminal([*command, "-w", str(ws.root)], env)
        term.finish()
        assert term.screen.title == "", (command, term.screen.title)
        assert not any(line.startswith("exported to https://prod") for line in term.lines()), (
            term.text()
        )
    assert any("ns\\x1b]0;pwned\\x07\\nexported" in line for line in term.lines()), term.text()


def test_progress_json_streams_the_first_bad_entries_and_the_summary_counts_the_rest() -> None:
    """Before: ``--progress json`` streamed every bad entry (600 of 600; 42 MB of stderr for
    20 lines quoting a 2 MiB stage id), into the host's pipe and its list of warnings."""
    import io

    from openlineage_export.hub.model import BadEntry
    from openlineage_export.terminal.display import BAD_ENTRIES_STREAMED, Display

    stream = io.StringIO()
    with Display("json", stream=stream) as display:
        for line in range(BAD_ENTRIES_STREAMED + 50):
            display.bad_entry(BadEntry("audit/000001.jsonl", line + 1, "not JSON"))
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["line"] for line in lines] == list(range(1, BAD_ENTRIES_STREAMED + 1))
    assert display.bad_entries == BAD_ENTRIES_STREAMED + 50
    assert display.bad_entries_hidden == 50
