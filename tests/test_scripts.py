"""The scripts a user runs first: each tells its usage with --help (and does nothing else), each
passes ShellCheck, the helpers the service scripts share do what they say, and
scripts/validate.py checks events against the official OpenLineage schemas."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fakeserver import refused_port
from helpers import DEMO, ROOT, SHARED, cli_command


@pytest.mark.parametrize(
    "script",
    [
        "demo.sh",
        "setup.sh",
        "test.sh",
        "browser.sh",
        "kafka.sh",
        "marquez.sh",
        "postgres.sh",
        "datahub.sh",
        "vscode.sh",
        "data-rentgen.sh",
        "feast.sh",
        "services.sh",
        "ports.sh",
    ],
)
def test_every_script_prints_its_usage_with_help(script: str, tmp_path: Path) -> None:
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / script), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert "Usage: scripts/" in result.stdout
    assert list(tmp_path.iterdir()) == []  # no file named --help, no state made
    if script in ("demo.sh", "setup.sh", "test.sh"):
        assert "Environment" in result.stdout and "PYTHON" in result.stdout


SHELL_SCRIPTS = sorted([*(ROOT / "scripts").glob("*.sh"), *(ROOT / "scripts" / "lib").glob("*.sh")])


def test_every_shell_script_passes_shellcheck() -> None:
    # .shellcheckrc: each script's libraries are found beside it, and followed.
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (scripts/test.sh installs Debian's)")
    result = subprocess.run(
        ["shellcheck", "--format=gcc", *(str(p.relative_to(ROOT)) for p in SHELL_SCRIPTS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def service_lib(snippet: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``snippet`` run by bash in a script named try.sh that sources scripts/lib/service.sh."""
    script = tmp_path / "try.sh"
    script.write_text(
        f"set -euo pipefail\n. {ROOT / 'scripts' / 'lib' / 'service.sh'}\n{snippet}\n"
    )
    return subprocess.run(
        ["bash", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ["PATH"]},
    )


def test_a_service_script_dies_saying_its_own_name(tmp_path: Path) -> None:
    done = service_lib('log "starting"; die "port 127.0.0.1:1 is in use"; echo never', tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "try.sh: starting",
        "try.sh: error: port 127.0.0.1:1 is in use",
    ]


def test_a_pid_file_names_our_process_only_while_it_runs_what_we_started(tmp_path: Path) -> None:
    done = service_lib(
        """
        (exec -a our-server sleep 30) & pid=$!
        echo "$pid" >server.pid
        until grep -q our-server "/proc/$pid/cmdline"; do sleep 0.05; done  # exec'd
        echo "ours: $(started_pid server.pid our-server)"
        echo "another program's: $(started_pid server.pid other-server)"
        echo "no file: $(started_pid nothing.pid our-server)"
        kill "$pid"; wait "$pid" || true
        echo "ended: $(started_pid server.pid our-server)"
        echo "$pid" | sed 's/^/ours is /' """,
        tmp_path,
    )
    said = done.stdout.splitlines()
    pid = said[-1].removeprefix("ours is ")
    assert said[:-1] == [f"ours: {pid}", "another program's: ", "no file: ", "ended: "], done.stderr


def test_a_server_started_after_close_fds_holds_none_of_its_callers_files(tmp_path: Path) -> None:
    """A lock the script (or its caller: flock LOCK scripts/...) holds is not held by the server
    it starts, which outlives it."""
    done = service_lib(
        """
        exec 7>held.lock
        flock 7
        (close_fds && exec sleep 30) </dev/null >/dev/null 2>&1 & pid=$!
        until grep -q sleep "/proc/$pid/cmdline"; do sleep 0.05; done  # exec'd
        ls "/proc/$pid/fd" | sort -n | paste -sd' '
        exec 7>&-
        flock -n held.lock echo "let go"
        kill "$pid" """,
        tmp_path,
    )
    assert done.stdout.splitlines() == ["0 1 2", "let go"], done.stderr


