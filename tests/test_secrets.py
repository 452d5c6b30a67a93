"""Secrets: a private file store, the keyring store, the choice between them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import keyring.errors
import pytest
from helpers import cli_command
from keyring.backends import fail

from openlineage_export.errors import ConfigError
from openlineage_export.host.keyring_store import KeyringStore, is_usable_keyring
from openlineage_export.host.secret_files import FileStore
from openlineage_export.host.secrets import LazyStore, default_store
from openlineage_export.host.userconfig import config_dir

SECRET = "sk-live-4f9a1c2e7b"
OTHER = "pat-0b8e3d7a55"


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o000, 0o277])
def any_umask(request: pytest.FixtureRequest) -> Iterator[None]:
    """A umask taking nothing away, then one taking too much: the modes must come from the code."""
    old = os.umask(request.param)
    try:
        yield
    finally:
        os.umask(old)


class MemoryKeyring:
    """A keyring that keeps passwords in a dict: a stand-in for a desktop keyring.

    Not a KeyringBackend subclass: that would register it with keyring's discovery and make
    it the "system keyring" of every later test in the process.
    """

    priority = 5

    def __init__(self) -> None:
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.passwords.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError("not found")


class EmptyChainer:
    """Shaped like keyring's chainer when it found nothing to chain."""

    __module__ = "keyring.backends.chainer"
    priority = 10
    backends: tuple[object, ...] = ()


