"""A second checkout's Marquez beside this one's, on one machine: its ``scripts/marquez.sh start
--ui``, ``status`` and ``stop`` never stop, restart or use this checkout's Marquez or web UI (the
real ones scripts/test.sh started), and its web UI, served by its own server, talks to its own
API.

The second checkout is a copy of scripts/ in a folder of the test's. Its state goes beside this
checkout's (OLX_CACHE/checkouts), its ports are its own slot's, the web UI's build is the one
this checkout serves (builds are shared: not built again). Its PostgreSQL cluster and web UI
server are real; its Marquez API is a stand-in (tests/support/fake_java.py): what is under test
is the scripts' bookkeeping, and the stand-in's answer tells the two APIs apart.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import ROOT, SHARED, USERS_HOME
from support.chromium import require

pytestmark = pytest.mark.e2e

FAKE_JAVA = ROOT / "tests" / "support" / "fake_java.py"


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def pid_in(path: Path) -> int:
    return int(path.read_text().split()[0])


class Other:
    """The second checkout: its scripts, run in an environment of its own."""

    def __init__(self, root: Path, jars: Path) -> None:
        self.root = root
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(USERS_HOME),
            "LANG": "C.UTF-8",
            "OLX_CACHE": os.environ["OLX_CACHE"],
            "JAVA": str(FAKE_JAVA),
            "MARQUEZ_LIB_DIR": str(jars),
            "MARQUEZ_SOURCE_DIR": str(SHARED / "third_party" / "marquez-0.51.1"),
        }

    def marquez(self, *args: str, lock: Path | None = None) -> subprocess.CompletedProcess[str]:
        """``scripts/marquez.sh ARGS``, under ``flock LOCK`` when given (as the team runs it)."""
        held = ["flock", str(lock)] if lock else []
        return subprocess.run(
            [*held, "bash", str(self.root / "scripts" / "marquez.sh"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    def said(self, name: str) -> str:
        """A value of the second checkout's scripts/ports.sh."""
        done = subprocess.run(
            ["bash", str(self.root / "scripts" / "ports.sh")],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return dict(line.split("=", 1) for line in done.stdout.splitlines())[name]


@pytest.fixture
def other(marquez: object, tmp_path: Path) -> Iterator[Other]:
    """A second checkout, its services stopped and its state deleted after the test (its
    cluster's data too, where PostgreSQL keeps it)."""
    if not (SHARED / "third_party" / "marquez-0.51.1" / "web" / "package.json").exists():
        require("OLX_REQUIRE_MARQUEZ_UI", "no source of Marquez's web UI in ../shared")
    root = tmp_path / "other"
    shutil.copytree(ROOT / "scripts", root / "scripts")
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "marquez-api-0.51.1.jar").write_bytes(b"")  # the stand-in runs nothing of it
    checkout = Other(root, jars)
    state = Path(checkout.said("OLX_CHECKOUT_STATE"))
    try:
        yield checkout
    finally:
        checkout.marquez("stop")
        pgdata = state / "marquez" / "pgdata"
        if pgdata.is_symlink():
            shutil.rmtree(pgdata.resolve(), ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


def test_a_second_checkouts_marquez_and_web_ui_leave_this_ones_alone(
    other: Other, tmp_path: Path
) -> None:
    home = Path(os.environ["MARQUEZ_HOME"])
    ours_api, ours_web = os.environ["MARQUEZ_URL"], os.environ["MARQUEZ_WEB_URL"]
    with httpx.Client(timeout=60) as http:
        if http.get(f"{ours_web}/").status_code != 200:
            require(
                "OLX_REQUIRE_MARQUEZ_UI", f"this checkout's web UI does not answer at {ours_web}"
            )
    marquez_pid, web_pid = pid_in(home / "marquez.pid"), pid_in(home / "web.pid")
    serving = (Path(f"/proc/{web_pid}/cmdline").read_bytes().split(b"\0"))[2].decode()

    lock = tmp_path / "e2e.lock"
    started = other.marquez("start", "--ui", lock=lock)
    assert started.returncode == 0, started.stderr
    # Its servers (PostgreSQL, Marquez, the web UI) hold none of its files: the lock it ran
    # under is free again.
    assert subprocess.run(["flock", "-n", str(lock), "true"]).returncode == 0
    its_api, its_web = started.stdout.split()
    assert {its_api, its_web}.isdisjoint({ours_api, ours_web})
    assert its_api == f"http://127.0.0.1:{other.said('MARQUEZ_PORT')}"
    # The build this checkout serves, not built again; no word of another checkout's server.
    assert "building" not in started.stderr and "restarting" not in started.stderr
    its_state = Path(other.said("OLX_CHECKOUT_STATE")) / "marquez"
    its_web_pid = pid_in(its_state / "web.pid")
    assert (Path(f"/proc/{its_web_pid}/cmdline").read_bytes().split(b"\0"))[2].decode() == serving

    with httpx.Client(timeout=60) as http:
        # Each web UI in front of its own API: the stand-in says it is one.
        assert http.get(f"{its_web}/").status_code == 200
        assert http.get(f"{its_web}/api/v1/namespaces").json().get("stand-in") is True
        assert "stand-in" not in http.get(f"{ours_web}/api/v1/namespaces").json()
        assert http.get(f"{ours_api}/api/v1/namespaces").status_code == 200
    # This checkout's processes are the very ones that ran before.
    assert pid_in(home / "marquez.pid") == marquez_pid and alive(marquez_pid)
    assert pid_in(home / "web.pid") == web_pid and alive(web_pid)
    status = other.marquez("status")
    assert (
        status.stdout.splitlines()[0]
        == f"marquez: running at {its_api} (pid {pid_in(its_state / 'marquez.pid')})"
    )

    stopped = other.marquez("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not alive(its_web_pid)
    assert alive(marquez_pid) and alive(web_pid)
    with httpx.Client(timeout=60) as http:
        assert http.get(f"{ours_web}/api/v1/namespaces").status_code == 200