def test_stop_pid_kills_what_ignores_sigterm_once_its_time_is_up(tmp_path: Path) -> None:
    done = service_lib(
        """
        bash -c 'trap "" TERM; while :; do sleep 0.1; done' & pid=$!
        sleep 0.3
        stop_pid "$pid" 1
        rc=0; wait "$pid" 2>/dev/null || rc=$?; echo "ended by signal $((rc - 128))"
        sleep 30 & pid=$!
        stop_pid "$pid" 10
        rc=0; wait "$pid" 2>/dev/null || rc=$?; echo "ended by signal $((rc - 128))" """,
        tmp_path,
    )
    assert done.stdout.splitlines() == ["ended by signal 9", "ended by signal 15"], done.stderr


def test_wait_healthy_tells_healthy_ended_too_late_and_hopeless_apart(tmp_path: Path) -> None:
    done = service_lib(
        """
        tries=0
        second_try() { tries=$((tries + 1)); ((tries >= 2)); }
        never() { return 1; }
        hopeless() { return 3; }
        sleep 30 & running=$!
        true & ended=$!; wait "$ended"
        for case in "$running 10 second_try" "$ended 10 never" "$running 0.5 never" \\
                    "$running 10 hopeless"; do
          read -r pid seconds check <<<"$case"
          rc=0; wait_healthy "$pid" "${seconds%.*}" 0.1 "$check" || rc=$?
          echo "$check: $rc"
        done
        kill "$running" """,
        tmp_path,
    )
    assert done.stdout.splitlines() == ["second_try: 0", "never: 1", "never: 2", "hopeless: 3"], (
        done.stderr
    )


def test_a_build_is_pruned_only_when_nothing_runs_from_it_and_it_was_not_used_for_a_week(
    tmp_path: Path,
) -> None:
    """Builds are shared by every checkout: one another checkout's server runs from, or one made
    or used this week (it may be again, by a checkout of another branch), is kept."""
    done = service_lib(
        """
        mkdir -p builds/new builds/running builds/recent builds/used builds/old
        for build in new running recent used old; do touch "builds/$build/.complete"; done
        touch -d '8 days ago' builds/running/.complete builds/used/.complete builds/old/.complete
        touch builds/used/.used
        (exec -a "server $PWD/builds/running/dist 3000" sleep 30) & pid=$!
        until grep -q builds/running "/proc/$pid/cmdline"; do sleep 0.05; done  # exec'd
        prune_builds "$PWD/builds/new" "$PWD"/builds/*
        ls builds
        kill "$pid" """,
        tmp_path,
    )
    assert done.stdout.split() == ["new", "recent", "running", "used"], done.stderr


def test_validate_py_checks_events_against_the_schemas(tmp_path: Path) -> None:
    spec = SHARED / "openlineage-spec"
    if not spec.is_dir():
        pytest.skip(f"{spec} is absent: a local copy of the schemas lives in ../shared")
    good = tmp_path / "events.jsonl"
    subprocess.run(
        cli_command(
            "export",
            "--dry-run",
            "-q",
            "-w",
            str(DEMO),
            "-o",
            str(good),
        ),
        check=True,
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        good.read_text().splitlines()[0].replace('"eventType":"START"', '"eventType":"BEGIN"')
        + "\n"
    )
    command = [sys.executable, str(ROOT / "scripts" / "validate.py"), "--spec", str(spec)]
    ok = subprocess.run([*command, str(good)], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.splitlines()[-1] == "236 valid, 0 invalid", ok.stdout
    wrong = subprocess.run([*command, str(bad)], capture_output=True, text=True)
    # The one line, by file, line and where in the event, with jsonschema's reason (its words).
    problem, total = wrong.stdout.splitlines()
    assert wrong.returncode == 1 and total == "0 valid, 1 invalid", wrong.stdout
    assert problem.startswith(f"{bad}:1: event: ") and problem[len(f"{bad}:1: event: ") :].strip()


def test_demo_sh_says_what_it_does_on_first_run(tmp_path: Path) -> None:
    # A checkout with no .venv yet; the Python that would make it fails at once, so the test
    # sees what a newcomer sees before the (long) setup, without installing anything.
    (tmp_path / "scripts").mkdir()
    for script in ("demo.sh", "setup.sh"):
        (tmp_path / "scripts" / script).write_bytes((ROOT / "scripts" / script).read_bytes())
    result = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "demo.sh")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHON": "false"},
    )
    assert result.returncode != 0
    assert result.stderr.splitlines()[0].startswith(
        "demo.sh: first run: creating .venv and installing openlineage-export"
    ), result.stderr


