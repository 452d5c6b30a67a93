"""Each checkout's services are its own: the service scripts of clones side by side on one
machine (a clone here is a copy of scripts/ in a folder of the test's, with a HOME and an
OLX_CACHE of the test's). Where the point is the scripts' bookkeeping, a stand-in plays the
server (tests/support/fake_java.py, fake_code_server.py): the real services are started as
ever by scripts/test.sh, and tests/e2e/test_checkouts_e2e.py starts a second Marquez beside
the real one.

What listens here does so in a network namespace the test made (unshare -n): the ports of a
slot are free or busy as the test says, whatever else runs on the machine."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from support.netns import can_make_netns, in_netns

FAKE_JAVA = ROOT / "tests" / "support" / "fake_java.py"
FAKE_CODE_SERVER = ROOT / "tests" / "support" / "fake_code_server.py"
DEFAULTS = {
    "MARQUEZ_PORT": 5000,
    "MARQUEZ_ADMIN_PORT": 5001,
    "MARQUEZ_WEB_PORT": 3000,
    "MARQUEZ_PG_PORT": 55432,
    "KAFKA_PORT": 59092,
    "KAFKA_CONTROLLER_PORT": 59093,
    "KAFKA_SASL_PORT": 59094,
    "DATA_RENTGEN_PORT": 58000,
    "DATA_RENTGEN_CONSUMER_PORT": 58001,
    "DATA_RENTGEN_UI_PORT": 53000,
    "FEAST_PORT": 56580,
}
"""Slot 0's ports (the docs' addresses); slot N's are each + 10 N."""


def clone(tmp_path: Path, name: str) -> Path:
    """A checkout of the service scripts, in a folder of its own."""
    root = tmp_path / name
    shutil.copytree(ROOT / "scripts", root / "scripts")
    return root


def machine(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment the clones' scripts run in: the test's HOME and shared cache, nothing of
    this session's (scripts/test.sh exports this checkout's ports and state dirs)."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
        "OLX_CACHE": str(tmp_path / "cache"),
        **extra,
    }


def script(where: Path, command: str, env: dict[str, str], **extra: str) -> dict[str, Any]:
    """One of in_netns's runs: ``scripts/COMMAND`` (words) of the checkout ``where``, in ``env``
    alone (``env -i``: the namespace's runner passes its own environment on)."""
    name, *args = command.split()
    settings = [f"{key}={value}" for key, value in {**env, **extra}.items()]
    return {"args": ["env", "-i", *settings, "bash", str(where / "scripts" / name), *args]}


def shell(snippet: str, env: dict[str, str]) -> dict[str, Any]:
    """One of in_netns's runs: a bash snippet, in ``env`` alone."""
    settings = [f"{key}={value}" for key, value in env.items()]
    return {"args": ["env", "-i", *settings, "bash", "-c", snippet]}


def said(run: dict[str, Any]) -> dict[str, str]:
    """What scripts/ports.sh printed: NAME=VALUE lines."""
    assert run["code"] == 0, run["stderr"]
    return dict(line.split("=", 1) for line in run["stdout"].splitlines())


def slot_ports(slot: int) -> dict[str, str]:
    return {name: str(port + 10 * slot) for name, port in DEFAULTS.items()}


@pytest.fixture
def netns() -> None:
    why = can_make_netns()
    if why is not None:
        pytest.skip(why)


