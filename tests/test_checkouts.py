"""Whose a file is, end to end (issue 43, 2; attack A, 1, 2, 4, 5, 6): the CI layouts of a real
export, each on real folders with HOME pointed there. A file read with the user's authority
(openlineage.yml, the secrets and approvals, the state) is theirs only when it lies outside every
checkout; unknown means untrusted. Each layout that once sent the CI job's key to the pusher's
server, or believed the pusher's ledger, now sends nothing and says why in one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fakeserver import FakeServer, fake_server_fixture  # noqa: F401 (the fixture)
from helpers import WorkspaceMaker, can_mount, cli_command, run_record

KEY = "ci-job-secret-key-123"


def env_for(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: HOME as given, nothing of OpenLineage, the default folders."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "XDG_"))}
    env |= {"HOME": str(home), "OPENLINEAGE_EXPORT_SECRETS": "file"}
    return env | extra


def run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        cli_command(*args), cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def git_init(path: Path) -> Path:
    """A checkout at ``path`` whose ``.git`` is a real repository (made by git)."""
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=60)
    return path


def yml(folder: Path, server: FakeServer) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "openlineage.yml").write_text(f"transport:\n  type: http\n  url: {server.url}\n")
    return folder / "openlineage.yml"


def workspace(root: Path) -> WorkspaceMaker:
    ws = WorkspaceMaker(root)
    ws.segment("000001.jsonl", [run_record("r1")])
    return ws


def nothing_sent(done: subprocess.CompletedProcess[str], server: FakeServer) -> None:
    assert done.returncode == 2, done.stderr
    assert server.requests == [] and KEY not in done.stderr + done.stdout


@pytest.mark.parametrize("git", [False, True], ids=["no .git (a build context)", ".git"])
def test_the_checkouts_openlineage_yml_in_the_folder_the_export_runs_from(
    tmp_path: Path, fake_server: FakeServer, git: bool
) -> None:
    """Issue 43, 2a: run from the checkout's root on a workspace in a subfolder."""
    root = tmp_path / "build-context"
    workspace(root / "analytics")
    if git:
        (root / ".git").mkdir()
    yml(root, fake_server)
    home = tmp_path / "home"
    done = run(root, env_for(home, OPENLINEAGE_API_KEY=KEY), "export", "-w", "analytics")
    nothing_sent(done, fake_server)
    assert done.stderr.startswith(f"warning: {root / 'openlineage.yml'} lies in "), done.stderr