class LockedKeyring(MemoryKeyring):
    """A keyring that refuses to store, and (badly) repeats the password in its error."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError(f"locked, cannot store {password}")


FAILING = fail.Keyring()  # type: ignore[no-untyped-call]  # what a headless Linux gets


# --- FileStore ------------------------------------------------------------------------------


def test_file_store_round_trip(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "cfg")
    assert store.get("marquez-prod") is None
    store.set("marquez-prod", SECRET)
    store.set("datahub", OTHER)
    assert FileStore(tmp_path / "cfg").get("marquez-prod") == SECRET, "read back from disk"
    store.set("marquez-prod", OTHER)
    assert store.get("marquez-prod") == OTHER
    assert json.loads((tmp_path / "cfg" / "secrets.json").read_text()) == {
        "marquez-prod": OTHER,
        "datahub": OTHER,
    }


def test_file_store_is_private_whatever_the_umask(tmp_path: Path, any_umask: None) -> None:
    folder = tmp_path / "config" / "openlineage-export"
    FileStore(folder).set("marquez-prod", SECRET)
    assert mode_of(folder) == 0o700
    assert mode_of(folder / "secrets.json") == 0o600
    assert sorted(os.listdir(folder)) == ["secrets.json", "secrets.json.lock"], (
        "no temporary file left behind"
    )
    assert mode_of(folder / "secrets.json.lock") & 0o077 == 0


def test_file_store_refuses_a_file_others_can_read(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.set("marquez-prod", SECRET)
    store.path.chmod(0o644)
    for call in (
        lambda: store.get("marquez-prod"),
        store.names,
        lambda: store.set("other", OTHER),
        lambda: store.delete("marquez-prod"),
    ):
        with pytest.raises(ConfigError) as caught:
            call()
        assert f"chmod 600 {store.path}" in str(caught.value)
        assert SECRET not in str(caught.value)
    assert json.loads(store.path.read_text()) == {"marquez-prod": SECRET}, "left untouched"


def test_file_store_names_lists_names_only(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.set("zeta", SECRET)
    store.set("alpha", OTHER)
    assert store.names() == ["alpha", "zeta"]
    assert SECRET not in repr(store) and OTHER not in repr(store)
    assert str(tmp_path / "secrets.json") in store.description


def test_file_store_delete(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.set("a", SECRET)
    store.set("b", OTHER)
    assert store.delete("a") is True
    assert store.delete("a") is False
    assert store.get("a") is None
    assert store.names() == ["b"]
    assert FileStore(tmp_path / "empty").delete("a") is False
    assert not (tmp_path / "empty").exists(), "deleting nothing creates nothing"


@pytest.mark.parametrize("name", ["", "my key", "a/b", "a" * 129, "caf\u00e9", "x\n"])
def test_invalid_names_are_refused(tmp_path: Path, name: str) -> None:
    store = FileStore(tmp_path)
    for call in (
        lambda: store.set(name, SECRET),
        lambda: store.get(name),
        lambda: store.delete(name),
    ):
        with pytest.raises(ConfigError, match="1 to 128 letters, digits"):
            call()
    assert not store.path.exists()


@pytest.mark.parametrize("value", ["", "two\nlines"])
def test_empty_or_multi_line_values_are_refused_without_echo(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        FileStore(tmp_path).set("a", value)
    assert "two" not in str(caught.value)


def test_a_damaged_file_is_reported_without_its_content(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.set("a", SECRET)
    store.path.write_text('{"a": "' + SECRET + '",\n  oops}')
    with pytest.raises(ConfigError) as caught:
        store.get("a")
    assert "line 2" in str(caught.value)
    assert SECRET not in str(caught.value)
    store.path.write_text('{"a": ["' + SECRET + '"]}')
    with pytest.raises(ConfigError, match="damaged") as caught:
        store.get("a")
    assert SECRET not in str(caught.value)


# --- KeyringStore ---------------------------------------------------------------------------


def test_keyring_store_keeps_values_in_the_keyring_and_only_names_in_the_index(
    tmp_path: Path,
) -> None:
    backend = MemoryKeyring()
    store = KeyringStore(tmp_path / "cfg", backend)
    store.set("marquez-prod", SECRET)
    store.set("datahub", OTHER)
    assert backend.passwords[("openlineage-export", "marquez-prod")] == SECRET
    assert store.get("marquez-prod") == SECRET
    assert store.names() == ["datahub", "marquez-prod"]
    index = store.index_path.read_text()
    assert SECRET not in index and OTHER not in index
    assert SECRET not in repr(store)
    assert store.delete("datahub") is True
    assert store.delete("datahub") is False
    assert store.names() == ["marquez-prod"]
    assert store.get("datahub") is None


def test_a_keyring_error_never_repeats_the_secret(tmp_path: Path) -> None:
    store = KeyringStore(tmp_path, LockedKeyring())
    with pytest.raises(ConfigError) as caught:
        store.set("marquez-prod", SECRET)
    assert "could not store 'marquez-prod'" in str(caught.value)
    assert SECRET not in str(caught.value)
    assert store.names() == [], "a failed store is not indexed"


# --- choosing a store -----------------------------------------------------------------------


def test_config_dir_follows_the_environment(tmp_path: Path) -> None:
    assert (
        config_dir(
            {"OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "x"), "XDG_CONFIG_HOME": "/elsewhere"}
        )
        == tmp_path / "x"
    )
    assert config_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "openlineage-export"
    assert config_dir({"XDG_CONFIG_HOME": "relative", "HOME": str(tmp_path)}) == (
        tmp_path / ".config" / "openlineage-export"
    )


HEADLESS_PROBE = """
import os, keyring
from openlineage_export.host.keyring_store import is_usable_keyring
from openlineage_export.host.secrets import default_store
print(is_usable_keyring(keyring.get_keyring()), default_store(os.environ))
"""


def test_default_store_is_the_file_on_this_headless_machine(tmp_path: Path) -> None:
    # A fresh interpreter: keyring's discovery runs as it would for the command, untouched by
    # whatever this test process has imported, and a hang fails the test instead of the suite.
    environ = {k: v for k, v in os.environ.items() if k != "OPENLINEAGE_EXPORT_SECRETS"}
    environ["OPENLINEAGE_EXPORT_CONFIG_DIR"] = str(tmp_path)
    probe = subprocess.run(
        [sys.executable, "-c", HEADLESS_PROBE],
        env=environ,
        timeout=60,
        capture_output=True,
        text=True,
        check=True,
    )
    usable, store = probe.stdout.split(" ", 1)
    if usable == "True":
        pytest.skip("this machine has a real keyring; the choice is tested with given backends")
    assert store.strip() == f"FileStore({str(tmp_path / 'secrets.json')!r})"


def test_only_a_real_keyring_is_usable() -> None:
    assert is_usable_keyring(MemoryKeyring())
    assert not is_usable_keyring(FAILING)
    assert not is_usable_keyring(EmptyChainer())  # type: ignore[arg-type]


def test_default_store_takes_a_real_keyring_and_never_a_failing_one(tmp_path: Path) -> None:
    environ = {"OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path)}
    assert isinstance(default_store(environ, backend=FAILING), FileStore)
    assert isinstance(default_store(environ, backend=MemoryKeyring()), KeyringStore)


def test_default_store_can_be_forced(tmp_path: Path) -> None:
    forced = {"OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path)}
    store = default_store({**forced, "OPENLINEAGE_EXPORT_SECRETS": "file"}, backend=MemoryKeyring())
    assert isinstance(store, FileStore)
    store = default_store(
        {**forced, "OPENLINEAGE_EXPORT_SECRETS": "keyring"}, backend=MemoryKeyring()
    )
    assert isinstance(store, KeyringStore)
    with pytest.raises(ConfigError, match="no usable system keyring"):
        default_store({**forced, "OPENLINEAGE_EXPORT_SECRETS": "keyring"}, backend=FAILING)
    with pytest.raises(ConfigError, match="must be 'file' or 'keyring'"):
        default_store({**forced, "OPENLINEAGE_EXPORT_SECRETS": "vault"})


def test_the_lazy_store_finds_the_store_only_when_a_secret_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found: list[object] = []
    real = default_store
    monkeypatch.setattr(
        "openlineage_export.host.secrets.default_store",
        lambda environ, **given: found.append(environ) or real(environ, **given),
    )
    environ = {"OPENLINEAGE_EXPORT_SECRETS": "file", "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path)}
    lazy = LazyStore(environ)
    assert found == []
    lazy.set("marquez-prod", SECRET)
    assert lazy.get("marquez-prod") == SECRET and lazy.names() == ["marquez-prod"]
    assert lazy.description == f"the file {tmp_path / 'secrets.json'}"
    assert lazy.delete("marquez-prod") and found == [environ]


class BrokenKeyring(MemoryKeyring):
    """A backend whose library fails with something that is no KeyringError, quoting what it
    was handed or read (as D-Bus and secret-service libraries do)."""

    def get_password(self, service: str, username: str) -> str | None:
        raise UnicodeDecodeError("utf-8", SECRET.encode(), 0, 1, f"bad item {SECRET}")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise ValueError(f"cannot encode {password!r} for the bus")

    def delete_password(self, service: str, username: str) -> None:
        raise RuntimeError(f"bus disconnected while deleting {SECRET}")


@pytest.mark.parametrize(
    ("doing", "call"),
    [
        ("read 'marquez-prod'", lambda store: store.get("marquez-prod")),
        ("store 'marquez-prod'", lambda store: store.set("marquez-prod", SECRET)),
        ("delete 'marquez-prod'", lambda store: store.delete("marquez-prod")),
    ],
)
def test_any_backend_failure_is_one_message_showing_only_its_type(
    tmp_path: Path, doing: str, call: Any
) -> None:
    store = KeyringStore(tmp_path, BrokenKeyring())
    with pytest.raises(ConfigError) as caught:
        call(store)
    kind = {"read": "UnicodeDecodeError", "store": "ValueError", "delete": "RuntimeError"}
    assert str(caught.value) == (
        f"the system keyring (BrokenKeyring) could not {doing}: it "
        f"failed with {kind[doing.split()[0]]}"
    )
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_keyring_error_that_holds_the_value_shows_only_its_type(tmp_path: Path) -> None:
    store = KeyringStore(tmp_path, LockedKeyring())
    with pytest.raises(
        ConfigError,
        match=r"could not store 'marquez-prod': it failed with "
        r"PasswordSetError$",
    ):
        store.set("marquez-prod", SECRET)


def test_the_cli_shows_a_broken_backend_as_one_line(tmp_path: Path) -> None:
    # Through keyring's own discovery: PYTHON_KEYRING_BACKEND names the broken backend.
    module = tmp_path / "broken_backend.py"
    module.write_text(
        "from keyring.backend import KeyringBackend\n"
        "class Keyring(KeyringBackend):\n"
        "    priority = 9\n"
        "    def get_password(self, service, username):\n"
        "        raise ValueError('leaked ' + service)\n"
        "    def set_password(self, service, username, password):\n"
        "        raise ValueError('cannot store ' + password)\n"
        "    def delete_password(self, service, username):\n"
        "        raise ValueError('no')\n"
    )
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE")}
    environ.update(
        {
            "PYTHON_KEYRING_BACKEND": "broken_backend.Keyring",
            "PYTHONPATH": f"{tmp_path}{os.pathsep}{environ.get('PYTHONPATH', '')}",
            "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "cfg"),
            "OPENLINEAGE_EXPORT_SECRETS": "keyring",
        }
    )
    done = subprocess.run(
        cli_command("secrets", "set", "marquez-prod"),
        input=SECRET,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "error: the system keyring (broken backend Keyring) could not store 'marquez-prod': "
        "it failed with ValueError\n"
    )
    assert SECRET not in done.stdout + done.stderr


# --- writers at once ------------------------------------------------------------------------

WRITERS = 12


def _writers_env(tmp_path: Path, backend: str) -> dict[str, str]:
    from helpers import ROOT, cli_env

    env = cli_env(tmp_path, OPENLINEAGE_EXPORT_SECRETS=backend)
    if backend == "keyring":
        env.update(
            PYTHON_KEYRING_BACKEND="support.dir_keyring.DirKeyring",
            OLX_TEST_KEYRING_DIR=str(tmp_path / "keyring"),
            PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")]).rstrip(
                os.pathsep
            ),
        )
    return env


def _all_at_once(commands: list[list[str]], env: dict[str, str]) -> None:
    """Start every command, each held at its read of stdin (past its start-up, before it
    touches the store), then let them all go at once; each must end well."""
    procs = [
        subprocess.Popen(
            command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for command in commands
    ]
    for n, proc in enumerate(procs):
        assert proc.stdin is not None
        proc.stdin.write(f"value-{n}".encode())
        proc.stdin.flush()
    for proc in procs:  # the gate: each reads its value to the end, then writes
        assert proc.stdin is not None
        proc.stdin.close()
    codes = [proc.wait(timeout=120) for proc in procs]
    assert codes == [0] * len(procs), [proc.stderr.read() for proc in procs if proc.stderr]


def _listed(env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        cli_command("secrets", "list", "--json"),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    listed: dict[str, Any] = json.loads(proc.stdout)
    return listed


@pytest.mark.parametrize("backend", ["file", "keyring"])
def test_twelve_secrets_set_at_once_all_survive(tmp_path: Path, backend: str) -> None:
    """Issue 30 (6): twelve ``secrets set`` at once all exited 0, and 1 to 8 of the 12 were
    kept (no lock around the read-modify-write of the store, or of the keyring's index)."""

    env = _writers_env(tmp_path, backend)
    _all_at_once(
        [
            cli_command("secrets", "set", f"key-{n}", "--for", f"https://h{n}.example")
            for n in range(WRITERS)
        ],
        env,
    )
    listed = _listed(env)
    assert listed["backend"] == backend
    names = [f"key-{n}" for n in range(WRITERS)]
    assert listed["names"] == sorted(names)
    assert listed["origins"] == {f"key-{n}": [f"https://h{n}.example"] for n in range(WRITERS)}
    if backend == "file":
        assert json.loads((tmp_path / "config" / "secrets.json").read_text()) == {
            f"key-{n}": f"value-{n}" for n in range(WRITERS)
        }


def test_twelve_approvals_of_one_secret_at_once_all_survive(tmp_path: Path) -> None:
    """Issue 30 (6): the same for key-origins.json: twelve servers approved for one secret at
    once (``secrets set NAME --for ORIGIN``, then ``secrets allow`` twelve times together)."""

    env = _writers_env(tmp_path, "file")
    _all_at_once(
        [
            cli_command("secrets", "set", "shared", "--for", f"https://a{n}.example")
            for n in range(WRITERS)
        ],
        env,
    )
    allows = [
        subprocess.Popen(
            cli_command("secrets", "allow", "shared", f"kafka://b{n}.example:9093"),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for n in range(WRITERS)
    ]
    assert [proc.wait(timeout=120) for proc in allows] == [0] * WRITERS
    assert _listed(env)["origins"] == {
        "shared": sorted(
            [f"https://a{n}.example" for n in range(WRITERS)]
            + [f"kafka://b{n}.example:9093" for n in range(WRITERS)]
        )
    }


def test_a_change_waits_for_the_lock_and_a_stuck_holder_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    from openlineage_export.host import secret_files

    store = FileStore(tmp_path / "cfg")
    store.set("a", SECRET)
    with open(tmp_path / "cfg" / "secrets.json.lock") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        monkeypatch.setattr(secret_files, "LOCK_WAIT", 0.2)
        with pytest.raises(ConfigError) as caught:
            store.set("b", OTHER)
    assert str(caught.value) == (
        f"the secrets file {store.path} is being changed by another process, which has held its "
        f"lock ({store.path}.lock) for 0.2 s; nothing was changed: try again once it ends"
    )
    assert store.names() == ["a"]
    store.set("b", OTHER)  # let go: it goes through
    assert store.names() == ["a", "b"]


def test_a_lock_file_that_is_a_link_is_never_followed(tmp_path: Path) -> None:
    folder = tmp_path / "cfg"
    store = FileStore(folder)
    store.set("a", SECRET)
    (folder / "secrets.json.lock").unlink()
    target = tmp_path / "elsewhere"
    (folder / "secrets.json.lock").symlink_to(target)
    with pytest.raises(
        ConfigError,
        match=r"^the lock file of the secrets file .*secrets\.json\.lock is not used: it is a link",
    ):
        store.set("b", OTHER)
    assert not target.exists() and store.names() == ["a"]


def _secrets_cli(
    cwd: Path, env: dict[str, str], *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        cli_command("secrets", *args),
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_with_no_workspace_the_current_folder_of_a_checkout_without_git_is_not_the_users(
    tmp_path: Path,
) -> None:
    """Attack D, 4: a restored cache (no .git) with HOME=$CI_PROJECT_DIR, a CI step at its
    root (no workspace there: it is in analytics/). `secrets set` must not write the job's key
    into the checkout, nor take the approvals the tree brought as the user's; `secrets check`
    must not say yes where an export of the workspace says no."""
    app = tmp_path / "builds" / "project"
    (app / "analytics" / ".workspace").mkdir(parents=True)
    config = app / ".config" / "openlineage-export"
    config.mkdir(parents=True, mode=0o700)
    (config / "key-origins.json").write_text('{"prod": ["http://127.0.0.1:57999"]}\n')
    (config / "key-origins.json").chmod(0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "XDG_"))}
    env |= {"HOME": str(app), "OPENLINEAGE_EXPORT_SECRETS": "file"}
    done = _secrets_cli(
        app, env, "set", "prod", "--for", "https://marquez.example.com", stdin="ci-job-key\n"
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "the current folder (no workspace named with -w" in done.stderr
    assert not (config / "secrets.json").exists()
    assert json.loads((config / "key-origins.json").read_text()) == {
        "prod": ["http://127.0.0.1:57999"]
    }
    for args in (("check", "prod", "http://127.0.0.1:57999"), ("allow", "prod", "https://x.io")):
        done = _secrets_cli(app, env, *args)
        assert done.returncode == 2 and "may be sent" not in done.stdout, done.stdout
        assert "is not read as yours" in done.stderr, done.stderr
    # The verdict is the export's: named with -w, the same folder is refused the same way.
    with_w = subprocess.run(
        cli_command("-w", "analytics", "secrets", "check", "prod", "http://127.0.0.1:57999"),
        cwd=app,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert with_w.returncode == 2 and "is not read as yours" in with_w.stderr, with_w.stderr
    # A folder of the user's own, named outside every checkout, is used from there:
    own = tmp_path / "own-config"
    named = env | {"OPENLINEAGE_EXPORT_CONFIG_DIR": str(own)}
    done = _secrets_cli(
        app, named, "set", "prod", "--for", "https://marquez.example.com", stdin="ci-job-key\n"
    )
    assert done.returncode == 0, done.stderr
    assert (own / "secrets.json").exists()
    done = _secrets_cli(app, named, "check", "prod", "http://127.0.0.1:57999")
    assert done.returncode == 1, done.stdout


def test_with_no_workspace_in_a_repository_the_users_home_is_theirs(tmp_path: Path) -> None:
    """The common case: run from a git checkout (no workspace there), the home's config folder
    is the user's."""
    home = tmp_path / "home"
    project = home / "work" / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "XDG_"))}
    env |= {"HOME": str(home), "OPENLINEAGE_EXPORT_SECRETS": "file"}
    done = _secrets_cli(
        project, env, "set", "prod", "--for", "https://marquez.example.com", stdin="key\n"
    )
    assert done.returncode == 0, done.stderr
    assert (home / ".config" / "openlineage-export" / "secrets.json").exists()
    done = _secrets_cli(project, env, "check", "prod", "https://marquez.example.com/api")
    assert done.returncode == 0, done.stdout