def test_each_clone_takes_a_slot_of_its_own_keeps_it_and_lets_it_go_with_its_folder(
    tmp_path: Path, netns: None
) -> None:
    a, b, c = (clone(tmp_path, name) for name in ("a", "b", "c"))
    env = machine(tmp_path)
    done = in_netns(
        tmp_path,
        listen=["127.0.0.1:5010"],  # something else holds slot 1's Marquez port
        runs=[
            script(a, "ports.sh", env),
            script(b, "ports.sh", env),
            script(a, "ports.sh", env),
            script(b, "ports.sh", env, OLX_PORT_SLOT="7"),
            script(b, "ports.sh", env),
            shell(f"rm -rf {a}", env),
            script(c, "ports.sh", env),
        ],
    ).runs
    first_a, first_b, again_a, told_b, again_b, _, then_c = (said(run) for run in done)
    cache = tmp_path / "cache" / "checkouts"
    assert first_a == {
        "OLX_CACHE": str(tmp_path / "cache"),
        "OLX_CHECKOUT_STATE": first_a["OLX_CHECKOUT_STATE"],
        "OLX_PORT_SLOT": "0",
        **slot_ports(0),
        "MARQUEZ_HOME": first_a["OLX_CHECKOUT_STATE"] + "/marquez",
        "KAFKA_HOME": first_a["OLX_CHECKOUT_STATE"] + "/kafka",
        "DATA_RENTGEN_HOME": first_a["OLX_CHECKOUT_STATE"] + "/data-rentgen",
    }
    # Its state is its own, and says whose it is.
    state_a, state_b = Path(first_a["OLX_CHECKOUT_STATE"]), Path(first_b["OLX_CHECKOUT_STATE"])
    assert state_a.parent == state_b.parent == cache and state_a != state_b
    assert state_a.name.startswith("a-") and state_b.name.startswith("b-")
    assert (state_b / "checkout").read_text() == f"{b}\n"
    # Slot 0 is a's, slot 1 busy: b takes 2, says so, and its ports are all others than a's.
    assert first_b["OLX_PORT_SLOT"] == "2"
    assert {k: first_b[k] for k in DEFAULTS} == slot_ports(2)
    assert not {first_a[k] for k in DEFAULTS} & {first_b[k] for k in DEFAULTS}
    assert done[1]["stderr"].splitlines() == [
        "ports.sh: this checkout's services take port slot 2 (each default port + 20); lower "
        "slots are other checkouts' or busy (scripts/ports.sh --help)"
    ]
    # Kept: the same again, whatever runs meanwhile; OLX_PORT_SLOT moves it for one run only.
    assert again_a == first_a and again_b == first_b and done[2]["stderr"] == ""
    assert {k: told_b[k] for k in DEFAULTS} == slot_ports(7)
    # A checkout whose folder is gone holds nothing: c takes slot 0.
    assert then_c["OLX_PORT_SLOT"] == "0"


def test_slot_0_stays_with_the_services_of_the_scripts_from_before(
    tmp_path: Path, netns: None
) -> None:
    """Their state in OLX_CACHE, their servers maybe still up on the default ports: a clone of
    the new scripts takes another slot, so that neither stops or uses the other's."""
    (tmp_path / "cache" / "marquez" / "pgdata").mkdir(parents=True)
    a = clone(tmp_path, "a")
    (run,) = in_netns(tmp_path, listen=[], runs=[script(a, "ports.sh", machine(tmp_path))]).runs
    assert said(run)["OLX_PORT_SLOT"] == "1"
    assert said(run)["MARQUEZ_PORT"] == "5010"


def kafka_env(tmp_path: Path) -> dict[str, str]:
    """Kafka's jars (one, empty: the stand-in runs nothing of them) and java's stand-in."""
    jars = tmp_path / "jars"
    jars.mkdir(exist_ok=True)
    (jars / "kafka_2.13-4.1.1.jar").write_bytes(b"")
    return machine(tmp_path, JAVA=str(FAKE_JAVA), KAFKA_LIB_DIR=str(jars))


PIDS = """cd "$OLX_CACHE/checkouts"
for clone in a b; do
  # Its pid file's pid; once that is gone (stop removes it), the one it held before.
  pid=$(cat "$clone"-*/kafka/kafka.pid 2>/dev/null) && echo "$pid" >"$clone.seen"
  pid=$(cat "$clone.seen" 2>/dev/null) || { echo "$clone none"; continue; }
  if kill -0 "$pid" 2>/dev/null; then echo "$clone $pid up"; else echo "$clone $pid down"; fi
done"""
"""Prints, for each clone, its broker's pid (as its pid file said) and whether that process
runs."""