@pytest.mark.parametrize("git", [False, True], ids=["no .git", ".git"])
def test_home_that_is_the_checkout_makes_its_dot_folders_the_checkouts(
    tmp_path: Path, fake_server: FakeServer, git: bool
) -> None:
    """Issue 43, 2b: HOME=$CI_PROJECT_DIR; its committed ~/.openlineage/openlineage.yml, its
    secrets and its state are the pusher's."""
    home = tmp_path / "builds" / "project"
    workspace(home / "analytics")
    if git:
        (home / ".git").mkdir()
    yml(home / ".openlineage", fake_server)
    env = env_for(home, OPENLINEAGE_API_KEY=KEY)
    done = run(home, env, "export", "-w", "analytics")
    nothing_sent(done, fake_server)
    assert "is not read as your openlineage-python configuration" in done.stderr
    # The state folder (~/.local/state/...) is refused, naming how to name one's own:
    done = run(home, env | {"OPENLINEAGE_URL": fake_server.url}, "export", "-w", "analytics")
    assert done.returncode == 2 and fake_server.requests == [], done.stderr
    assert "set OPENLINEAGE_EXPORT_STATE_DIR to a folder outside every checkout" in done.stderr
    # ... and so are the secrets (~/.config/openlineage-export/):
    done = subprocess.run(
        cli_command("-w", "analytics", "secrets", "set", "prod"),
        cwd=home,
        env=env,
        input="the-real-key\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "is not read as yours: its folder lies in " in done.stderr
    assert not (home / ".config" / "openlineage-export" / "secrets.json").exists()


def test_a_workspace_in_a_submodule_the_outer_checkouts_yml_is_not_the_users(
    tmp_path: Path, fake_server: FakeServer
) -> None:
    """Attack A, 1: the nearest .git (the submodule's file) is no edge."""
    outer = tmp_path / "ci" / "checkout"
    (outer / ".git").mkdir(parents=True)
    workspace(outer / "data" / "analytics")
    (outer / "data" / ".git").write_text("gitdir: ../.git/modules/data\n")
    yml(outer, fake_server)
    done = run(
        outer, env_for(tmp_path / "home", OPENLINEAGE_API_KEY=KEY), "export", "-w", "data/analytics"
    )
    nothing_sent(done, fake_server)


def test_running_from_inside_another_checkout_its_yml_is_not_the_users(
    tmp_path: Path, fake_server: FakeServer
) -> None:
    """Attack A, 4: the current folder's checkout is not the workspace's, but a checkout."""
    home = tmp_path / "home"
    ws = workspace(home / "work" / "analytics")
    (ws.root / ".git").mkdir()
    cloned = home / "src" / "cloned-project"
    (cloned / ".git").mkdir(parents=True)
    yml(cloned, fake_server)
    done = run(cloned, env_for(home, OPENLINEAGE_API_KEY=KEY), "-w", str(ws.root), "export")
    nothing_sent(done, fake_server)


def test_home_inside_a_checkout_is_the_checkouts(tmp_path: Path, fake_server: FakeServer) -> None:
    """Attack A, 5: HOME=$CI_PROJECT_DIR/.home, the checkout with its .git."""
    project = tmp_path / "builds" / "project"
    (project / ".git").mkdir(parents=True)
    workspace(project / "analytics")
    home = project / ".home"
    yml(home / ".openlineage", fake_server)
    done = run(project, env_for(home, OPENLINEAGE_API_KEY=KEY), "export", "-w", "analytics")
    nothing_sent(done, fake_server)


def test_a_checkout_inside_home_leaves_the_users_own_yml_read(
    tmp_path: Path, fake_server: FakeServer
) -> None:
    """The common case still works: ~/.openlineage/openlineage.yml is the user's."""
    home = tmp_path / "home"
    project = git_init(home / "work" / "project")
    workspace(project / "analytics")
    yml(home / ".openlineage", fake_server)
    done = run(project, env_for(home, OPENLINEAGE_API_KEY=KEY), "export", "-q", "-w", "analytics")
    assert done.returncode == 0, done.stderr
    assert {r.headers["authorization"] for r in fake_server.requests} == {f"Bearer {KEY}"}


@pytest.mark.parametrize("planted", ["submodule", "empty .git"])
def test_a_git_the_tree_brought_is_no_edge(
    tmp_path: Path, fake_server: FakeServer, planted: str
) -> None:
    """Attack D, 1: a Docker build context of a recursive clone (`.git` in .dockerignore drops
    only the outer one) keeps the submodule's `gitdir:` file, dangling; a tarball or cache may
    bring an empty `.git`. Neither is a repository: the edge is unknown, and the context's
    openlineage.yml (its url, or a `log_file_path: ~/.bashrc`) is not the user's."""
    context = tmp_path / "app"
    if planted == "submodule":
        (context / "data").mkdir(parents=True)
        (context / "data" / ".git").write_text("gitdir: ../.git/modules/data\n")
        (context / ".gitmodules").write_text('[submodule "data"]\n\tpath = data\n')
        relative = "data/analytics"
    else:
        (context / "analytics").mkdir(parents=True)
        (context / "analytics" / ".git").write_text("")
        relative = "analytics"
    workspace(context / relative)
    yml(context, fake_server)
    home = tmp_path / "home"
    home.mkdir()
    done = run(context, env_for(home, OPENLINEAGE_API_KEY=KEY), "export", "-w", relative)
    nothing_sent(done, fake_server)
    assert done.stderr.startswith(f"warning: {context / 'openlineage.yml'} lies in "), done.stderr
    # ... nor is a file transport it names, in the user's home:
    (context / "openlineage.yml").write_text(
        "transport:\n  type: file\n  log_file_path: ~/.bashrc\n"
    )
    done = run(context, env_for(home, OPENLINEAGE_API_KEY=KEY), "export", "-w", relative)
    assert done.returncode == 2, done.stderr
    assert not (home / ".bashrc").exists()


def test_the_config_folder_in_a_checkout_is_not_the_users(tmp_path: Path) -> None:
    """Attack A, 6: committed approvals are not trusted (a), and `secrets set` never writes
    the key through a committed link (b)."""
    home = tmp_path / "ci"
    (home / ".git").mkdir(parents=True)
    config = home / ".config" / "openlineage-export"
    config.mkdir(parents=True, mode=0o700)
    (config / "key-origins.json").write_text('{"prod": ["http://127.0.0.1:1"]}\n')
    (config / "key-origins.json").chmod(0o600)
    (home / "public").mkdir()
    (config / "secrets.json").symlink_to("../../public/leaked.json")
    done = subprocess.run(
        cli_command("secrets", "set", "prod", "--for", "https://marquez.example.com"),
        cwd=home,
        env=env_for(home),
        input="the-real-key-ABC123\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"its folder lies in the checkout {home} (it has .git)" in done.stderr
    assert "OPENLINEAGE_EXPORT_CONFIG_DIR" in done.stderr
    assert not (home / "public" / "leaked.json").exists()
    # Named outside every checkout, the user's own folder is used; there a link is refused.
    own = tmp_path / "own-config"
    env = env_for(home, OPENLINEAGE_EXPORT_CONFIG_DIR=str(own))
    stored = subprocess.run(
        cli_command("secrets", "set", "prod"),
        cwd=home,
        env=env,
        input="the-real-key-ABC123\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stored.returncode == 0, stored.stderr
    (own / "secrets.json").unlink()
    (own / "secrets.json").symlink_to(tmp_path / "leaked.json")
    again = subprocess.run(
        cli_command("secrets", "set", "prod"),
        cwd=home,
        env=env,
        input="the-real-key-ABC123\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 2 and "it is a link" in again.stderr, again.stderr
    assert not (tmp_path / "leaked.json").exists()


def test_a_state_folder_in_the_checkout_is_refused_before_anything_is_sent(
    tmp_path: Path, fake_server: FakeServer
) -> None:
    """Attack A, 2 (a4, a5): docs/ci/gitlab-ci.yml once kept the state folder in the checkout,
    where a committed link at the lock's name emptied a file outside, and a committed ledger
    hid a run."""
    victim = tmp_path / "outside" / "passwd"
    victim.parent.mkdir()
    victim.write_text("precious\n")
    project = tmp_path / "builds" / "project"
    (project / ".git").mkdir(parents=True)
    workspace(project / "analytics")
    state = project / ".openlineage-export-state"
    (state / "locks").mkdir(parents=True)
    for name in ("ledger.sqlite", *(f"locks/{i:020x}.lock" for i in range(3))):
        (state / name).symlink_to(victim)
    env = env_for(
        tmp_path / "home", OPENLINEAGE_URL=fake_server.url, OPENLINEAGE_EXPORT_STATE_DIR=str(state)
    )
    done = run(project, env, "export", "-w", "analytics")
    assert done.returncode == 2 and fake_server.requests == [], done.stderr
    assert done.stderr.startswith(f"error: the state folder {state} (the ledger, the locks) ")
    assert victim.read_text() == "precious\n"
    done = run(project, env, "-w", "analytics", "status")
    assert done.returncode == 2 and "is not used: it lies in the checkout" in done.stderr


@pytest.mark.parametrize(
    "variable, below",
    [
        ("OPENLINEAGE_EXPORT_CONFIG_DIR", "cfg"),
        ("XDG_CONFIG_HOME", "xdg-config"),
        ("OPENLINEAGE_EXPORT_STATE_DIR", "state"),
        ("XDG_STATE_HOME", "xdg-state"),
    ],
)
def test_the_users_folders_named_into_a_checkout_are_not_the_users(
    tmp_path: Path, fake_server: FakeServer, variable: str, below: str
) -> None:
    """Whatever names the user's folder (the environment too), it must lie outside every
    checkout: the environment says where to look, not whose a file is."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    ws = workspace(project / "analytics")
    if "CONFIG" in variable:  # the secrets are read for a secretRef; the state for any export
        ws.settings({"openlineage.apiKey.secretRef": "prod"})
    env = env_for(tmp_path / "home", OPENLINEAGE_URL=fake_server.url)
    env[variable] = str(project / below)
    done = run(project, env, "export", "-w", "analytics")
    assert done.returncode == 2 and fake_server.requests == [], done.stderr
    assert f"lies in the checkout {project} (it has .git)" in done.stderr, done.stderr


def in_a_container(root: Path, command: list[str]) -> list[str]:
    """``command`` run chrooted into ``root``, in a private mount namespace where the system's
    folders, this Python and this checkout are bound in at their own paths (a container whose
    ``/`` is a checkout); ``root``'s own files are the container's. Needs root (can_mount)."""
    binds = sorted(
        {
            Path("/usr"),
            Path("/etc"),
            Path("/dev"),
            Path("/proc"),
            Path(os.path.realpath(sys.base_prefix)),
            Path(__file__).resolve().parents[1],
        }
    )
    script = "".join(
        f'mkdir -p "$0{b}" && mount --rbind {b} "$0{b}" && '
        for b in binds
        if b.parts[1] != "usr" or b == Path("/usr")
    )
    for link in ("bin", "lib", "lib64"):
        if os.path.islink(f"/{link}"):
            (root / link).symlink_to(os.readlink(f"/{link}").lstrip("/"))
    chroot = shutil.which("chroot", path="/usr/sbin:/usr/bin:/sbin:/bin") or "chroot"
    return ["unshare", "-m", "sh", "-c", script + f'exec {chroot} "$0" "$@"', str(root), *command]


@pytest.mark.parametrize("ws_at", ["analytics", ""], ids=["/analytics", "/"])
def test_a_container_whose_root_is_the_checkout_with_home_the_root(
    tmp_path: Path, fake_server: FakeServer, ws_at: str
) -> None:
    """Attack D, 2: `COPY . /`, run under a uid with no passwd entry (HOME=/): the committed
    /.openlineage/openlineage.yml is where "~" leads, and it is the checkout's."""
    if (why := can_mount()) is not None:
        pytest.skip(why)
    root = tmp_path / "container"
    workspace(root / ws_at)
    yml(root / ".openlineage", fake_server)
    (root / "tmp").mkdir()
    env = {
        "HOME": "/",
        "PATH": "/usr/bin:/bin",
        "OPENLINEAGE_API_KEY": KEY,
        "OPENLINEAGE_EXPORT_SECRETS": "file",
        "OPENLINEAGE_EXPORT_STATE_DIR": "/tmp/state",
        "OPENLINEAGE_EXPORT_CONFIG_DIR": "/tmp/config",
    }
    done = subprocess.run(
        in_a_container(
            root,
            [
                "sh",
                "-c",
                'cd / && exec "$@"',
                "-",
                *cli_command("export", "-w", f"/{ws_at}", "--progress", "none"),
            ],
        ),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    nothing_sent(done, fake_server)


def test_a_relative_home_is_no_users_folder(tmp_path: Path, fake_server: FakeServer) -> None:
    """Attack D, 3: HOME=. in a CI step, run from the root of a checkout without .git: the
    checkout's ./.openlineage/openlineage.yml is not the user's."""
    context = tmp_path / "app"
    workspace(context / "analytics")
    yml(context / ".openlineage", fake_server)
    env = env_for(
        tmp_path / "home",
        OPENLINEAGE_API_KEY=KEY,
        OPENLINEAGE_EXPORT_STATE_DIR=str(tmp_path / "state"),
        OPENLINEAGE_EXPORT_CONFIG_DIR=str(tmp_path / "config"),
    )
    done = run(context, env | {"HOME": "."}, "export", "-w", "analytics")
    nothing_sent(done, fake_server)
    # Named through "~" (expanded from HOME as it is), it is the checkout's too:
    done = run(
        context,
        env | {"HOME": ".", "OPENLINEAGE_CONFIG": "~/.openlineage/openlineage.yml"},
        "export",
        "-w",
        "analytics",
    )
    nothing_sent(done, fake_server)
    assert "is not read as your openlineage-python configuration" in done.stderr
