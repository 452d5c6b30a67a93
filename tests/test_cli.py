"""The command line, run as users run it: ``python -m openlineage_export ...`` in a subprocess.

Every run gets a clean environment (no OPENLINEAGE_* variable of the developer's, secrets in a
private file under tmp, the ledger under tmp), and no run may print a traceback.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from fakeserver import (
    Answer,
    FakeServer,
    fake_server_fixture,  # noqa: F401 - registers fake_server
    refused_port_fixture,  # noqa: F401 - registers refused_port
)
from helpers import WorkspaceMaker, cli_command, cli_env, run_record

from openlineage_export.cli import main as cli_main

SECRET = "sk-cli-7d1e9a0c44b2"


@dataclass(frozen=True)
class Result:
    args: tuple[str, ...]
    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return self.out.decode()

    def __str__(self) -> str:
        return (
            f"openlineage-export {' '.join(self.args)} -> {self.code}\n"
            f"stdout: {self.out[:2000]!r}\nstderr: {self.err[:2000]}"
        )


Run = Callable[..., Result]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of every CLI run: nothing of the developer's OpenLineage setup."""
    return cli_env(tmp_path, COLUMNS="100")


@pytest.fixture
def cli(env: dict[str, str], tmp_path: Path) -> Run:
    """Run the CLI; ``input`` goes to stdin (a pipe), ``extra_env`` adds variables."""

    def run(
        *args: str,
        input: str | None = None,
        extra_env: dict[str, str] | None = None,
        timeout: float = 60,
        cwd: Path | None = None,
    ) -> Result:
        proc = subprocess.run(
            cli_command(*args),
            input=(input or "").encode(),
            capture_output=True,
            timeout=timeout,
            env={**env, **(extra_env or {})},
            cwd=cwd or tmp_path,
        )
        result = Result(tuple(args), proc.returncode, proc.stdout, proc.stderr.decode())
        assert "Traceback" not in result.err, str(result)
        # (stdout may be events whose errorMessage quotes a stack trace, inside JSON strings)
        assert not any(line.startswith(b"Traceback") for line in result.out.splitlines())
        return result

    return run