CLEAN_UP = """cd "$OLX_CACHE/checkouts"
for pid in $(cat ./*/kafka/kafka.pid 2>/dev/null); do kill "$pid" 2>/dev/null || true; done"""
"""Ends what the clones started, should a script have left it (a failure)."""


def brokers(run: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """PIDS's lines: clone -> (pid, up or down)."""
    lines = [line.split() for line in run["stdout"].splitlines()]
    return {line[0]: (line[1], line[-1]) for line in lines if line[0] in ("a", "b")}


def test_a_clones_kafka_start_and_stop_never_touch_another_clones_broker(
    tmp_path: Path, netns: None
) -> None:
    a, b = clone(tmp_path, "a"), clone(tmp_path, "b")
    env = kafka_env(tmp_path)
    lock = tmp_path / "e2e.lock"
    held = script(a, "kafka.sh start", env)  # as the team runs it: flock LOCK scripts/...
    held["args"] = ["flock", str(lock), *held["args"]]
    done = in_netns(
        tmp_path,
        listen=[],
        runs=[
            held,
            script(b, "kafka.sh start", env),
            shell(PIDS + f"\nflock -n {lock} echo free", env),
            script(b, "kafka.sh start", env),  # again: its own, already running
            script(b, "kafka.sh stop", env),
            shell(PIDS, env),
            # b told to take a's ports: refused, in one line naming the port and its holder.
            script(b, "kafka.sh start", env, OLX_PORT_SLOT="0"),
            script(b, "kafka.sh status", env),
            shell(PIDS, env),
            script(a, "kafka.sh stop", env),
            shell(PIDS, env),
            shell(CLEAN_UP, env),
        ],
    ).runs
    start_a, start_b, both, again_b, stop_b, after_b, refused, status_b, still, stop_a, end = done[
        :-1
    ]
    assert (start_a["code"], start_a["stdout"]) == (0, "127.0.0.1:59092\n"), start_a["stderr"]
    assert (start_b["code"], start_b["stdout"]) == (0, "127.0.0.1:59102\n"), start_b["stderr"]
    (pid_a, up_a), (pid_b, up_b) = brokers(both)["a"], brokers(both)["b"]
    assert up_a == up_b == "up" and pid_a != pid_b
    # The lock a's start ran under was let go with it: its broker holds none of its files.
    assert both["stdout"].splitlines()[-1] == "free"
    assert again_b["code"] == 0 and "Kafka already running at 127.0.0.1:59102" in again_b["stderr"]
    assert stop_b["code"] == 0, stop_b["stderr"]
    assert brokers(after_b) == {"a": (pid_a, "up"), "b": (pid_b, "down")}
    assert refused["code"] == 1 and refused["stdout"] == ""
    assert refused["stderr"].splitlines() == [
        "kafka.sh: error: port 127.0.0.1:59092 (KAFKA_PORT) is held by Kafka (pid "
        f"{pid_a}) of the checkout {a}: a script never stops or uses another checkout's "
        "process; stop it where it was started, or give this checkout other ports "
        "(OLX_PORT_SLOT or KAFKA_PORT; scripts/ports.sh --help)"
    ]
    assert status_b["stdout"] == "kafka: not running\n"
    assert brokers(still)["a"] == (pid_a, "up")
    assert stop_a["code"] == 0, stop_a["stderr"]
    assert brokers(end)["a"] == (pid_a, "down")


# ------------------------------------------------------------------ vscode.sh: packaging


FAKE_TOOL = """#!/usr/bin/env bash
# A stand-in for {name}: logs its arguments, does the least of what the scripts ask.
echo "{name} $*" >>"{calls}"
case "$*" in
  *"pip wheel"*) for a; do [ "$prev" = -w ] && touch "$a/demo-0.1-py3-none-any.whl"; prev=$a; done ;;
  ci*) mkdir -p node_modules/.bin && cp "{vsce}" node_modules/.bin/vsce ;;
  "run --silent compile") mkdir -p out && echo "// compiled" >out/extension.js ;;
  package*) for a; do [ "$prev" = -o ] && echo vsix >"$a"; prev=$a; done ;;
esac
"""


def fake_tool(folder: Path, name: str, calls: Path) -> Path:
    tool = folder / name
    tool.write_text(FAKE_TOOL.format(name=name, calls=calls, vsce=folder / "vsce"))
    tool.chmod(0o755)
    return tool


def extension_checkout(tmp_path: Path) -> Path:
    """A clone with what the .vsix is made of: the extension's sources and a Python package."""
    root = clone(tmp_path, "checkout")
    extension = root / "editor" / "vscode"
    (extension / "src").mkdir(parents=True)
    (extension / "package.json").write_text('{"name": "openlineage-export", "version": "0.1.0"}')
    (extension / "package-lock.json").write_text("{}")
    (extension / "src" / "extension.ts").write_text("export function activate() {}\n")
    (root / "src" / "demo").mkdir(parents=True)
    (root / "src" / "demo" / "__init__.py").write_text('"""Demo."""\n')
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1"\n')
    (root / "README.md").write_text("demo\n")
    return root


def test_vscode_sh_packages_only_when_the_extensions_sources_changed(tmp_path: Path) -> None:
    root = extension_checkout(tmp_path)
    tools, calls = tmp_path / "tools", tmp_path / "calls.log"
    tools.mkdir()
    fake_tool(tools, "vsce", calls)
    vscode_home = tmp_path / "cache" / "vscode"
    code_server = vscode_home / "code-server-4.100.3" / "node_modules" / ".bin" / "code-server"
    code_server.parent.mkdir(parents=True)
    code_server.write_text(f'#!/bin/sh\nexec python3 {FAKE_CODE_SERVER} "$@"\n')
    code_server.chmod(0o755)
    (vscode_home / "code-server-4.100.3" / ".installed").touch()
    env = machine(
        tmp_path,
        VSCODE_HOME=str(vscode_home),
        PYTHON=str(fake_tool(tools, "python", calls)),
        NPM=str(fake_tool(tools, "npm", calls)),
    )
    run_dir = tmp_path / "run"

    def vscode(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(root / "scripts" / "vscode.sh"), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def start_and_stop() -> list[str]:
        """Starts code-server with the extension and stops it; what was run to package."""
        before = calls.read_text().splitlines() if calls.exists() else []
        started = vscode("start", "--dir", str(run_dir))
        assert started.returncode == 0, started.stderr
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+\n", started.stdout), started.stdout
        assert vscode("stop", "--dir", str(run_dir)).returncode == 0
        return calls.read_text().splitlines()[len(before) :]

    # (npm ci runs once per package-lock.json: the first time only.)
    packaging = ["python", "python -m pip wheel", "npm run --silent compile", "vsce"]

    def packaged(ran: list[str]) -> bool:
        """Whether ``ran`` is a packaging: each of its steps, in order."""
        steps = iter(ran)
        return all(any(line.startswith(step) for line in steps) for step in packaging)

    assert packaged(start_and_stop())
    vsix = root / "editor" / "vscode" / "dist" / "openlineage-export-0.1.0.vsix"
    made = vsix.stat().st_mtime_ns
    # Nothing changed: started again without packaging, and `package` says where it is.
    assert start_and_stop() == []
    again = vscode("package")
    assert (again.returncode, again.stdout) == (0, f"{vsix}\n"), again.stderr
    assert "is up to date" in again.stderr and vsix.stat().st_mtime_ns == made
    # A source of the extension changed: packaged again; then one of the Python package.
    (root / "editor" / "vscode" / "src" / "extension.ts").write_text("// changed\n")
    assert packaged(start_and_stop())
    assert start_and_stop() == []
    (root / "src" / "demo" / "__init__.py").write_text('"""Changed."""\n')
    before = len(calls.read_text().splitlines())
    repackaged = vscode("package")
    assert repackaged.returncode == 0, repackaged.stderr
    assert packaged(calls.read_text().splitlines()[before:])
