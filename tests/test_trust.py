"""The trust model (docs/security.md): a workspace says where events go; only the user weakens
or redirects a key.

Each test plays a hostile ``.workspace/settings.json`` (or a hostile network, in a network
namespace of its own where ``10.200.0.1`` is "another machine") and checks that the key did not
travel, with one line saying which setting and how the user allows it; then that the user's
way of allowing it works.
"""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fakeserver import FakeServer
from helpers import WorkspaceMaker, cli_command, cli_env, run_record
from support.netns import OTHER_MACHINE, in_netns

from openlineage_export.cli import main
from openlineage_export.guards.proxy import environment_proxy

KEY = "olx-Tr0st-9Qz4v7Wm2Hx8rB5"
NAME = "marquez-prod"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as running:
        yield running


@pytest.fixture
def other() -> Iterator[FakeServer]:
    """A second server: where a hostile workspace would rather the key went."""
    with FakeServer() as running:
        yield running


class Cli:
    """Runs CLI commands in this process, with a private config folder and ledger."""

    def __init__(self, tmp_path: Path) -> None:
        self.config = tmp_path / "config"
        self.env: dict[str, str | None] = {
            k: None
            for k in os.environ
            if k.startswith("OPENLINEAGE_") or k.lower().endswith("_proxy")
        }
        self.env.update(
            {
                "OPENLINEAGE_EXPORT_CONFIG_DIR": str(self.config),
                "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
                "OPENLINEAGE_EXPORT_SECRETS": "file",
            }
        )

    def __call__(self, *args: str, code: int, stdin: str | None = None, **env: str) -> Result:
        result = CliRunner().invoke(main, list(args), input=stdin, env={**self.env, **env})
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"{args} crashed") from result.exception
        assert result.exit_code == code, (args, result.stdout, result.stderr)
        return result


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def one_line(result: Result) -> str:
    """The one error line a refusal prints (and that it is one line, without the key)."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert KEY not in result.output
    return lines[0]


def origin(server: FakeServer) -> str:
    return server.url.rstrip("/")


# -- only the user weakens how the key travels -------------------------------------------------


def test_allow_insecure_key_in_the_workspace_does_not_send_the_key_in_clear(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """Without the fix, the workspace's allowInsecureKey sent the key in clear to another
    machine (here 10.200.0.1 in a namespace of the test's own)."""
    ws.segment("000001.jsonl", [run_record("r1")])
    url = f"http://{OTHER_MACHINE}:8080"
    ws.settings(
        {
            "openlineage.url": url,
            "openlineage.allowInsecureKey": True,
            "openlineage.apiKey.secretRef": NAME,
        }
    )
    env = cli_env(tmp_path)
    store = [cli_command("secrets", "set", NAME, "--for", url)]
    export = cli_command("export", "-w", str(ws.root))
    outcome = in_netns(
        tmp_path,
        listen=[f"{OTHER_MACHINE}:8080"],
        runs=[
            {"args": store[0], "env": env, "stdin": KEY},
            {"args": export, "env": env},
            # The user's way: the environment (the workspace's own value removed first).
            {
                "args": cli_command(
                    "settings", "unset", "openlineage.allowInsecureKey", "-w", str(ws.root)
                ),
                "env": env,
            },
            {"args": export, "env": {**env, "OPENLINEAGE_ALLOW_INSECURE_KEY": "true"}},
        ],
    )
    refused, allowed = outcome.runs[1], outcome.runs[3]
    assert refused["code"] == 2, refused["stderr"]
    assert refused["stderr"].count("\n") == 1 and KEY not in refused["stderr"]
    assert (
        "openlineage.allowInsecureKey in the workspace's settings.json is not used"
        in refused["stderr"]
        and "OPENLINEAGE_ALLOW_INSECURE_KEY" in refused["stderr"]
    )
    assert allowed["code"] == 0, allowed["stderr"]
    seen = outcome.seen[f"{OTHER_MACHINE}:8080"]
    assert len(seen) == 4, "only the export the user allowed reached the server"
    assert {s["authorization"] for s in seen} == {f"Bearer {KEY}"}


def test_tls_verify_false_in_the_workspace_is_refused(
    ws: WorkspaceMaker, cli: Cli, server: FakeServer
) -> None:
    """The key never goes without certificate checks because a workspace said so; nothing is
    even attempted (the server, plain http here, would otherwise get the run)."""
    ws.segment("000001.jsonl", [run_record("r1")])
    cli("secrets", "set", NAME, "--for", origin(server), code=0, stdin=KEY)
    for key, value in [
        ("openlineage.tls.verify", False),
        ("openlineage.tls.caBundle", ".workspace/settings.json"),
    ]:
        ws.settings(
            {"openlineage.url": server.url, "openlineage.apiKey.secretRef": NAME, key: value}
        )
        line = one_line(cli("export", "-w", str(ws.root), code=2))
        assert f"{key} in the workspace's settings.json is not used" in line
        assert "OPENLINEAGE_TLS_" in line and f"settings unset {key}" in line
        assert server.requests == []
        # Nor can it be written there with settings set.
        assert "only you may set it" in one_line(
            cli("settings", "set", key, "false", "-w", str(ws.root), code=2)
        )
    # The user's way (and a workspace value that weakens nothing is harmless).
    ws.settings(
        {
            "openlineage.url": server.url,
            "openlineage.apiKey.secretRef": NAME,
            "openlineage.tls.verify": True,
        }
    )
    cli("export", "-w", str(ws.root), code=0, OPENLINEAGE_TLS_VERIFY="false")
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {KEY}"}


# -- which server a key goes to ------------------------------------------------------------------


def test_a_key_from_the_environment_goes_only_to_a_url_the_user_named(
    ws: WorkspaceMaker, cli: Cli, server: FakeServer
) -> None:
    """CI: OPENLINEAGE_API_KEY in the job's environment, the url from the checked-out
    settings.json (a pull request's): the key must not go."""
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.url": server.url})
    line = one_line(cli("export", "-w", str(ws.root), code=2, OPENLINEAGE_API_KEY=KEY))
    assert "OPENLINEAGE_API_KEY goes only to a server you name" in line
    assert "OPENLINEAGE_URL" in line and "--url" in line
    assert server.requests == []
    # Named by the user: the environment, or the command line.
    cli("export", "-w", str(ws.root), code=0, OPENLINEAGE_API_KEY=KEY, OPENLINEAGE_URL=server.url)
    cli(
        "export", "-w", str(ws.root), "--full", "--url", server.url, code=0, OPENLINEAGE_API_KEY=KEY
    )
    assert len(server.requests) == 8
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {KEY}"}


WORKSPACE_TRANSPORTS = {
    "console": {"openlineage.transport": "console"},
    "file": {
        "openlineage.transport": "file",
        "openlineage.file.path": ".workspace/exports/e.jsonl",
    },
}


@pytest.mark.parametrize("transport", sorted(WORKSPACE_TRANSPORTS))
@pytest.mark.parametrize("named", ["OPENLINEAGE_URL", "--url", "the user's openlineage.yml"])
def test_the_server_the_user_named_is_where_events_go(
    ws: WorkspaceMaker, cli: Cli, server: FakeServer, tmp_path: Path, transport: str, named: str
) -> None:
    """Issue 43, 9: a CI job names its server and key; the checked-out settings.json switches
    the transport to console or a file. Not "1 of 1 runs sent", exit 0, with nothing at the
    server: one line naming the setting and how the user allows it, exit 2, nothing anywhere."""
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings(WORKSPACE_TRANSPORTS[transport])
    args, env = ["export", "-w", str(ws.root)], {"OPENLINEAGE_API_KEY": KEY}
    if named == "OPENLINEAGE_URL":
        env["OPENLINEAGE_URL"] = server.url
    elif named == "--url":
        args += ["--url", server.url]
    else:
        own = tmp_path / "mine" / "openlineage.yml"
        own.parent.mkdir()
        own.write_text(f"transport:\n  url: {server.url}\n")
        env["OPENLINEAGE_CONFIG"] = str(own)
    refused = cli(*args, code=2, **env)
    line = one_line(refused)
    assert "openlineage.transport" in line and "settings.json" in line, line
    assert f"OPENLINEAGE_TRANSPORT={transport}" in line, line
    assert "openlineage.url" in line and server.url not in line, line
    assert refused.stdout == "" and server.requests == []
    assert not (ws.root / ".workspace" / "exports").exists()
    # The user decides: their own transport (--url names the http server: it goes without),
    # or no server of theirs at all.
    cli("export", "-w", str(ws.root), code=0, OPENLINEAGE_TRANSPORT=transport, **env)
    cli("export", "-w", str(ws.root), "--full", code=0)
    assert server.requests == []


@pytest.mark.parametrize("workspace_says", ["file", "http"])
def test_with_two_destinations_named_the_workspace_does_not_choose(
    ws: WorkspaceMaker, cli: Cli, server: FakeServer, tmp_path: Path, workspace_says: str
) -> None:
    """Attack D, 5: the job names a server (OPENLINEAGE_URL, with its key) and a file
    (OPENLINEAGE_FILE_PATH); the checked-out settings.json picks one transport. Not "sent",
    exit 0, with the other destination empty: exit 2, one line naming both and how the user
    chooses, nothing anywhere."""
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.transport": workspace_says})
    events = tmp_path / "mine" / "events.jsonl"
    events.parent.mkdir()
    env = {"OPENLINEAGE_API_KEY": KEY, "OPENLINEAGE_URL": server.url}
    env["OPENLINEAGE_FILE_PATH"] = str(events)
    refused = cli("export", "-w", str(ws.root), code=2, **env)
    line = one_line(refused)
    assert "more than one destination" in line and "OPENLINEAGE_TRANSPORT" in line, line
    assert "OPENLINEAGE_URL" in line and "OPENLINEAGE_FILE_PATH" in line, line
    assert server.requests == [] and not events.exists()
    # The user chooses: each goes where they said.
    cli("export", "-w", str(ws.root), code=0, OPENLINEAGE_TRANSPORT="file", **env)
    assert events.exists() and server.requests == []
    cli("export", "-w", str(ws.root), "--full", code=0, OPENLINEAGE_TRANSPORT="http", **env)
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {KEY}"}


def test_the_brokers_the_user_named_are_where_events_go(
    ws: WorkspaceMaker, cli: Cli, other: FakeServer
) -> None:
    """Kafka's brokers named by the user, the workspace's transport http to a url of its own."""
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.transport": "http", "openlineage.url": other.url})
    line = one_line(
        cli(
            "export",
            "-w",
            str(ws.root),
            code=2,
            OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:9",
            OPENLINEAGE_KAFKA_TOPIC="lineage",
        )
    )
    assert "OPENLINEAGE_TRANSPORT=http" in line and "openlineage.kafka.bootstrapServers" in line
    assert other.requests == []


def test_a_stored_key_goes_only_to_the_servers_approved_for_it(
    ws: WorkspaceMaker, cli: Cli, server: FakeServer, other: FakeServer
) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    cli("secrets", "set", NAME, code=0, stdin=KEY)
    ws.settings({"openlineage.url": server.url, "openlineage.apiKey.secretRef": NAME})
    line = one_line(cli("export", "-w", str(ws.root), code=2))
    assert f"the secret '{NAME}' is not approved for {origin(server)}" in line
    assert f"secrets allow {NAME} {origin(server)}" in line
    assert server.requests == []
    cli("secrets", "allow", NAME, origin(server), code=0)
    cli("export", "-w", str(ws.root), code=0)
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {KEY}"}
    # A pushed settings.json pointing the same secret elsewhere (same host, another port):
    ws.settings({"openlineage.url": other.url + "/collect", "openlineage.apiKey.secretRef": NAME})
    assert f"not approved for {origin(other)}" in one_line(
        cli("export", "-w", str(ws.root), code=2)
    )
    assert other.requests == []
    # The approvals live in the user's folder, private, never in the workspace.
    approvals = cli.config / "key-origins.json"
    assert json.loads(approvals.read_text()) == {NAME: [origin(server)]}
    assert stat.S_IMODE(approvals.stat().st_mode) == 0o600
    assert not any("key-origins" in p.name for p in ws.root.rglob("*"))
    assert json.loads(cli("secrets", "list", "--json", code=0).stdout)["origins"] == {
        NAME: [origin(server)]
    }


def test_approving_takes_an_origin_in_any_spelling(cli: Cli) -> None:
    cli(
        "secrets",
        "set",
        NAME,
        "--for",
        "HTTPS://Marquez.Example.com:443/api/v1?x",
        "--for",
        "http://[::1]:5000",
        code=0,
        stdin=KEY,
    )
    listed = json.loads(cli("secrets", "list", "--json", code=0).stdout)
    assert listed["origins"][NAME] == ["http://[::1]:5000", "https://marquez.example.com"]
    assert "no secret named 'nope'" in one_line(
        cli("secrets", "allow", "nope", "https://x.example.com", code=2)
    )
    assert "not a URL" in one_line(cli("secrets", "allow", NAME, "marquez", code=2))


@pytest.mark.parametrize(
    ("server", "says"),
    [
        ("kafka://sasl_plaintext", "a Kafka broker is approved with its port: kafka://host:port"),
        ("kafka://broker.example.com", "a Kafka broker is approved with its port"),
        ("SASL_PLAINTEXT://127.0.0.1:9094", "not a URL"),
        ("ftp://files.example.com", "not a ftp:// address"),
    ],
)
def test_a_key_is_approved_for_a_server_or_a_broker_never_a_protocols_name(
    cli: Cli, server: str, says: str
) -> None:
    """Issue 30 (3): the old refusal advised approving kafka://sasl_plaintext, which then let
    the password go to any SASL_PLAINTEXT:// host; a broker is approved as kafka://host:port."""
    cli("secrets", "set", NAME, code=0, stdin=KEY)
    assert says in one_line(cli("secrets", "allow", NAME, server, code=2))
    assert says in one_line(cli("secrets", "set", "other", "--for", server, code=2, stdin=KEY))
    cli("secrets", "allow", NAME, "kafka://Broker.Example.com:9093", code=0)
    assert json.loads(cli("secrets", "list", "--json", code=0).stdout)["origins"] == {
        NAME: ["kafka://broker.example.com:9093"]
    }


# -- a file the workspace names stays inside it --------------------------------------------------


EXPORTS = ".workspace/exports"


@pytest.mark.parametrize(
    "how",
    [
        "absolute",
        "dotdot",
        "dotdot-inside-exports",
        "the user's git hook",
        "the user's .git/config",
        "the user's .venv/bin/activate",
        "anywhere else in the workspace",
        "symlinked-file",
        "symlinked-exports",
        "symlinked-.workspace",
        "symlinked-subfolder",
        "symlink-in-rotating-folder",
        "hard link",
    ],
)
def test_a_workspace_may_write_only_in_its_exports_folder_never_through_a_link(
    ws: WorkspaceMaker, cli: Cli, tmp_path: Path, how: str
) -> None:
    """Issue 30, 1: ``.git/hooks/pre-commit`` is inside the workspace, and the user's: events
    appended there run at the next commit. A workspace names only files in the folder the
    export owns, ``.workspace/exports/``, and no link on the way is followed."""
    ws.segment("000001.jsonl", [run_record("r1", pipeline="$(touch /tmp/owned)")])
    victim = tmp_path / "victim" / "profile"
    victim.parent.mkdir()
    exports = ws.root / EXPORTS
    path: str
    if how == "absolute":
        path = str(victim)
    elif how == "dotdot":
        path = "../victim/profile"
    elif how == "dotdot-inside-exports":
        path = f"{EXPORTS}/../../.git/config"
        victim = ws.root / ".git" / "config"
    elif how.startswith("the user's"):
        victim = ws.root / how.removeprefix("the user's ").replace(
            "git hook", ".git/hooks/pre-commit"
        )
        path = str(victim.relative_to(ws.root))
    elif how == "anywhere else in the workspace":
        victim = ws.root / "notes.txt"
        path = "notes.txt"
    elif how == "symlinked-file":
        exports.mkdir()
        (exports / "events.jsonl").symlink_to(victim)
        path = f"{EXPORTS}/events.jsonl"
    elif how == "symlinked-exports":
        exports.symlink_to(victim.parent)
        path = f"{EXPORTS}/profile"
    elif how == "symlinked-.workspace":  # settings.json read through it, as data
        marker = ws.root / ".workspace"
        moved = tmp_path / "victim" / ".workspace"
        marker.rename(moved)
        marker.symlink_to(moved)
        victim = moved / "exports" / "events.jsonl"
        path = f"{EXPORTS}/events.jsonl"
    elif how == "symlinked-subfolder":
        exports.mkdir()
        (exports / "ci").symlink_to(victim.parent)
        path = f"{EXPORTS}/ci/profile"
    elif how == "symlink-in-rotating-folder":  # git keeps links: a committed one
        exports.mkdir()
        (exports / "events-000001.jsonl").symlink_to(victim)
        path = f"{EXPORTS}/"
    else:  # a hard link is no git's doing: whatever names the file elsewhere is not ours
        exports.mkdir()
        victim.write_text("precious\n")
        os.link(victim, exports / "events.jsonl")
        path = f"{EXPORTS}/events.jsonl"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text("precious\n")
    ws.settings({"openlineage.transport": "file", "openlineage.file.path": path})
    line = one_line(cli("export", "-w", str(ws.root), code=2))
    if how == "symlinked-.workspace":  # issue 43, 3: not even read through it
        assert line.startswith(f"error: cannot read {ws.root}/.workspace/settings.json: "), line
        assert f"{ws.root}/.workspace is a link, not a folder of the workspace's own" in line
        assert victim.read_text() == "precious\n"
        return
    assert line.startswith("error: openlineage.file.path in the workspace's settings.json "), line
    assert "OPENLINEAGE_FILE_PATH in your environment" in line
    assert victim.read_text() == "precious\n"
    # The user may write anywhere, links followed.
    ws.settings({"openlineage.transport": "file"})
    cli("export", "-w", str(ws.root), code=0, OPENLINEAGE_FILE_PATH=str(victim))
    assert victim.read_text().startswith("precious\n{")


@pytest.mark.parametrize(
    "path", [f"{EXPORTS}/events.jsonl", f"{EXPORTS}/ci/events.jsonl", "ABSOLUTE"]
)
def test_a_file_in_the_exports_folder_is_fine(ws: WorkspaceMaker, cli: Cli, path: str) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    if path == "ABSOLUTE":  # where the pusher's checkout was is where the user's is
        path = str(ws.root / EXPORTS / "events.jsonl")
    ws.settings({"openlineage.transport": "file", "openlineage.file.path": path})
    cli("export", "-w", str(ws.root), code=0)
    assert (ws.root / path).read_text().count("\n") == 4


def test_a_fifo_as_the_file_never_blocks_and_is_refused(ws: WorkspaceMaker, tmp_path: Path) -> None:
    """Issue 30, 8: a named pipe (from the workspace, or from the user) made the export wait
    for a reader forever, and Ctrl-C did not end it. It is not a file: one line, exit 2."""
    ws.segment("000001.jsonl", [run_record("r1")])
    (ws.root / EXPORTS).mkdir()
    for fifo, env in [
        (ws.root / EXPORTS / "events.jsonl", {}),
        (tmp_path / "pipe", {"OPENLINEAGE_FILE_PATH": str(tmp_path / "pipe")}),
    ]:
        os.mkfifo(fifo)
        ws.settings(
            {"openlineage.transport": "file", "openlineage.file.path": f"{EXPORTS}/events.jsonl"}
        )
        export = subprocess.Popen(
            cli_command("export", "-w", str(ws.root)),
            env=cli_env(tmp_path, **env),
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _, err = export.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            export.send_signal(signal.SIGINT)  # then it must at least end on Ctrl-C
            try:
                export.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                export.kill()
                export.communicate()
                raise AssertionError("neither the export nor Ctrl-C ended") from None
            raise AssertionError("the export waited for a reader of the FIFO") from None
        assert export.returncode == 2, err
        assert err.count("\n") == 1 and err.startswith("error: openlineage.file.path"), err
        assert f"{fifo}, which is a named pipe (FIFO), not a file" in err or (
            f"{fifo}: it is a named pipe (FIFO), not a file" in err
        ), err


# -- loopback is what a name resolves to, and the hop the key really takes ----------------------


def test_a_localhost_name_mapped_to_another_machine_is_not_loopback(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """``h2evil.localhost`` reads like this machine, and resolves to another one."""
    ws.segment("000001.jsonl", [run_record("r1")])
    env = cli_env(tmp_path, OPENLINEAGE_API_KEY=KEY)
    export = cli_command("export", "-w", str(ws.root))
    outcome = in_netns(
        tmp_path,
        listen=[f"{OTHER_MACHINE}:8080", "127.0.0.1:8080"],
        hosts=(
            f"127.0.0.1 localhost\n{OTHER_MACHINE} h2evil.localhost\n"
            f"127.0.0.1 good.localhost\n{OTHER_MACHINE} half.localhost\n"
            "::1 half.localhost\n"
        ),
        runs=[
            {"args": export, "env": {**env, "OPENLINEAGE_URL": f"http://{host}:8080"}}
            for host in ("h2evil.localhost", "half.localhost", "good.localhost")
        ],
    )
    for refused in outcome.runs[:2]:
        assert refused["code"] == 2, refused["stderr"]
        assert (
            "is not this machine (every address it resolves to must be loopback)"
            in refused["stderr"]
            and refused["stderr"].count("\n") == 1
        )
    assert outcome.seen[f"{OTHER_MACHINE}:8080"] == [], "the key went to another machine"
    assert outcome.runs[2]["code"] == 0, outcome.runs[2]["stderr"]
    assert {s["authorization"] for s in outcome.seen["127.0.0.1:8080"]} == {f"Bearer {KEY}"}


def test_plain_http_through_a_proxy_on_another_machine_keeps_the_key(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """HTTP_PROXY on another machine, the server on loopback: the key would cross the network
    in clear to the proxy. NO_PROXY=127.0.0.0/8 (a CIDR) sends it direct; ALL_PROXY counts."""
    ws.segment("000001.jsonl", [run_record("r1")])
    proxy = f"http://{OTHER_MACHINE}:3128"
    env = cli_env(tmp_path, OPENLINEAGE_API_KEY=KEY, OPENLINEAGE_URL="http://127.0.0.1:8080")
    export = cli_command("export", "--full", "-w", str(ws.root))
    outcome = in_netns(
        tmp_path,
        listen=[f"{OTHER_MACHINE}:3128", "127.0.0.1:8080"],
        runs=[
            {"args": export, "env": {**env, "HTTP_PROXY": proxy}},
            {"args": export, "env": {**env, "ALL_PROXY": proxy}},
            {"args": export, "env": {**env, "http_proxy": proxy, "NO_PROXY": "127.0.0.0/8"}},
        ],
    )
    for refused in outcome.runs[:2]:
        assert refused["code"] == 2, refused["stderr"]
        assert f"through the proxy {OTHER_MACHINE}" in refused["stderr"]
    assert outcome.seen[f"{OTHER_MACHINE}:3128"] == [], "the key went to the proxy in clear"
    assert outcome.runs[2]["code"] == 0, outcome.runs[2]["stderr"]
    assert len(outcome.seen["127.0.0.1:8080"]) == 4


@pytest.mark.parametrize(
    ("url", "environ", "expected"),
    [
        ("http://127.0.0.1:5000/x", {"HTTP_PROXY": "http://p:3128"}, "http://p:3128"),
        ("http://127.0.0.1:5000/x", {"http_proxy": "p:3128"}, "http://p:3128"),
        ("https://h.example/x", {"ALL_PROXY": "socks5://p:1080"}, "socks5://p:1080"),
        (
            "https://h.example/x",
            {"all_proxy": "http://a:1", "HTTPS_PROXY": "http://s:2"},
            "http://s:2",
        ),
        ("http://127.0.0.1:5000/x", {"HTTP_PROXY": "http://p:1", "NO_PROXY": "127.0.0.0/8"}, None),
        (
            "http://127.9.9.9/x",
            {"ALL_PROXY": "http://p:1", "no_proxy": "10.0.0.0/8, 127.0.0.0/8"},
            None,
        ),
        ("http://10.1.2.3/x", {"ALL_PROXY": "http://p:1", "NO_PROXY": "127.0.0.0/8"}, "http://p:1"),
        ("http://[::1]:5000/x", {"HTTP_PROXY": "http://p:1", "NO_PROXY": "::1/128"}, None),
        (
            "http://api.corp.example/x",
            {"HTTP_PROXY": "http://p:1", "NO_PROXY": ".corp.example"},
            None,
        ),
        (
            "http://api.corp.example/x",
            {"HTTP_PROXY": "http://p:1", "NO_PROXY": "corp.example"},
            None,
        ),
        (
            "http://notcorp.example/x",
            {"HTTP_PROXY": "http://p:1", "NO_PROXY": "corp.example"},
            "http://p:1",
        ),
        (
            "http://h.example:8080/x",
            {"HTTP_PROXY": "http://p:1", "NO_PROXY": "h.example:9090"},
            "http://p:1",
        ),
        (
            "http://h.example:8080/x",
            {"HTTP_PROXY": "http://p:1", "NO_PROXY": "h.example:8080"},
            None,
        ),
        ("http://h.example/x", {"HTTP_PROXY": "http://p:1", "NO_PROXY": "*"}, None),
        ("http://h.example/x", {"HTTP_PROXY": "http://p:1", "REQUEST_METHOD": "GET"}, None),
    ],
)
def test_the_proxy_for_a_url_is_read_as_requests_and_curl_read_it(
    url: str, environ: dict[str, str], expected: str | None
) -> None:
    assert environment_proxy(url, environ) == expected


# -- what is shown of an address ---------------------------------------------------------------


def test_a_password_or_a_query_in_an_address_is_never_shown(ws: WorkspaceMaker, cli: Cli) -> None:
    ws.settings(
        {
            "openlineage.url": f"http://user:{KEY}@marquez.example.com",
            "openlineage.endpoint": f"api/v1/lineage?api_key={KEY}",
        }
    )
    for args in (
        ["settings", "get", "openlineage.url"],
        ["settings", "list"],
        ["settings", "list", "--json"],
        ["settings", "get", "openlineage.endpoint"],
        ["settings", "get", "openlineage.url", "--json"],
    ):
        said = cli(*args, "-w", str(ws.root), code=0)
        assert KEY not in said.output, args
    assert (
        cli("settings", "get", "openlineage.url", "-w", str(ws.root), code=0).stdout.strip()
        == "http://user:***@marquez.example.com"
    )
    assert (
        cli("settings", "get", "openlineage.endpoint", "-w", str(ws.root), code=0).stdout.strip()
        == "api/v1/lineage?***"
    )
    # From the environment too; and an export refuses either, without repeating it.
    assert (
        KEY
        not in cli(
            "settings",
            "get",
            "openlineage.url",
            "-w",
            str(ws.root),
            code=0,
            OPENLINEAGE_URL=f"https://u:{KEY}@h.example",
        ).output
    )
    one_line(cli("export", "-w", str(ws.root), code=2))
    ws.settings(
        {
            "openlineage.url": "http://127.0.0.1:9",
            "openlineage.endpoint": f"api/v1/lineage?api_key={KEY}",
        }
    )
    assert "openlineage.endpoint" in one_line(cli("export", "-w", str(ws.root), code=2))
    ws.settings({"openlineage.url": "http://127.0.0.1:9"})
    assert "openlineage.endpoint" in one_line(
        cli("export", "-w", str(ws.root), code=2, OPENLINEAGE_ENDPOINT=f"v1#{KEY}")
    )
    assert "openlineage.endpoint" in one_line(
        cli("settings", "set", "openlineage.endpoint", f"x?k={KEY}", "-w", str(ws.root), code=2)
    )


# -- the user's folder must be the user's -------------------------------------------------------


def _store_with_key(cli: Cli) -> Path:
    cli("secrets", "set", NAME, "--for", "https://marquez.example.com", code=0, stdin=KEY)
    return cli.config / "secrets.json"


def test_a_secrets_folder_others_can_change_is_refused(cli: Cli) -> None:
    store = _store_with_key(cli)
    store.parent.chmod(0o777)
    for args in (["secrets", "list"], ["secrets", "set", "x", "--for", "https://h.example"]):
        line = one_line(cli(*args, code=2, stdin="v"))
        assert f"the folder {store.parent}" in line and "can be changed by other users" in line
        assert f"chmod 700 {store.parent}" in line
    store.parent.chmod(0o700)
    store.chmod(0o620)
    assert f"chmod 600 {store}" in one_line(cli("secrets", "list", code=2))
    store.chmod(0o600)
    assert cli("secrets", "list", code=0).stdout == f"{NAME}\n"


def test_a_secrets_file_of_another_user_is_refused(cli: Cli) -> None:
    store = _store_with_key(cli)
    assert os.geteuid() == 0, "giving a file to another user needs root (the CI runs as root)"
    os.chown(store, 4242, -1)
    line = one_line(cli("secrets", "list", code=2))
    assert f"the secrets file {store} belongs to another user (uid 4242)" in line
    assert f"chown {os.geteuid()} {store}" in line
    os.chown(store.parent, 4242, -1)
    os.chown(store, os.geteuid(), -1)
    line = one_line(cli("secrets", "list", code=2))
    assert f"the folder {store.parent} of the secrets file belongs to another user" in line


def test_the_other_machine_is_not_loopback() -> None:
    """The premise of the namespace tests."""
    assert not ipaddress.ip_address(OTHER_MACHINE).is_loopback


# -- approval on first use, at a terminal --------------------------------------------------------


def test_at_a_terminal_the_owner_is_asked_before_a_stored_key_goes_somewhere_new(
    ws: WorkspaceMaker, tmp_path: Path, server: FakeServer, other: FakeServer
) -> None:
    import pexpect

    ws.segment("000001.jsonl", [run_record("r1")])
    env = cli_env(tmp_path, TERM="dumb")
    (tmp_path / "config").mkdir(mode=0o700)
    secrets = pexpect.spawn(cli_command()[0], [*cli_command()[1:], "secrets", "set", NAME], env=env)
    secrets.expect("value for marquez-prod: ")
    secrets.sendline(KEY)
    secrets.expect("again: ")
    secrets.sendline(KEY)
    secrets.expect(pexpect.EOF)
    ws.settings({"openlineage.url": server.url, "openlineage.apiKey.secretRef": NAME})

    def export(answer: str) -> tuple[int, str]:
        child = pexpect.spawn(
            cli_command()[0],
            [*cli_command()[1:], "export", "-w", str(ws.root)],
            env=env,
            timeout=120,
        )
        child.expect(r"Send it there, now and from now on\? \[y/N\]: ")
        asked = child.before.decode() + child.after.decode()
        child.sendline(answer)
        child.expect(pexpect.EOF)
        child.close()
        return int(child.exitstatus), asked + child.before.decode()

    code, said = export("y")
    assert code == 0, said
    assert (
        f"the secret '{NAME}' to {origin(server)} (openlineage.url, from settings.json)" in said
        and KEY not in said
    )
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {KEY}"}
    assert json.loads((tmp_path / "config" / "key-origins.json").read_text()) == {
        NAME: [origin(server)]
    }
    # Somewhere new again, and the owner says no: nothing goes, the refusal is the usual line.
    ws.settings({"openlineage.url": other.url, "openlineage.apiKey.secretRef": NAME})
    code, said = export("n")
    assert code == 2 and f"secrets allow {NAME} {origin(other)}" in said, said
    assert other.requests == []


# -- a host that keeps keys of its own asks the CLI (secrets check) ------------------------------


def check(
    tmp_path: Path, name: str, url: str, *approved: str, **env: str
) -> tuple[int, dict[str, object] | str]:
    """``secrets check NAME URL --json`` in a real process: its exit code and verdict (or its
    one error line)."""
    import subprocess

    args = [arg for origin in approved for arg in ("--approved", origin)]
    proc = subprocess.run(
        cli_command("secrets", "check", name, url, "--json", *args),
        env=cli_env(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode == 2:
        assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
        return 2, proc.stderr.strip()
    verdict: dict[str, object] = json.loads(proc.stdout)
    assert proc.returncode == (0 if verdict["may"] else 1), proc.stderr
    return proc.returncode, verdict


def export_with(ws: WorkspaceMaker, tmp_path: Path, url: str) -> tuple[int, str]:
    import subprocess

    proc = subprocess.run(
        cli_command("export", "-w", str(ws.root)),
        env=cli_env(tmp_path, OPENLINEAGE_URL=url),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.returncode, proc.stderr


def test_secrets_check_answers_as_the_export_decides(
    ws: WorkspaceMaker, tmp_path: Path, server: FakeServer
) -> None:
    """The editor's question (may this key go there?) gets the export's own answer: the same
    origins in any spelling, the same transport rule; the key's value is never read."""
    import subprocess

    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.apiKey.secretRef": NAME})
    port = server.url.rstrip("/").rsplit(":", 1)[1]
    stored = subprocess.run(
        cli_command("secrets", "set", NAME, "--for", f"http://127.0.0.1:{port}"),
        input=KEY,
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert stored.returncode == 0, stored.stderr
    for spelled in (
        f"http://127.0.0.1:{port}/api/v1",
        f"http://0x7f.1:{port}",
        f"http://[::ffff:127.0.0.1]:{port}",
        f"HTTP://2130706433:{port}/",
    ):
        code, verdict = check(tmp_path, NAME, spelled)
        assert (code, verdict) == (
            0,
            {
                "name": NAME,
                "origin": f"http://127.0.0.1:{port}",
                "may": True,
                "reason": "approved",
                "message": f"the secret '{NAME}' may be sent to http://127.0.0.1:{port}",
            },
        ), spelled
        assert export_with(ws, tmp_path, spelled)[0] == 0, spelled
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {KEY}"}

    code, verdict = check(tmp_path, NAME, f"http://127.0.0.2:{port}")
    assert code == 1 and isinstance(verdict, dict) and verdict["reason"] == "not approved"
    assert verdict["message"] == (
        f"the secret '{NAME}' is not approved for http://127.0.0.2:{port}; if that server "
        f"should have it: openlineage-export secrets allow {NAME} http://127.0.0.2:{port}"
    )
    refused = export_with(ws, tmp_path, f"http://127.0.0.2:{port}")
    assert refused[0] == 2 and f"not approved for http://127.0.0.2:{port}" in refused[1]

    for url, env in (
        (f"http://{OTHER_MACHINE}:{port}", {}),
        (f"http://127.0.0.1:{port}", {"HTTP_PROXY": f"http://{OTHER_MACHINE}:3128"}),
    ):
        code, verdict = check(tmp_path, NAME, url, url, **env)
        assert code == 1 and isinstance(verdict, dict), verdict
        assert verdict["reason"] == "in clear text" and KEY not in str(verdict)
        assert "plain http" in str(verdict["message"])
    code, verdict = check(
        tmp_path,
        NAME,
        f"http://{OTHER_MACHINE}:{port}",
        f"http://{OTHER_MACHINE}:{port}",
        OPENLINEAGE_ALLOW_INSECURE_KEY="true",
    )
    assert code == 0, verdict


def test_secrets_check_takes_the_origins_a_host_keeps_for_its_own_keys(tmp_path: Path) -> None:
    """The VS Code extension keeps its keys (and the servers approved for each) in the editor:
    it hands those origins in, in any spelling, and the CLI decides."""
    code, verdict = check(tmp_path, "editor-key", "https://Marquez.Example.com/api/v1/lineage")
    assert code == 1 and isinstance(verdict, dict) and verdict["reason"] == "not approved"
    code, verdict = check(
        tmp_path,
        "editor-key",
        "https://marquez.example.com/api/v1/lineage",
        "HTTPS://MARQUEZ.example.com.:443",
    )
    assert code == 0 and isinstance(verdict, dict)
    assert verdict["origin"] == "https://marquez.example.com"
    assert check(tmp_path, "editor-key", "marquez:5000")[1] == (
        "error: not a URL: a server is given as scheme://host[:port], e.g. "
        "https://marquez.example.com"
    )
    assert check(tmp_path, "editor-key", "kafka://sasl_plaintext")[0] == 2


def test_a_host_kept_for_a_key_is_never_matched_by_a_non_ascii_spelling(tmp_path: Path) -> None:
    """Attacker B's f09, as a host that keeps its own keys asks: approved for k8s.example.com,
    the Kelvin sign's spelling was "may" (the same origin once lower-cased)."""
    kept = "https://k8s.example.com:57103"
    assert check(tmp_path, "editor-key", "https://k8s.example.com:57103/api", kept)[0] == 0
    for url in ("https://%E2%84%AA8s.example.com:57103/api", "https://\u212a8s.example.com:57103"):
        code, said = check(tmp_path, "editor-key", url, kept)
        assert code == 2 and isinstance(said, str) and said.startswith("error: not a URL"), said


# -- an openlineage.yml in the repository is the workspace's, not the user's --------------------


def _repository_with_a_workspace(tmp_path: Path, server: FakeServer) -> WorkspaceMaker:
    """``repo/`` (a git checkout) holding ``ci/openlineage.yml``, which names ``server`` and
    turns TLS checks off, and the workspace ``repo/analytics/``."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "ci").mkdir()
    (repo / "ci" / "openlineage.yml").write_text(
        f"transport:\n  type: http\n  url: {server.url}\n  verify: false\n"
    )
    ws = WorkspaceMaker(repo / "analytics")
    ws.segment("000001.jsonl", [run_record("r1")])
    return ws


def _run(
    args: list[str], tmp_path: Path, cwd: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_command(*args),
        env=cli_env(tmp_path, **env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "how",
    [
        "committed link in the workspace",
        "repository root",
        "OPENLINEAGE_CONFIG",
        "a link in the home folder",
    ],
)
def test_an_openlineage_yml_in_the_repository_is_never_read_as_the_users(
    tmp_path: Path, server: FakeServer, how: str
) -> None:
    """Issue 30, 2: whoever pushed last wrote it; its url and ``verify: false`` are not the
    user's, so a CI job's key does not go there: not read, a warning naming it, nothing sent."""
    ws = _repository_with_a_workspace(tmp_path, server)
    repo = ws.root.parent
    cwd, env = ws.root, {"OPENLINEAGE_API_KEY": KEY}
    if how == "committed link in the workspace":  # git keeps links as they were pushed
        named = ws.root / "openlineage.yml"
        named.symlink_to("../ci/openlineage.yml")
    elif how == "repository root":  # a CI job runs in the checkout's root
        named = repo / "openlineage.yml"
        named.write_text((repo / "ci" / "openlineage.yml").read_text())
        cwd = repo
    elif how == "OPENLINEAGE_CONFIG":
        named = repo / "ci" / "openlineage.yml"
        env["OPENLINEAGE_CONFIG"] = str(named)
    else:
        named = tmp_path / "home" / ".openlineage" / "openlineage.yml"
        named.parent.mkdir(parents=True)
        named.symlink_to(repo / "ci" / "openlineage.yml")
    got = _run(["settings", "get", "openlineage.url", "-w", str(ws.root)], tmp_path, cwd, **env)
    assert got.returncode == 1 and got.stdout == "", got.stderr
    assert str(named) in got.stderr and "is not read as your openlineage-python" in got.stderr
    assert "(openlineage.yml" not in got.stderr
    done = _run(["export", "-w", str(ws.root)], tmp_path, cwd, **env)
    assert done.returncode == 2, done.stderr
    assert server.requests == []
    lines = done.stderr.splitlines()
    said = f"OPENLINEAGE_CONFIG names {named}, which" if how == "OPENLINEAGE_CONFIG" else named
    assert len(lines) == 2 and lines[0].startswith(f"warning: {said} "), lines
    assert lines[1].startswith("error: ") and KEY not in done.stderr
    # The user's own openlineage.yml (outside the repository) is read, and named.
    own = tmp_path / "mine" / "openlineage.yml"
    own.parent.mkdir()
    own.write_text(f"transport:\n  type: http\n  url: {server.url}\n")
    sent = _run(
        ["export", "-q", "-w", str(ws.root)],
        tmp_path,
        cwd,
        **{**env, "OPENLINEAGE_CONFIG": str(own)},
    )
    assert sent.returncode == 0, sent.stderr
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {KEY}"}
