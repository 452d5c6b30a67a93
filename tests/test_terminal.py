"""The command line on a real terminal: run in a pseudo-terminal (pexpect), its output fed to a
terminal emulator (pyte), and what a person would see checked, line by line, at the end and
while it ran. Signals go to the real child process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pexpect
import pyte
import pytest
from fakeserver import closed_port
from helpers import DEMO
from synth_trail import write_workspace

COLUMNS, ROWS = 400, 50
SECRET = "sk-cli-7d1e9a0c44b2"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("OPENLINEAGE", "XDG_", "COLUMNS", "LINES"))}
    clean.update({"OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "config"),
                  "OPENLINEAGE_EXPORT_SECRETS": "file",
                  "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
                  "HOME": str(tmp_path / "home"), "TERM": "xterm-256color"})
    return clean


BAD_LINES: dict[Path, int] = {}


@pytest.fixture(scope="module")
def big_trail(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trail that takes a few seconds to read and build, with a bad line every 150."""
    root = tmp_path_factory.mktemp("big") / "ws"
    BAD_LINES[root] = write_workspace(root, 4000, seed=7, bad_every=150,
                                      segment_lines=1500)["bad_lines"]
    return root


@dataclass
class Terminal:
    """A command running in a pseudo-terminal, and what its screen showed."""

    child: pexpect.spawn
    screen: pyte.HistoryScreen
    stream: pyte.ByteStream
    frames: list[str] = field(default_factory=list)
    """The line the cursor was on after each chunk of output: the bar as it moved."""

    def pump(self, until: str | None = None, timeout: float = 120) -> bool:
        """Read output until ``until`` appears on the cursor's line (True), or the end."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                data = self.child.read_nonblocking(65536, timeout=1)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return False
            self.stream.feed(data)
            line = self.screen.display[self.screen.cursor.y]
            self.frames.append(line)
            if until is not None and any(until in row for row in self.screen.display):
                return True
        raise AssertionError(f"timed out; screen:\n{self.text()}\n{self._signals()}")

    def _signals(self) -> str:
        """The child's signal state, for a timeout's message."""
        try:
            status = Path(f"/proc/{self.child.pid}/status").read_text()
        except OSError:
            return "(the child is gone)"
        return " ".join(line for line in status.splitlines()
                        if line.startswith(("State", "SigBlk", "SigIgn", "SigCgt", "SigPnd")))

    def finish(self) -> int:
        self.pump()
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None
                   else 128 + self.child.signalstatus)

    def lines(self) -> list[str]:
        """Every line of the scrollback and the screen, as a person would read them."""
        history = ["".join(row[x].data for x in range(self.screen.columns)).rstrip()
                   for row in self.screen.history.top]
        return [line for line in history + [row.rstrip() for row in self.screen.display]
                if line]

    def text(self) -> str:
        return "\n".join(self.lines())


def _as_a_shell_starts_it() -> None:
    """A shell starts a foreground command with Ctrl-C and SIGTERM at their defaults and no
    signal blocked, whatever the test process inherited or was left with (an ignored or blocked
    signal is inherited across exec: the prompt's Ctrl-C would then do nothing)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def on_terminal(args: list[str], env: dict[str, str], cwd: Path | None = None) -> Terminal:
    screen = pyte.HistoryScreen(COLUMNS, ROWS, history=20_000)
    child = pexpect.spawn(sys.executable, ["-m", "openlineage_export", *args], env=env,
                          cwd=str(cwd) if cwd else None, dimensions=(ROWS, COLUMNS),
                          preexec_fn=_as_a_shell_starts_it)
    return Terminal(child, screen, pyte.ByteStream(screen))


def test_bad_entries_print_above_the_bar_and_every_phase_shows_progress(
        big_trail: Path, env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    term = on_terminal(["export", "--dry-run", "-o", str(out), "-w", str(big_trail)], env)
    assert term.finish() == 1, term.text()
    lines = term.lines()
    # Each bad entry is one clean line; no bar was printed into them, none stays behind.
    bad = [line for line in lines if "bad entry:" in line]
    assert bad and all(line.startswith("bad entry: .workspace/lineage/audit/") for line in bad), \
        term.text()
    assert len(bad) == BAD_LINES[big_trail] < 50  # every 150th line
    assert not any("━" in line or "reading the trail" in line or "building events" in line
                   for line in lines), term.text()
    assert lines[-1].endswith("bad entries on the audit trail were skipped (listed above)")
    assert any(line.startswith("dry run: 4000 runs") for line in lines)
    # While it ran: the reading pass in megabytes, then the runs with rate and ETA.
    reading = [f for f in term.frames if f.startswith("reading the trail") and " MB" in f]
    building = [f for f in term.frames if f.startswith("building events") and "runs/s" in f
                and "/4,000 runs" in f and "ETA" in f]
    assert reading and building, "\n".join(term.frames)
    assert len(out.read_bytes().splitlines()) > 4000


def test_a_server_that_is_down_is_said_as_it_happens_and_in_the_summary(
        env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "acme-analytics"
    shutil.copytree(DEMO, root)
    port = closed_port()
    (root / ".workspace" / "settings.json").write_text(json.dumps(
        {"openlineage.url": f"http://127.0.0.1:{port}", "openlineage.retry.maxTime": 3}))
    term = on_terminal(["export", "-w", str(root)], env)
    assert term.finish() == 4, term.text()
    lines = term.lines()
    retrying = [line for line in lines if "retrying:" in line]
    assert retrying, term.text()
    assert all(line.startswith(f"retrying: http://127.0.0.1:{port} refuses connections "
                               "(attempt ") and "giving up in " in line for line in retrying)
    assert "(attempt 1, giving up in 3 s)" in retrying[0]
    summary = lines[lines.index(retrying[-1]) + 1:]
    assert summary[0].startswith(f"stopped: the server at http://127.0.0.1:{port}/api/v1/lineage "
                                 "could not be reached"), term.text()
    assert summary[1] == ("0 of 31 runs sent before it stopped (0 events); 31 pending: the next "
                          "export sends them")
    assert summary[2] == (f"is the server running? check openlineage.url (http://127.0.0.1:{port}"
                          ", from settings.json), or try another server for one export with --url")
    assert not any("exported to" in line or "━" in line for line in lines), term.text()


def test_secrets_set_asks_twice_and_ctrl_c_at_the_prompt_exits_130(
        env: dict[str, str], tmp_path: Path) -> None:
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
        big_trail: Path, env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    out.write_text("the previous events\n")
    term = on_terminal(["export", "--dry-run", "-o", str(out), "-w", str(big_trail)], env)
    assert term.pump(until="building events"), term.text()
    term.child.sendintr()
    assert term.finish() == 130, term.text()
    text = term.text()
    assert "requests in flight" not in text and "what was accepted" not in text, text
    assert "interrupting (Ctrl-C): stopping after the run being built" in text
    ended = [line for line in term.lines() if line.startswith("interrupted (Ctrl-C): ")]
    assert len(ended) == 1 and " of 4000 runs built (" in ended[0], text
    assert ended[0].endswith(f"nothing was written to {out}; nothing was sent")
    assert out.read_text() == "the previous events\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def wait_for_our_code(pid: int) -> None:
    """Wait until the interpreter runs our first line: it then catches SIGTERM (the
    interpreter's own start, before any code of ours, is not ours to make interruptible)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        caught = int(next(line for line in status.splitlines()
                          if line.startswith("SigCgt:")).split()[1], 16)
        if caught & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.002)
    raise AssertionError("the command never started")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("delay", [0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.8, 1.2, 1.7])
def test_ctrl_c_at_any_moment_is_exit_130_without_a_traceback(
        big_trail: Path, env: dict[str, str], tmp_path: Path, delay: float) -> None:
    out = tmp_path / "events.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "openlineage_export", "export", "--dry-run",
                             "-o", str(out), "-w", str(big_trail)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_our_code(proc.pid)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Aborted" not in err, err
    assert "interrupted" in err
    assert not out.exists() and not list(tmp_path.glob(".events.jsonl.*"))


def test_progress_json_is_one_object_a_line_for_a_host(big_trail: Path, env: dict[str, str],
                                                        tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    proc = subprocess.run([sys.executable, "-m", "openlineage_export", "export", "--dry-run",
                           "-o", str(out), "--json", "--progress", "json", "-w", str(big_trail)],
                          env=env, capture_output=True, text=True, timeout=300)
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
    assert last["eventsSent"] == summary["events"]["sent"]
    # The summary in the CLI's own words, for a host to show (the editor's output channel).
    assert lines[-2]["event"] == "summary"
    assert lines[-2]["text"].startswith(f"dry run: 4000 runs, {summary['events']['sent']} events")
    assert f"{BAD_LINES[big_trail]:,} bad entries on the audit trail" in lines[-2]["text"]
    assert lines[-1] == {"event": "finished", "exitCode": 1}
