"""Where the ledger and the secrets live: the XDG folders when absolute, else under the home
folder; a relative XDG value or an empty HOME never puts them in the current folder or at
the root."""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

import pytest
from helpers import DEMO, cli_command, cli_env

from openlineage_export.errors import ConfigError, StateError
from openlineage_export.host.userconfig import config_dir
from openlineage_export.state.folder import state_dir

USER_DB_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)


def test_a_relative_xdg_state_home_is_ignored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert state_dir({"XDG_STATE_HOME": "rel/state", "HOME": str(home)}) == (
        home / ".local" / "state" / "openlineage-export"
    )
    assert state_dir({"XDG_STATE_HOME": str(tmp_path / "abs"), "HOME": str(home)}) == (
        tmp_path / "abs" / "openlineage-export"
    )


@pytest.mark.parametrize("home", [None, "", "relative/home", "/"])
def test_an_empty_relative_or_missing_home_falls_back_to_the_user_database(
    home: str | None,
) -> None:
    environ = {} if home is None else {"HOME": home}
    assert state_dir(environ) == USER_DB_HOME / ".local" / "state" / "openlineage-export"
    assert config_dir(environ) == USER_DB_HOME / ".config" / "openlineage-export"


def test_no_home_anywhere_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A uid the user database does not know (a container run with --user 4242)."""

    def unknown(uid: int) -> pwd.struct_passwd:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", unknown)
    with pytest.raises(StateError, match="cannot tell where the ledger goes: HOME is not set"):
        state_dir({"HOME": ""})
    with pytest.raises(ConfigError, match="cannot tell where the secrets are: HOME is not set"):
        config_dir({})


def test_an_export_run_inside_the_workspace_keeps_its_ledger_out_of_it(tmp_path: Path) -> None:
    """XDG_STATE_HOME=rel/state, run from the workspace's folder: the ledger goes under the
    home folder, nothing under the workspace."""
    import shutil

    from fakeserver import FakeServer

    root = tmp_path / "ws"
    shutil.copytree(DEMO, root)
    env = cli_env(tmp_path, XDG_STATE_HOME="rel/state")
    del env["OPENLINEAGE_EXPORT_STATE_DIR"]
    with FakeServer() as server:
        env["OPENLINEAGE_URL"] = server.url
        proc = subprocess.run(
            cli_command("export"), cwd=root, env=env, capture_output=True, text=True, timeout=300
        )
    assert proc.returncode == 0, proc.stderr
    assert not (root / "rel").exists()
    assert (
        tmp_path / "home" / ".local" / "state" / "openlineage-export" / "ledger.sqlite"
    ).is_file()