def run_all(cli: Run, calls: Sequence[tuple[str, ...]]) -> list[Result]:
    """Several independent CLI runs at once (each is a fresh interpreter)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda args: cli(*args), calls))


def set_settings(root: Path, values: dict[str, Any]) -> None:
    file = root / ".workspace" / "settings.json"
    current = json.loads(file.read_text()) if file.exists() else {}
    file.write_text(json.dumps({**current, **values}))


def error_lines(result: Result) -> list[str]:
    return [line for line in result.err.splitlines() if line.strip()]


# -- help -----------------------------------------------------------------------------------


def commands(
    group: click.Command = cli_main, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, group
    if isinstance(group, click.Group):
        for name, sub in sorted(group.commands.items()):
            yield from commands(sub, (*path, name))


def test_every_command_has_help_text(cli: Run) -> None:
    found = list(commands())
    names = {" ".join(p) for p, _ in found}
    assert {"export", "settings set", "secrets set", "secrets list"} <= names
    results = run_all(cli, [(*path, "--help") for path, _ in found])
    missing = []
    for (path, command), result in zip(found, results, strict=True):
        where = " ".join(path) or "(main)"
        assert result.code == 0, str(result)
        assert result.text.startswith("Usage: "), str(result)
        first = (command.help or "").strip().splitlines()[0] if command.help else ""
        if not first or first not in " ".join(result.text.split()):
            missing.append(f"{where}: no help text")
        if "\nExamples:\n  openlineage-export " not in result.text:
            missing.append(f"{where}: no examples")
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden and not param.help:
                missing.append(f"{where}: option {param.opts[0]} has no help text")
        if isinstance(command, click.Group):
            # The group's listing gives each subcommand a one-line summary.
            listing = result.text.split("Commands:", 1)[1].split("Examples:")[0]
            for name, sub in command.commands.items():
                line = next((row for row in listing.splitlines() if row.split()[:1] == [name]), "")
                if len(line.split()) < 2:
                    missing.append(f"{where}: '{name}' listed without a summary")
                # Never cut short: the whole summary, wrapped.
                if " ".join(sub.get_short_help_str(1000).split()) not in " ".join(listing.split()):
                    missing.append(f"{where}: '{name}' summary cut short")
            if "..." in listing:
                missing.append(f"{where}: a summary ends in '...'")
    assert not missing, "\n".join(missing)


# -- dry run ----------------------------------------------------------------------------------


def test_dry_run_of_the_demo_is_byte_identical_and_only_json_lines(cli: Run, demo: Path) -> None:
    first, second = run_all(cli, [("export", "--dry-run", "-w", str(demo))] * 2)
    assert first.code == 0 and second.code == 0, str(first)
    assert first.out == second.out
    lines = first.out.split(b"\n")
    assert lines[-1] == b""  # ends with a newline
    events = [json.loads(line) for line in lines[:-1]]
    assert len(events) == 236 and all(isinstance(e, dict) and e["eventType"] for e in events)
    assert "churn-model" in first.err and "never run" in first.err
    assert "31 runs" in first.err and "236 events" in first.err


def test_dry_run_to_a_file_with_json_summary(cli: Run, demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    result = cli("export", "--dry-run", "-o", str(out), "--json", "-w", str(demo))
    summary = json.loads(result.out)
    assert summary["exitCode"] == result.code == 0
    assert summary["events"] == {"built": 236, "sent": 0}, "a dry run sends nothing"
    assert summary["runs"]["built"] == summary["runs"]["total"] and summary["runs"]["sent"] == 0
    assert summary["neverRun"] == ["churn-model"]
    assert len(out.read_bytes().splitlines()) == 236


def test_bad_lines_are_named_and_the_good_runs_still_exported(
    cli: Run, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    no_pipeline = run_record("bad-2")
    del no_pipeline["pipeline"]
    ws.segment(
        "000001.jsonl",
        [run_record("good-1"), "this is not json", no_pipeline, run_record("good-3")],
    )
    result = cli("export", "--dry-run", "-w", str(ws.root))
    assert result.code == 1, str(result)
    bad = [line for line in result.err.splitlines() if line.startswith("bad entry: ")]
    assert len(bad) == 2, result.err
    assert bad[0].startswith("bad entry: .workspace/lineage/audit/000001.jsonl:2: ")
    assert bad[1].startswith("bad entry: .workspace/lineage/audit/000001.jsonl:3: ")
    events = [json.loads(line) for line in result.out.splitlines()]
    traces = {
        t["value"]
        for e in events
        for t in e["run"]["facets"].get("tags", {}).get("tags", [])
        if t["key"] == "traceId"
    }
    assert traces == {"good-1", "good-3"} and len(events) == 8
    # The same with a JSON summary: its exit code is the process's.
    out = tmp_path / "events.jsonl"
    result = cli("export", "--dry-run", "--json", "-o", str(out), "-w", str(ws.root))
    summary = json.loads(result.out)
    assert summary["exitCode"] == result.code == 1
    assert summary["badEntries"]["count"] == 2


# -- errors: one line, the right exit code ----------------------------------------------------


def test_workspace_and_configuration_errors(
    cli: Run, make_workspace: Callable[..., WorkspaceMaker], tmp_path: Path
) -> None:
    not_a_workspace = tmp_path / "plain-folder"
    not_a_workspace.mkdir()
    bad_settings = make_workspace("bad-settings")
    (bad_settings.root / ".workspace" / "settings.json").write_text('{"openlineage.url": ')
    no_graph = make_workspace("no-graph")
    (no_graph.root / ".workspace" / "lineage" / "graph.json").unlink()
    secret_ref = make_workspace("secret-ref")
    secret_ref.segment("000001.jsonl", [run_record("r1")])
    secret_ref.settings(
        {"openlineage.url": "http://127.0.0.1:9", "openlineage.apiKey.secretRef": "prod-marquez"}
    )
    cases = [
        (("export", "--dry-run", "-w", str(not_a_workspace)), 3, "not a workspace"),
        (("export", "-w", str(tmp_path / "missing")), 3, "missing"),
        (("export", "-w", str(bad_settings.root)), 2, "settings.json is not valid JSON"),
        (("export", "--dry-run", "-w", str(no_graph.root)), 3, "graph.json"),
        (("export", "--json", "-w", str(secret_ref.root)), 2, "'prod-marquez'"),
    ]
    results = run_all(cli, [args for args, _, _ in cases])
    for (_args, code, needle), result in zip(cases, results, strict=True):
        assert result.code == code, str(result)
        lines = error_lines(result)
        assert len(lines) == 1 and lines[0].startswith("error: "), str(result)
        assert needle in lines[0], str(result)
        assert result.out == b"", str(result)


def test_usage_errors_exit_2(cli: Run, demo: Path) -> None:
    results = run_all(
        cli, [("export", "--bogus", "-w", str(demo)), ("export", "-o", "x.jsonl", "-w", str(demo))]
    )
    for result in results:
        assert result.code == 2, str(result)
        assert "error: " in result.err and result.out == b"", str(result)


def test_server_down_exits_4_with_one_sentence(cli: Run, demo: Path, refused_port: int) -> None:
    port = refused_port
    set_settings(
        demo, {"openlineage.url": f"http://127.0.0.1:{port}", "openlineage.retry.maxTime": 1}
    )
    # One after the other: a second export of one workspace to one server waits for none.
    text = cli("export", "-w", str(demo))
    as_json = cli("export", "--json", "-w", str(demo))
    assert text.code == 4, str(text)
    assert text.out == b""
    stopped = [line for line in error_lines(text) if line.startswith("stopped: ")]
    assert len(stopped) == 1 and str(port) in stopped[0], str(text)
    said, *summary = [line for line in error_lines(text) if not line.startswith("retrying: ")]
    assert said.startswith(f"warning: nothing listens at 127.0.0.1:{port}: "), "at once"
    assert summary[0] == stopped[0], "the summary opens with what happened"
    assert "failed:" not in text.err and "exported to" not in text.err, str(text)
    assert (
        "hint: is the server running, and is openlineage.url (from settings.json) the address?"
    ) in text.err
    summary = json.loads(as_json.out)
    assert summary["exitCode"] == as_json.code == 4 and summary["outage"]


def test_export_to_a_server_json_summary(
    cli: Run, fake_server: FakeServer, ws: WorkspaceMaker
) -> None:
    ws.segment("000001.jsonl", [run_record("r1"), run_record("r2")])
    ws.settings({"openlineage.url": fake_server.url})
    fake_server.script(
        lambda req: (
            Answer(400, body="no such facet")
            if '"value":"r2"' in req.body.decode()
            else Answer(201)
        )
    )
    result = cli(
        "export",
        "--json",
        "-w",
        str(ws.root),
        "--url",
        fake_server.url,
        extra_env={"OPENLINEAGE_API_KEY": SECRET},
    )
    summary = json.loads(result.out)
    assert summary["exitCode"] == result.code == 1, str(result)
    assert summary["runs"] == {"total": 2, "sent": 1, "unchanged": 0, "held": 0, "failed": 1}
    assert "no such facet" in summary["failedRuns"][0]["reason"]
    assert {r.headers["authorization"] for r in fake_server.requests} == {f"Bearer {SECRET}"}
    assert SECRET not in result.text and SECRET not in result.err


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_exits_130(
    env: dict[str, str], fake_server: FakeServer, demo: Path, presses: int
) -> None:
    release = threading.Event()  # requests after the third wait until the test is done
    fake_server.script(
        lambda req: Answer(201, hold=None if len(fake_server.requests) <= 3 else release)
    )
    set_settings(demo, {"openlineage.url": fake_server.url, "openlineage.concurrency": 2})
    proc = subprocess.Popen(
        cli_command("export", "-w", str(demo)),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert fake_server.wait_for(4), "the export never reached the server"
        proc.send_signal(signal.SIGINT)
        assert proc.stderr is not None
        said = [""]
        while not said[-1].startswith("interrupting (Ctrl-C): "):  # the first one was handled
            said.append(proc.stderr.readline().decode())
            assert said[-1], f"the export ended without saying what Ctrl-C does: {said}"
        if presses == 2:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    text = "".join(said) + err.decode()
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "interrupted" in text and out == b""
    assert len(fake_server.requests) < 236


# -- settings ---------------------------------------------------------------------------------


def test_settings_set_get_unset_round_trip_keeps_other_keys(cli: Run, ws: WorkspaceMaker) -> None:
    file = ws.root / ".workspace" / "settings.json"
    file.write_text(
        '{\n  "editor.fontSize": 13,\n  "git.autofetch": true,\n'
        '  "python.paths": ["a", "b"],\n  "x.ratio": 1.50\n}\n'
    )
    others = {
        "editor.fontSize": 13,
        "git.autofetch": True,
        "python.paths": ["a", "b"],
        "x.ratio": 1.5,
    }
    w = ("-w", str(ws.root))

    result = cli("settings", "set", "openlineage.url", "http://localhost:5000/proxy", *w)
    assert result.code == 0, str(result)
    stored = json.loads(file.read_text())
    assert stored == {**others, "openlineage.url": "http://localhost:5000/proxy"}
    assert '"x.ratio": 1.50' in file.read_text()  # other keys keep their very text

    got, refused = run_all(
        cli,
        [
            ("settings", "get", "openlineage.url", *w),
            # Keys of other extensions are not ours to remove.
            ("settings", "unset", "editor.fontSize", *w),
        ],
    )
    assert (got.code, got.text) == (0, "http://localhost:5000/proxy\n")
    assert refused.code == 2, str(refused)

    assert cli("settings", "unset", "openlineage.url", *w).code == 0
    assert json.loads(file.read_text()) == others
    assert '"x.ratio": 1.50' in file.read_text()
    gone = cli("settings", "get", "openlineage.url", *w)
    assert (gone.code, gone.text) == (1, "")


def test_settings_refuse_a_key_that_holds_a_secret(cli: Run, ws: WorkspaceMaker) -> None:
    ws.settings({"editor.fontSize": 13})
    before = (ws.root / ".workspace" / "settings.json").read_bytes()
    results = run_all(
        cli,
        [
            ("settings", "set", "openlineage.apiKey", SECRET, "-w", str(ws.root)),
            ("settings", "set", "openlineage.token", SECRET, "-w", str(ws.root)),
        ],
    )
    for result in results:
        assert result.code == 2, str(result)
        assert SECRET not in result.text and SECRET not in result.err, str(result)
        assert "secrets set" in result.err
    assert (ws.root / ".workspace" / "settings.json").read_bytes() == before


def test_settings_unknown_key_exits_2_with_a_suggestion(cli: Run, ws: WorkspaceMaker) -> None:
    result = cli("settings", "set", "openlineage.urll", "http://x", "-w", str(ws.root))
    assert result.code == 2 and error_lines(result)[0].startswith("error: "), str(result)
    assert "did you mean 'openlineage.url'" in result.err


# -- secrets ----------------------------------------------------------------------------------


def test_secrets_set_list_use_delete(
    cli: Run, fake_server: FakeServer, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    stored = cli("secrets", "set", "prod-marquez", "--for", fake_server.url, input=SECRET + "\n")
    assert stored.code == 0, str(stored)
    assert SECRET not in stored.text and SECRET not in stored.err
    file = tmp_path / "config" / "secrets.json"
    assert json.loads(file.read_text()) == {"prod-marquez": SECRET}
    assert file.stat().st_mode & 0o077 == 0

    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.url": fake_server.url})
    listed, ref = run_all(
        cli,
        [
            ("secrets", "list"),
            ("settings", "set", "openlineage.apiKey.secretRef", "prod-marquez", "-w", str(ws.root)),
        ],
    )
    assert listed.code == 0 and listed.text.split() == ["prod-marquez"]
    assert SECRET not in listed.text and SECRET not in listed.err
    assert ref.code == 0 and SECRET not in ref.text, str(ref)

    # The stored key is what the export sends.
    sent = cli("export", "-q", "-w", str(ws.root))
    assert sent.code == 0 and sent.err == "" and sent.out == b"", str(sent)
    assert len(fake_server.requests) == 4
    assert {r.headers["authorization"] for r in fake_server.requests} == {f"Bearer {SECRET}"}

    deleted = cli("secrets", "delete", "prod-marquez")
    assert deleted.code == 0, str(deleted)
    listed, again = run_all(cli, [("secrets", "list"), ("secrets", "delete", "prod-marquez")])
    assert listed.code == 0 and listed.text.split() == []
    assert again.code == 1 and "prod-marquez" in again.err


# -- issue 14: conventions --------------------------------------------------------------------


def test_help_lists_environment_exit_codes_keys_and_completes_keys(cli: Run) -> None:
    from openlineage_export.deliver.registry import CATALOGUE

    export, settings_set, version, short_version = run_all(
        cli, [("export", "--help"), ("settings", "set", "--help"), ("--version",), ("-V",)]
    )
    envs = [row.env for row in CATALOGUE if row.env] + [
        "OPENLINEAGE_API_KEY",
        "OPENLINEAGE_EXPORT_STATE_DIR",
    ]
    assert all(f"\n  {name} " in export.text for name in envs), export.text
    codes = export.text.split("Exit codes:", 1)[1]
    assert all(f"\n  {code} " in codes for code in (0, 1, 2, 3, 4, 130, 143)), export.text
    assert all(f"\n  {row.key} " in settings_set.text for row in CATALOGUE), settings_set.text
    assert "openlineage.transport" in settings_set.text.split("Keys:")[1]
    assert version.text == short_version.text == "openlineage-export, version 0.1.0\n"
    completed = cli(
        extra_env={
            "_OPENLINEAGE_EXPORT_COMPLETE": "bash_complete",
            "COMP_WORDS": "openlineage-export settings set openlineage.tr",
            "COMP_CWORD": "3",
        }
    )
    assert "openlineage.transport" in completed.text and "openlineage.url" not in completed.text


def test_the_workspace_is_found_walking_up_and_w_goes_before_the_subcommand(
    cli: Run, demo: Path, tmp_path: Path
) -> None:
    inside = demo / ".workspace" / "lineage"
    plain = tmp_path / "plain"
    plain.mkdir()
    from_inside = cli("export", "--dry-run", "-o", "-", cwd=inside)
    before = cli("-w", str(demo), "export", "--dry-run")
    nowhere, set_nowhere = run_all(
        cli, [("export", "--dry-run"), ("settings", "set", "openlineage.url", "http://x")]
    )
    assert from_inside.code == before.code == 0, str(from_inside)
    assert len(from_inside.out.splitlines()) == len(before.out.splitlines()) == 236
    assert not (inside / "-").exists()
    for result in (nowhere, set_nowhere):  # run in tmp_path, which is no workspace
        assert result.code == 3, str(result)
        assert error_lines(result) == [
            f"error: {tmp_path} is not in a workspace: neither it nor a folder above it has "
            "a .workspace/ folder (name the workspace with -w DIR)"
        ], str(result)
    nowhere = cli("settings", "set", "openlineage.url", "http://x", cwd=plain)
    assert nowhere.code == 3 and len(error_lines(nowhere)) == 1, str(nowhere)
    assert str(plain) in nowhere.err and "-w DIR" in nowhere.err
    assert not (plain / ".workspace").exists()


def test_output_dash_is_stdout_and_unwritable_paths_are_usage_errors(
    cli: Run, demo: Path, tmp_path: Path
) -> None:
    dash, out_missing, report_missing, reported = run_all(
        cli,
        [
            ("export", "--dry-run", "-o", "-", "-w", str(demo)),
            ("export", "--dry-run", "-o", "/nonexistent/e.jsonl", "-w", str(demo)),
            (
                "export",
                "--dry-run",
                "-o",
                str(tmp_path / "e.jsonl"),
                "--report",
                "/nonexistent/r.html",
                "-w",
                str(demo),
            ),
            (
                "export",
                "--dry-run",
                "-o",
                str(tmp_path / "r.jsonl"),
                "--report",
                str(tmp_path / "r.html"),
                "-w",
                str(demo),
            ),
        ],
    )
    assert dash.code == 0 and len(dash.out.splitlines()) == 236
    assert not (tmp_path / "-").exists()
    for result in (out_missing, report_missing):
        assert result.code == 2, str(result)
        assert len(error_lines(result)) == 1 and "/nonexistent" in result.err
    assert reported.code == 0, str(reported)
    assert f"report written to {tmp_path / 'r.html'}" in reported.err
    assert (tmp_path / "r.html").is_file()


def test_bad_entries_are_capped_and_counted(cli: Run, ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record("good")] + ["not json"] * 60)
    quiet, loud = run_all(
        cli,
        [
            ("export", "--dry-run", "-q", "-o", "-", "-w", str(ws.root)),
            ("export", "--dry-run", "-o", "-", "-w", str(ws.root)),
        ],
    )
    assert quiet.code == loud.code == 1
    lines = error_lines(quiet)
    assert len(lines) == 11 and all(line.startswith("bad entry: ") for line in lines[:10])
    assert lines[10] == "... and 50 more bad entries; --json lists the first 200"
    shown = [line for line in error_lines(loud) if line.startswith("bad entry: ")]
    assert len(shown) == 50
    assert error_lines(loud)[-1] == (
        "60 bad entries on the audit trail were skipped (the first "
        "50 listed above; --json lists the first 200)"
    )


def test_refused_runs_are_grouped_by_reason_with_ids_once_in_a_stable_order(
    cli: Run, fake_server: FakeServer, ws: WorkspaceMaker
) -> None:
    ids = [f"0000000{i}-1111-4222-8333-444455556666" for i in range(7)]
    ws.segment(
        "000001.jsonl", [run_record(trace) for trace in reversed(ids)] + [run_record("other-1")]
    )
    ws.settings({"openlineage.url": fake_server.url})
    fake_server.script(
        lambda req: (
            Answer(422, body="unknown facet")
            if any(trace in req.body.decode() for trace in ids)
            else Answer(201)
        )
    )
    first = cli("export", "-w", str(ws.root))
    second = cli("export", "-w", str(ws.root))
    assert first.code == second.code == 1, str(first)
    # The same order each time (the second sends only the refused runs: no dataset written).
    assert [
        line for line in error_lines(first)[1:] if not line.startswith(("datasets ", "note: "))
    ] == error_lines(second)[1:]
    lines = error_lines(first)
    assert lines[1] == "7 runs of daily-sales refused: HTTP 422 Unprocessable Entity: unknown facet"
    assert lines[2] == "  runs: " + ", ".join(ids)
    assert all(first.err.count(trace) == 1 for trace in ids)


def test_settings_get_says_where_the_value_comes_from_and_list_shows_choices(
    cli: Run, ws: WorkspaceMaker
) -> None:
    w = ("-w", str(ws.root))
    namespace, from_env, listed, as_json = run_all(
        cli,
        [
            ("settings", "get", "openlineage.namespace", *w),
            ("settings", "get", "openlineage.timeout", *w),
            ("settings", "list", *w),
            ("settings", "get", "openlineage.namespace", "--json", *w),
        ],
    )
    assert (namespace.code, namespace.text) == (0, "test-ws\n")
    assert namespace.err == "(workspace name in graph.json)\n"
    assert (from_env.code, from_env.text, from_env.err) == (0, "10.0\n", "(default)\n")
    assert json.loads(as_json.out) == {
        "key": "openlineage.namespace",
        "value": "test-ws",
        "source": "workspace name in graph.json",
    }
    assert "One of: http, kafka, file, console." in listed.text
    env = cli(
        "settings",
        "get",
        "openlineage.namespace",
        *w,
        extra_env={"OPENLINEAGE_NAMESPACE": "from-env"},
    )
    assert (env.text, env.err) == ("from-env\n", "(environment (OPENLINEAGE_NAMESPACE))\n")


KEY_LIKE = "sk-live-abcdef0123456789abcdef"


def test_a_key_where_a_name_belongs_is_refused_without_echo(
    cli: Run, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.settings({"editor.fontSize": 13})
    before = (ws.root / ".workspace" / "settings.json").read_bytes()
    as_ref, as_name, unknown_ref = run_all(
        cli,
        [
            ("settings", "set", "openlineage.apiKey.secretRef", KEY_LIKE, "-w", str(ws.root)),
            ("secrets", "set", KEY_LIKE),
            (
                "settings",
                "set",
                "openlineage.kafka.sasl.password.secretRef",
                "kafka-prod",
                "-w",
                str(ws.root),
            ),
        ],
    )
    for result in (as_ref, as_name):
        assert result.code == 2, str(result)
        assert KEY_LIKE not in result.text + result.err
        assert "looks like a key itself" in result.err and "secrets set" in result.err
    assert not (tmp_path / "config" / "secrets.json").exists()
    assert unknown_ref.code == 0, str(unknown_ref)
    assert (
        "warning: no secret named 'kafka-prod' is stored yet" in unknown_ref.err
        and "secrets set kafka-prod" in unknown_ref.err
    )
    stored = json.loads((ws.root / ".workspace" / "settings.json").read_text())
    assert stored == {
        "editor.fontSize": 13,
        "openlineage.kafka.sasl.password.secretRef": "kafka-prod",
    }
    assert before != (ws.root / ".workspace" / "settings.json").read_bytes()


def test_secrets_list_names_its_store_even_when_empty(cli: Run, tmp_path: Path) -> None:
    empty, as_json = run_all(cli, [("secrets", "list"), ("secrets", "list", "--json")])
    file = tmp_path / "config" / "secrets.json"
    assert (empty.code, empty.text) == (0, "")
    assert empty.err == f"no secrets in the file {file}\n"
    assert json.loads(as_json.out) == {
        "backend": "file",
        "store": f"the file {file}",
        "file": str(file),
        "names": [],
        "origins": {},
    }


def test_url_overrides_the_setting_for_one_export_and_status(
    cli: Run, fake_server: FakeServer, ws: WorkspaceMaker, refused_port: int
) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.url": f"http://127.0.0.1:{refused_port}"})
    before = (ws.root / ".workspace" / "settings.json").read_bytes()
    sent = cli("export", "--url", fake_server.url, "-w", str(ws.root))
    assert sent.code == 0, str(sent)
    assert len(fake_server.requests) == 4
    assert (ws.root / ".workspace" / "settings.json").read_bytes() == before
    one, everything = run_all(
        cli,
        [
            ("status", "--url", fake_server.url, "-w", str(ws.root)),
            ("status", "--json", "-w", str(ws.root)),
        ],
    )
    assert one.text.splitlines()[1] == f"{fake_server.url}/api/v1/lineage: 1 of 1 runs exported"
    # The server the settings name, never exported to, is listed too.
    assert [d["destination"] for d in json.loads(everything.out)["destinations"]] == [
        f"{fake_server.url}/api/v1/lineage",
        json.loads(before)["openlineage.url"] + "/api/v1/lineage",
    ]


def test_status_shows_refused_within_pending_an_interruption_and_forgets(
    cli: Run, fake_server: FakeServer, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    from openlineage_export.state.ledger import Ledger

    ws.segment("000001.jsonl", [run_record("r1"), run_record("r2"), run_record("r3")])
    ws.settings({"openlineage.url": fake_server.url})
    fake_server.script(
        lambda req: Answer(400, body="no") if '"r2"' in req.body.decode() else Answer(201)
    )
    assert cli("export", "-w", str(ws.root)).code == 1
    ws.segment("000002.jsonl", [run_record("r4")])
    destination = f"{fake_server.url}/api/v1/lineage"
    ledger = Ledger.open({"OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state")})
    found = ledger.find_destination(str(ws.root.resolve()), destination)
    assert found is not None
    ledger.finished(found, "interrupted")
    ledger.close()
    shown = cli("status", "-w", str(ws.root))
    assert shown.text.splitlines()[1:] == [
        f"{destination}: 2 of 4 runs exported; 2 pending (1 refused last time, 1 new or changed)",
        shown.text.splitlines()[2],
    ]
    assert "  last export: interrupted " in shown.text and "export again" in shown.text
    unknown = cli("status", "--forget", "http://nowhere/api/v1/lineage", "-w", str(ws.root))
    assert unknown.code == 2 and destination in unknown.err, str(unknown)
    forgot = cli("status", "--forget", destination, "-w", str(ws.root))
    assert forgot.code == 0 and "forgot" in forgot.text, str(forgot)
    assert "never exported" in cli("status", "-w", str(ws.root)).text


def test_a_namespace_change_is_warned_of_before_sending(
    cli: Run, fake_server: FakeServer, ws: WorkspaceMaker
) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.url": fake_server.url})
    assert cli("export", "-w", str(ws.root)).code == 0
    assert cli("settings", "set", "openlineage.namespace", "renamed", "-w", str(ws.root)).code == 0
    again = cli("export", "--progress", "json", "-w", str(ws.root))
    assert again.code == 0, str(again)
    lines = [json.loads(line) for line in again.err.splitlines()]
    warning = next(i for i, line in enumerate(lines) if line["event"] == "warning")
    sending = next(i for i, line in enumerate(lines) if line.get("phase") == "sending")
    assert warning < sending
    assert "'renamed'" in lines[warning]["message"] and "'test-ws'" in lines[warning]["message"]
    quiet_third = cli("export", "-w", str(ws.root))
    assert "warning" not in quiet_third.err


# -- the rough edges a newcomer meets (issue 24) ----------------------------------------------


def test_settings_list_shows_the_namespace_in_force_as_get_does(
    cli: Run, ws: WorkspaceMaker
) -> None:
    w = ("-w", str(ws.root))
    listed, as_json, got = run_all(
        cli,
        [
            ("settings", "list", *w),
            ("settings", "list", "--json", *w),
            ("settings", "get", "openlineage.namespace", *w),
        ],
    )
    assert (
        "openlineage.namespace = test-ws  [workspace name in graph.json]"
        in listed.text.splitlines()
    ), listed.text
    row = next(r for r in json.loads(as_json.out) if r["key"] == "openlineage.namespace")
    assert (row["value"], row["source"]) == ("test-ws", "workspace name in graph.json")
    assert (got.text, got.err) == ("test-ws\n", "(workspace name in graph.json)\n")


def test_status_lists_the_configured_server_before_any_export(
    cli: Run, ws: WorkspaceMaker, refused_port: int
) -> None:
    ws.segment("000001.jsonl", [run_record("r1"), run_record("r2")])
    url = f"http://127.0.0.1:{refused_port}"
    ws.settings({"openlineage.url": url})
    shown, as_json = run_all(
        cli, [("status", "-w", str(ws.root)), ("status", "--json", "-w", str(ws.root))]
    )
    assert shown.text.splitlines() == [
        "2 runs on the trail",
        f"{url}/api/v1/lineage: never exported; 2 runs pending",
        "  last export: never",
    ], str(shown)
    [state] = json.loads(as_json.out)["destinations"]
    assert (state["destination"], state["pending"], state["lastExportStarted"]) == (
        f"{url}/api/v1/lineage",
        2,
        None,
    )


def test_the_summary_names_the_dataset_namespaces(
    cli: Run, fake_server: FakeServer, demo: Path
) -> None:
    set_settings(demo, {"openlineage.url": fake_server.url})
    done = cli("export", "-w", str(demo))
    assert done.code == 0, str(done)
    [line] = [line for line in error_lines(done) if line.startswith("datasets written in ")]
    sent = {
        d["namespace"]
        for r in fake_server.requests
        for side in ("inputs", "outputs")
        for d in json.loads(r.body).get(side, ())
    }
    assert line.startswith("datasets written in their own namespaces: ") and sent
    assert all(namespace in line for namespace in sent), line
    assert line.endswith("(the jobs are in acme-analytics)"), line
    dry = cli("export", "--dry-run", "--json", "-o", "e.jsonl", "-w", str(demo))
    assert json.loads(dry.out)["datasetNamespaces"] == sorted(sent)


def test_export_help_lists_exit_code_5(cli: Run) -> None:
    codes = cli("export", "--help").text.split("Exit codes:", 1)[1]
    assert "\n  5    another export of this workspace to this destination is running" in codes


def test_one_bad_entry_is_said_in_the_singular(cli: Run, ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record("a"), "not json"])
    done = cli("export", "--dry-run", "-o", "e.jsonl", "-w", str(ws.root), cwd=ws.root)
    assert error_lines(done)[-1] == ("1 bad entry on the audit trail was skipped (listed above)"), (
        str(done)
    )


def test_usage_errors_say_error_as_every_other_error(cli: Run, demo: Path) -> None:
    bogus, missing = run_all(
        cli, [("export", "--bogus", "-w", str(demo)), ("settings", "get", "-w", str(demo))]
    )
    for result in (bogus, missing):
        assert result.code == 2, str(result)
        assert "Error:" not in result.err, str(result)
        assert error_lines(result)[-1].startswith("error: "), str(result)
        assert error_lines(result)[0].startswith("Usage: "), str(result)
    # Names the option; the sentence around it is click's (it words it anew now and then).
    assert "--bogus" in error_lines(bogus)[-1], str(bogus)


def test_a_url_without_its_scheme_names_the_option_and_what_was_meant(
    cli: Run, ws: WorkspaceMaker
) -> None:
    given, setting = run_all(
        cli,
        [
            ("export", "--url", "localhost:5000", "-w", str(ws.root)),
            ("settings", "set", "openlineage.url", "localhost:5000", "-w", str(ws.root)),
        ],
    )
    assert given.code == setting.code == 2, str(given)
    assert error_lines(given) == [
        "error: --url must start with http:// or https://; did you mean http://localhost:5000?"
    ], str(given)
    assert error_lines(setting) == [
        "error: openlineage.url must start with http:// or "
        "https://; did you mean http://localhost:5000?"
    ]


def test_w_on_a_folder_above_workspaces_lists_them(
    cli: Run,
    tmp_path: Path,
    make_workspace: Callable[..., WorkspaceMaker],
) -> None:
    above = tmp_path / "projects"
    for name in ("beta", "alpha"):
        WorkspaceMaker(above / "team" / name)
    (above / "notes").mkdir()
    result = cli("status", "-w", str(above))  # run in tmp_path: the paths are relative to it
    assert result.code == 3, str(result)
    assert error_lines(result) == [
        f"error: {above} is not a workspace: it has no .workspace/ folder (workspaces below "
        "it: projects/team/alpha, projects/team/beta; name one with -w DIR)"
    ], str(result)


# -- the ecosystem's own configuration (openlineage-python's variables and openlineage.yml) ----


def test_openlineage_python_variables_are_read_and_named_as_the_source(
    cli: Run, ws: WorkspaceMaker
) -> None:
    w = ("-w", str(ws.root))
    env = {
        "OPENLINEAGE__TRANSPORT__TYPE": "http",
        "OPENLINEAGE__TRANSPORT__URL": "http://127.0.0.1:5999",
        "OPENLINEAGE__TRANSPORT__ENDPOINT": "api/v2/lineage",
        "OPENLINEAGE__TRANSPORT__TIMEOUT": "7",
    }
    url, endpoint, timeout = (
        cli("settings", "get", key, *w, extra_env=env)
        for key in ("openlineage.url", "openlineage.endpoint", "openlineage.timeout")
    )
    assert (url.text, url.err) == (
        "http://127.0.0.1:5999\n",
        "(environment (OPENLINEAGE__TRANSPORT__URL))\n",
    ), str(url)
    assert endpoint.text == "api/v2/lineage\n" and timeout.text == "7\n", str(timeout)
    listed = cli("settings", "list", *w, extra_env=env)
    assert (
        "openlineage.url = http://127.0.0.1:5999  [environment (OPENLINEAGE__TRANSPORT__URL)]"
        in listed.text.splitlines()
    ), listed.text
    status = cli("status", *w, extra_env=env)
    assert "http://127.0.0.1:5999/api/v2/lineage: never exported" in status.text, str(status)


def test_openlineage_yml_wins_over_the_variables_and_a_disagreement_is_warned_once(
    cli: Run, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    config = tmp_path / "ol" / "my.yml"
    config.parent.mkdir()
    config.write_text("transport:\n  type: http\n  url: http://127.0.0.1:5111\n")
    env = {
        "OPENLINEAGE_CONFIG": str(config),
        "OPENLINEAGE__TRANSPORT__URL": "http://127.0.0.1:5222",
    }
    got = cli("settings", "get", "openlineage.url", "-w", str(ws.root), extra_env=env)
    assert got.text == "http://127.0.0.1:5111\n", str(got)
    assert error_lines(got) == [
        f"warning: openlineage.url: openlineage.yml ({config}) and environment "
        f"(OPENLINEAGE__TRANSPORT__URL) disagree; the value from openlineage.yml ({config}) is "
        "used",
        f"(openlineage.yml ({config}))",
    ], str(got)
    # Our own variable is more particular than the ecosystem's, and the workspace weaker.
    ws.settings({"openlineage.url": "http://127.0.0.1:5333"})
    ours = cli(
        "settings",
        "get",
        "openlineage.url",
        "-w",
        str(ws.root),
        extra_env={**env, "OPENLINEAGE_URL": "http://127.0.0.1:5444"},
    )
    assert ours.text == "http://127.0.0.1:5444\n", str(ours)
    assert len([line for line in error_lines(ours) if line.startswith("warning:")]) == 1
    # Without openlineage-python's configuration, our variable over settings.json is no news.
    plain = cli(
        "settings",
        "get",
        "openlineage.url",
        "-w",
        str(ws.root),
        extra_env={"OPENLINEAGE_URL": "http://127.0.0.1:5444"},
    )
    assert error_lines(plain) == ["(environment (OPENLINEAGE_URL))"], str(plain)


def test_an_openlineage_yml_inside_the_workspace_is_not_read(cli: Run, ws: WorkspaceMaker) -> None:
    (ws.root / "openlineage.yml").write_text("transport:\n  url: http://127.0.0.1:5111\n")
    got = cli("settings", "get", "openlineage.url", cwd=ws.root)
    assert got.code == 1 and got.text == "", str(got)
    assert got.err.startswith(f"warning: {ws.root / 'openlineage.yml'} lies in {ws.root}, "), got
    assert "so it travels with it (whoever pushed last wrote it) and is not read" in got.err


def test_the_ecosystem_api_key_goes_only_to_a_server_the_user_named(
    cli: Run, fake_server: FakeServer, ws: WorkspaceMaker
) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    key = {
        "OPENLINEAGE__TRANSPORT__AUTH__TYPE": "api_key",
        "OPENLINEAGE__TRANSPORT__AUTH__API_KEY": SECRET,
    }
    # The workspace names the server: the key from the user's environment does not go there.
    ws.settings({"openlineage.url": fake_server.url})
    refused = cli("export", "-w", str(ws.root), extra_env=key)
    assert refused.code == 2 and fake_server.requests == [], str(refused)
    assert (
        "the API key in the environment variable OPENLINEAGE__TRANSPORT__AUTH__API_KEY "
        "goes only to a server you name"
    ) in refused.err
    assert SECRET not in refused.err + refused.text
    # The user names it (openlineage-python's variable): the key goes with the events.
    ws.settings({})
    sent = cli(
        "export",
        "-q",
        "-w",
        str(ws.root),
        extra_env={**key, "OPENLINEAGE__TRANSPORT__URL": fake_server.url},
    )
    assert sent.code == 0, str(sent)
    assert {r.headers["authorization"] for r in fake_server.requests} == {f"Bearer {SECRET}"}
    assert SECRET not in sent.err + sent.text


def test_a_url_that_ends_with_the_endpoint_is_warned_about_when_it_is_set(
    cli: Run, ws: WorkspaceMaker
) -> None:
    ws.settings({})
    # One after the other: each reads the settings the one before it wrote.
    doubtful, mended, unset = [
        cli(*args)
        for args in (
            (
                "settings",
                "set",
                "openlineage.url",
                "http://mq:5000/api/v1/lineage",
                "-w",
                str(ws.root),
            ),
            ("settings", "set", "openlineage.url", "http://mq:5000", "-w", str(ws.root)),
            ("settings", "unset", "openlineage.url", "-w", str(ws.root)),
        )
    ]
    assert doubtful.code == 0, str(doubtful)
    assert doubtful.err.startswith("warning: openlineage.url already ends with the endpoint")
    assert "set openlineage.url to http://mq:5000" in doubtful.err
    assert doubtful.err.count("\n") == 1
    for quiet in (mended, unset):
        assert quiet.code == 0 and "warning" not in quiet.err, str(quiet)
