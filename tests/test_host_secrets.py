"""Keys a host keeps in its own secret storage (``OPENLINEAGE_EXPORT_HOST_SECRETS``,
``host/host_secrets.py``): run as the VS Code extension runs the CLI, in a subprocess.

A key handed over there is a stored key: it goes only to a server its user approved for it,
whatever url the workspace's settings name; the hints about it are worded for the editor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fakeserver import FakeServer, fake_server_fixture  # noqa: F401 - registers fake_server
from helpers import WorkspaceMaker, run_record

from openlineage_export.errors import ConfigError
from openlineage_export.host.host_secrets import HOST_SECRETS_ENV, HostSecrets, held_keys
from openlineage_export.host.secret_files import FileStore

KEY = "olx-host-Kf83hQ2pLw9ZtR4v"


def run(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "XDG_"))}
    env.update(
        OPENLINEAGE_EXPORT_CONFIG_DIR=str(tmp_path / "config"),
        OPENLINEAGE_EXPORT_SECRETS="file",
        OPENLINEAGE_EXPORT_STATE_DIR=str(tmp_path / "state"),
        OPENLINEAGE_EXPORT_HOST="vscode",
        HOME=str(tmp_path / "home"),
        **extra,
    )
    done = subprocess.run(
        [sys.executable, "-m", "openlineage_export", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert KEY not in done.stdout + done.stderr
    return done


def held(name: str, *origins: str, value: str | None = None) -> str:
    entry: dict[str, object] = {"origins": list(origins)}
    if value is not None:
        entry["value"] = value
    return json.dumps({name: entry})


def origin(server: FakeServer) -> str:
    return f"http://{urlsplit(server.url).netloc}"


def test_a_key_of_the_editor_goes_to_the_workspaces_url_once_approved_there(
    tmp_path: Path, ws: WorkspaceMaker, fake_server: FakeServer
) -> None:
    """The url is the workspace's (no OPENLINEAGE_URL): the key goes because its user
    approved that server for it in the editor, not because the editor vouched for the url."""
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.url": fake_server.url, "openlineage.apiKey.secretRef": "m-e2e"})
    done = run(
        tmp_path,
        "export",
        "-w",
        str(ws.root),
        **{HOST_SECRETS_ENV: held("m-e2e", origin(fake_server), value=KEY)},
    )
    assert done.returncode == 0, done.stderr
    assert {r.headers.get("authorization") for r in fake_server.requests} == {f"Bearer {KEY}"}


def test_a_key_of_the_editor_never_goes_to_a_server_not_approved_for_it(
    tmp_path: Path, ws: WorkspaceMaker, fake_server: FakeServer
) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.url": fake_server.url, "openlineage.apiKey.secretRef": "m-e2e"})
    # Approved for another server; the CLI's own store approving this one for a key of the
    # same name changes nothing (it is another key).
    store = FileStore(tmp_path / "config")
    store.set("m-e2e", "the-cli-store-s-own-key")
    store.allow("m-e2e", origin(fake_server))
    done = run(
        tmp_path,
        "export",
        "-w",
        str(ws.root),
        **{HOST_SECRETS_ENV: held("m-e2e", "https://elsewhere.example", value=KEY)},
    )
    assert done.returncode == 2, done.stderr
    assert f"not approved for {origin(fake_server)}" in done.stderr
    assert fake_server.requests == []


def test_the_environments_key_never_goes_to_the_workspaces_url(
    tmp_path: Path, ws: WorkspaceMaker, fake_server: FakeServer
) -> None:
    """OPENLINEAGE_API_KEY in the editor's environment, the url from the workspace, no
    secretRef: refused, nothing sent (issue 43, item 5: the CLI decides, the editor vouches
    for nothing)."""
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.url": fake_server.url})
    done = run(
        tmp_path,
        "export",
        "-w",
        str(ws.root),
        OPENLINEAGE_API_KEY=KEY,
        **{HOST_SECRETS_ENV: "{}"},
    )
    assert done.returncode == 2, done.stderr
    assert "goes only to a server you name" in done.stderr
    assert fake_server.requests == []


@pytest.mark.parametrize("stored", [True, False])
def test_naming_a_key_warns_in_the_editors_words_only_when_the_editor_has_none(
    tmp_path: Path, ws: WorkspaceMaker, stored: bool
) -> None:
    """Issue 44, item 4: the key is in VS Code's secret storage (names handed over, never the
    values: `settings set` sends nothing); the CLI's own store is not where it looks first,
    nor what its hint names."""
    ws.settings({})
    names = held("marquez-local") if stored else held("another-one")
    done = run(
        tmp_path,
        "settings",
        "set",
        "openlineage.apiKey.secretRef",
        "marquez-local",
        "-w",
        str(ws.root),
        **{HOST_SECRETS_ENV: names},
    )
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    if stored:
        assert warnings == [], done.stderr
    else:
        assert warnings == [
            "warning: no key named 'marquez-local' is in VS Code's secret storage yet: add it "
            "in the SECRETS view of OpenLineage (+), or with OpenLineage: Store API Key"
        ]
    assert "secrets set" not in done.stderr


def test_a_key_the_settings_name_and_nobody_stored_is_said_in_the_editors_words(
    tmp_path: Path, ws: WorkspaceMaker, fake_server: FakeServer
) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.url": fake_server.url, "openlineage.apiKey.secretRef": "nobody"})
    done = run(tmp_path, "export", "-w", str(ws.root), **{HOST_SECRETS_ENV: held("other")})
    assert done.returncode == 2, done.stderr
    assert "the secret 'nobody' named by openlineage.apiKey.secretRef is not" in done.stderr
    assert "add it in the SECRETS view of OpenLineage (+)" in done.stderr
    assert "secrets set" not in done.stderr and fake_server.requests == []


def test_secrets_check_takes_the_editors_approvals_for_its_key(
    tmp_path: Path, fake_server: FakeServer
) -> None:
    store = FileStore(tmp_path / "config")
    store.set("m-e2e", "the-cli-store-s-own-key")
    store.allow("m-e2e", origin(fake_server))

    def verdict(names: str) -> dict[str, object]:
        done = run(
            tmp_path,
            "secrets",
            "check",
            "m-e2e",
            fake_server.url,
            "--json",
            **{HOST_SECRETS_ENV: names},
        )
        return dict(json.loads(done.stdout))

    assert verdict(held("m-e2e", "https://elsewhere.example"))["reason"] == "not approved"
    assert verdict(held("m-e2e", origin(fake_server)))["may"] is True
    assert verdict(held("other"))["may"] is True  # not the editor's: the CLI store's approval


@pytest.mark.parametrize(
    "text",
    [
        "not json " + KEY,
        json.dumps([KEY]),
        json.dumps({"m": {"value": 7}}),
        json.dumps({"m": {"value": KEY, "origins": "http://a"}}),
        json.dumps({"sk-live-4f9Kx2Lp8Qw3Zr7Tb6Nc": {"value": KEY}}),
    ],
)
def test_what_a_host_did_not_write_is_refused_without_showing_it(text: str) -> None:
    with pytest.raises(ConfigError) as refused:
        held_keys({HOST_SECRETS_ENV: text})
    assert KEY not in str(refused.value) and "4f9Kx2" not in str(refused.value)


def test_the_editors_keys_are_its_own_to_change(tmp_path: Path) -> None:
    own = FileStore(tmp_path / "config")
    keys = held_keys({HOST_SECRETS_ENV: held("m", value=KEY)})
    assert keys is not None
    store = HostSecrets(keys, own)
    assert store.get("m") == KEY and store.names() == ["m"]
    with pytest.raises(ConfigError, match="SECRETS view"):
        store.set("m", "x")
    with pytest.raises(ConfigError, match="SECRETS view"):
        store.allow("m", "http://a")
    store.set("cli-one", "x")  # another name: the CLI's own store
    assert own.get("cli-one") == "x" and store.names() == ["cli-one", "m"]
