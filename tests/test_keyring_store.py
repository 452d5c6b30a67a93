"""keyring_store: keyring's own config file (``keyringrc.cfg``: a backend class to import and a
``keyring-path`` to import it from) is read only when its folder is positively the user's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import WorkspaceMaker, cli_env, run_cli

EVIL_MODULE = """\
import os
from pathlib import Path
Path(os.environ["OLX_TEST_MARKER"]).write_text("the pusher's code ran")
from keyring.backend import KeyringBackend
class Ring(KeyringBackend):
    priority = 1
    def get_password(self, service, username): return None
    def set_password(self, service, username, password): pass
    def delete_password(self, service, username): pass
"""


def _keyring_config(home: Path, keyring_path: str) -> None:
    """A ``keyringrc.cfg`` under ``home/.config`` naming a backend in ``home/tools``."""
    config = home / ".config" / "python_keyring"
    config.mkdir(parents=True)
    (config / "keyringrc.cfg").write_text(
        f"[backend]\ndefault-keyring=evilring.Ring\nkeyring-path={keyring_path}\n"
    )
    (home / "tools").mkdir()
    (home / "tools" / "evilring.py").write_text(EVIL_MODULE)


def _export(tmp_path: Path, workspace: Path, cwd: Path, **env: str) -> tuple[int, str]:
    environ = cli_env(tmp_path, OLX_TEST_MARKER=str(tmp_path / "marker"), **env)
    environ.pop("OPENLINEAGE_EXPORT_SECRETS")  # the default: the keyring when there is one
    environ.pop("PYTHON_KEYRING_BACKEND", None)
    done = run_cli(
        "export", "-w", str(workspace), "--progress", "none", env=environ, cwd=cwd, timeout=120
    )
    return done.returncode, done.stderr


def _workspace_asking_for_a_secret(root: Path) -> Path:
    ws = WorkspaceMaker(root / "analytics")
    (ws.root / ".workspace" / "settings.json").write_text(
        '{"openlineage.url": "https://lineage.example.com",'
        ' "openlineage.apiKey.secretRef": "marquez-prod"}'
    )
    return ws.root


@pytest.mark.parametrize("with_git", [True, False], ids=["with-.git", "no-.git"])
def test_a_home_that_is_the_checkout_never_has_its_keyring_config_read(
    tmp_path: Path, with_git: bool
) -> None:
    # A CI job whose HOME is the project's folder: the pusher committed .config/python_keyring.
    home = tmp_path / "project"
    home.mkdir()
    if with_git:
        (home / ".git").mkdir()
    _keyring_config(home, "~/tools")
    workspace = _workspace_asking_for_a_secret(home)
    code, said = _export(
        tmp_path,
        workspace,
        home,
        HOME=str(home),
        OPENLINEAGE_EXPORT_CONFIG_DIR=str(tmp_path / "config"),
    )
    assert not (tmp_path / "marker").exists(), said
    assert code == 2, said  # the secret is in no store
    assert "evilring" not in said


def test_a_relative_xdg_config_home_never_has_keyring_config_read(tmp_path: Path) -> None:
    checkout = tmp_path / "project"
    checkout.mkdir()
    (checkout / ".git").mkdir()
    _keyring_config(checkout, "tools")
    workspace = _workspace_asking_for_a_secret(checkout)
    (tmp_path / "home").mkdir()
    code, said = _export(tmp_path, workspace, checkout, XDG_CONFIG_HOME=".config")
    assert not (tmp_path / "marker").exists(), said
    assert code == 2, said


def test_the_users_own_keyring_config_is_still_read(tmp_path: Path) -> None:
    # The same file in a home folder no checkout holds: the user's choice, honoured.
    home = tmp_path / "home"
    home.mkdir()
    _keyring_config(home, os.fspath(home / "tools"))
    checkout = tmp_path / "project"
    checkout.mkdir()
    (checkout / ".git").mkdir()
    workspace = _workspace_asking_for_a_secret(checkout)
    code, said = _export(tmp_path, workspace, checkout)
    assert (tmp_path / "marker").exists(), said
    assert code == 2, said
    assert "evilring" in said or "Ring" in said


def test_a_secrets_command_from_a_checkout_home_never_reads_its_keyring_config(
    tmp_path: Path,
) -> None:
    # No workspace: `secrets list` from the checkout's root (HOME the checkout, no .git).
    home = tmp_path / "project"
    home.mkdir()
    _keyring_config(home, "~/tools")
    _workspace_asking_for_a_secret(home)
    environ = cli_env(tmp_path, HOME=str(home), OLX_TEST_MARKER=str(tmp_path / "marker"))
    environ.pop("OPENLINEAGE_EXPORT_SECRETS")
    environ.pop("OPENLINEAGE_EXPORT_CONFIG_DIR")
    environ.pop("PYTHON_KEYRING_BACKEND", None)
    done = run_cli("secrets", "list", env=environ, cwd=home, timeout=120)
    assert not (tmp_path / "marker").exists(), done.stderr
    assert "evilring" not in done.stdout + done.stderr