def validate_offline(
    tmp_path: Path,
    *args: str,
    script: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """scripts/validate.py with no way out: any request goes to a loopback port that refuses
    connections."""
    with refused_port() as port:
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path / "home"),
            "https_proxy": f"http://127.0.0.1:{port}",
            "http_proxy": f"http://127.0.0.1:{port}",
        }
        return subprocess.run(
            [sys.executable, str(script or ROOT / "scripts" / "validate.py"), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )


def test_validate_py_offline_uses_the_shared_spec_copy() -> None:
    # No --spec: the copy in ../shared is found; nothing goes to the network (which fails).
    done = validate_offline(
        Path("/nonexistent"), str(ROOT / "tests" / "data" / "demo-events.jsonl")
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["236 valid, 0 invalid"], done.stdout


def test_validate_py_never_calls_an_event_invalid_for_a_schema_it_cannot_load(
    tmp_path: Path,
) -> None:
    # A copy of the script with no spec copy beside it: it would fetch, and the network fails.
    script = tmp_path / "checkout" / "scripts" / "validate.py"
    script.parent.mkdir(parents=True)
    script.write_bytes((ROOT / "scripts" / "validate.py").read_bytes())
    events = str(ROOT / "tests" / "data" / "demo-events.jsonl")
    for args in ([events], ["--spec", str(tmp_path), events]):
        done = validate_offline(tmp_path, *args, script=script)
        assert done.returncode == 2, done.stdout + done.stderr
        said = done.stdout.splitlines()
        assert len(said) == 2 and said[0].startswith("cannot load the schema "), done.stdout
        assert "point --spec DIR (or OPENLINEAGE_SPEC_DIR) at a copy" in said[0]
        assert said[1].startswith("0 valid, 0 invalid, 236 not checked whole"), done.stdout


def test_test_sh_closes_on_every_count_skips_included(tmp_path: Path) -> None:
    """scripts/junit_counts.py, test.sh's closing line: passed, failed (errors in a fixture
    too) and skipped, each written even when it is zero, read from pytest's own JUnit file; a
    test that failed as it was marked to (xfail) is no skip, and is said on a line before."""
    (tmp_path / "test_sample.py").write_text(
        "import pytest\n"
        "def test_passes(): pass\n"
        "def test_also_passes(): pass\n"
        "def test_skips(): pytest.skip('no proof')\n"
        "def test_fails(): assert False\n"
        "@pytest.fixture\n"
        "def broken(): raise RuntimeError\n"
        "def test_errors(broken): pass\n"
        "@pytest.mark.xfail(strict=True, reason='later')\n"
        "def test_fails_as_expected(): assert False\n"
    )
    junit = tmp_path / "junit.xml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "test_sample.py",
            f"--junitxml={junit}",
        ],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        check=False,
    )
    counts = [sys.executable, str(ROOT / "scripts" / "junit_counts.py")]
    done = subprocess.run([*counts, str(junit)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (
        0,
        "tests: 1 failed as expected (xfail)\ntests: 2 passed, 2 failed, 1 skipped\n",
    )
    missing = subprocess.run(
        [*counts, str(tmp_path / "none.xml")], capture_output=True, text=True, timeout=60
    )
    assert (missing.returncode, missing.stdout) == (1, "")
