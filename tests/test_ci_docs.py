"""The CI files docs/ci.md offers (docs/ci/github-actions.yml, docs/ci/gitlab-ci.yml), as a
user copies them: each passes its CI system's own checks (actionlint, the schemas), uses only
commands and options the CLI has, keeps the ledger under a key naming the workspace and the
server, and, run as the CI runs it, exports on each push only what is new."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakeserver import Answer, FakeServer, Recorded, refused_port
from helpers import ROOT, WorkspaceMaker, run_record
from test_docs import check

from openlineage_export.state.lock import ExportLock

GITHUB = ROOT / "docs" / "ci" / "github-actions.yml"
GITLAB = ROOT / "docs" / "ci" / "gitlab-ci.yml"
CI_MD = ROOT / "docs" / "ci.md"
ACTIONLINT = Path(
    os.environ.get("ACTIONLINT") or Path.home() / ".cache/openlineage-export/bin/actionlint"
)
"""Where scripts/test.sh installs it (go install, pinned); read before the tests' own HOME."""


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), path
    return data


def github_steps() -> list[dict[str, Any]]:
    steps = load(GITHUB)["jobs"]["export"]["steps"]
    assert isinstance(steps, list)
    return steps


def github_step(*, uses: str | None = None, id: str | None = None) -> dict[str, Any]:
    (step,) = [
        s
        for s in github_steps()
        if (uses is None or s.get("uses", "").startswith(uses))
        and (id is None or s.get("id") == id)
    ]
    return step


def gitlab_job() -> dict[str, Any]:
    job = load(GITLAB)["openlineage-export"]
    assert isinstance(job, dict)
    return job


# ------------------------------------------------------------------ the CI systems' own checks


def actionlint(workflow: Path, *options: str) -> list[dict[str, Any]]:
    """What actionlint finds in ``workflow``, one dict per error (its JSON format)."""
    if not ACTIONLINT.is_file():
        pytest.skip(
            f"actionlint is not installed at {ACTIONLINT} (scripts/test.sh installs it with "
            "go install; in CI, a skip fails the run)"
        )
    done = subprocess.run(
        [str(ACTIONLINT), "-no-color", "-format", "{{json .}}", *options, str(workflow)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: errors found
    errors = json.loads(done.stdout or "[]")
    assert (done.returncode == 1) == bool(errors), done.stdout + done.stderr
    return list(errors)


# Without shellcheck and pyflakes, so that the verdict is the same on every machine; the run:
# scripts get ShellCheck in the test after this one.
PLAIN = ("-shellcheck=", "-pyflakes=")


def test_the_github_workflow_passes_actionlint() -> None:
    assert actionlint(GITHUB, *PLAIN) == []


def broken_copy(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    """The workflow with ``old`` (found once) changed to ``new``, and the line it is on."""
    text = GITHUB.read_text()
    assert text.count(old) == 1, old
    copy = tmp_path / ".github" / "workflows" / "broken.yml"
    copy.parent.mkdir(parents=True)
    copy.write_text(text.replace(old, new))
    return copy, text[: text.index(old)].count("\n") + 1


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the save step reads an output of a step that does not exist
        ("steps.ledger.outputs.cache-primary-key", "steps.ledgr.outputs.cache-primary-key"),
        # an input actions/cache/restore does not have
        ("restore-keys: |", "restore-key: |"),
        # a context that does not exist
        ("${{ secrets.OPENLINEAGE_API_KEY }}", "${{ secret.OPENLINEAGE_API_KEY }}"),
    ],
    ids=["step-output", "action-input", "context"],
)
def test_actionlint_finds_a_mistake_in_a_copy_of_the_workflow(
    tmp_path: Path, old: str, new: str
) -> None:
    copy, line = broken_copy(tmp_path, old, new)
    errors = actionlint(copy, *PLAIN)
    assert [e["line"] for e in errors] == [line], errors


def test_the_workflow_run_scripts_pass_shellcheck_through_actionlint(tmp_path: Path) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (scripts/test.sh installs Debian's)")
    assert actionlint(GITHUB, f"-shellcheck={shellcheck}", "-pyflakes=") == []
    # ... and ShellCheck does look at them: an unquoted variable is found.
    copy, line = broken_copy(tmp_path, '-w "$WORKSPACE"', "-w $WORKSPACE")
    errors = actionlint(copy, f"-shellcheck={shellcheck}", "-pyflakes=")
    lines = GITHUB.read_text().splitlines()[:line]
    run = max(n for n, text in enumerate(lines, 1) if text.strip().startswith("run:"))
    assert [(e["kind"], e["line"]) for e in errors] == [("shellcheck", run)], errors


def check_schema(schema: str, path: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema's verdict on ``path`` against its vendored schema ``schema``, with no
    way out to the network: every request goes to a loopback port that refuses it."""
    with refused_port() as port:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path / "home"),
            "https_proxy": f"http://127.0.0.1:{port}",
            "http_proxy": f"http://127.0.0.1:{port}",
            "HTTPS_PROXY": f"http://127.0.0.1:{port}",
            "HTTP_PROXY": f"http://127.0.0.1:{port}",
        }
        return subprocess.run(
            [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )


SCHEMAS = {"gitlab": ("vendor.gitlab-ci", GITLAB), "github": ("vendor.github-workflows", GITHUB)}
BREAKS = {
    # cache:when is on_success, on_failure or always
    "gitlab": ("    when: always", "    when: sometimes"),
    # a job needs runs-on
    "github": ("    runs-on: ubuntu-latest\n", ""),
}


@pytest.mark.parametrize("which", ["gitlab", "github"])
def test_each_file_passes_its_ci_systems_schema_offline(which: str, tmp_path: Path) -> None:
    schema, path = SCHEMAS[which]
    done = check_schema(schema, path, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # ... and the check can fail: a copy with a mistake the schema forbids.
    old, new = BREAKS[which]
    text = path.read_text()
    assert text.count(old) == 1
    broken = tmp_path / path.name
    broken.write_text(text.replace(old, new))
    done = check_schema(schema, broken, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr


# --------------------------------------------------------------------- what the files say


def shell_lines(path: Path) -> list[str]:
    """Every shell line the file's jobs run: GitHub's run: scripts, GitLab's script: lines."""
    if path == GITHUB:
        scripts = [s["run"] for s in github_steps() if "run" in s]
    else:
        job = gitlab_job()
        scripts = [*job.get("before_script", []), *job["script"], *job.get("after_script", [])]
    return [line for script in scripts for line in script.splitlines()]


def commands_run(path: Path) -> list[list[str]]:
    """Each ``openlineage-export ...`` the file's jobs run (the program in command position),
    as words, up to where the shell takes over."""
    found = []
    for line in shell_lines(path):
        for match in re.finditer(
            r"(?:^|[;&|(]|\|\||&&|\$\()\s*openlineage-export(?=\s|$)([^\n#|;&)>]*)", line
        ):
            found.append(shlex.split(match.group(1)))
    return found


@pytest.mark.parametrize("path", [GITHUB, GITLAB], ids=lambda p: p.name)
def test_every_command_the_files_run_is_one_the_cli_has(path: Path) -> None:
    commands = commands_run(path)
    assert commands == [["export", "-w", "$WORKSPACE", "--json"]], commands
    assert check(["export", "--bogus"]) is not None, "the check finds what is not there"
    wrong = [problem for words in commands if (problem := check(words)) is not None]
    assert not wrong, wrong


def test_the_github_cache_key_names_the_workspace_and_the_server() -> None:
    names = ("${{ env.WORKSPACE }}", "${{ env.OPENLINEAGE_URL }}")
    restore = github_step(uses="actions/cache/restore@", id="ledger")
    key, prefix = restore["with"]["key"], restore["with"]["restore-keys"].strip()
    assert all(name in key and name in prefix for name in names), (key, prefix)
    assert key.startswith(prefix) and "github.run_id" in key.removeprefix(prefix), (key, prefix)
    save = github_step(uses="actions/cache/save@")
    assert save["with"]["key"] == "${{ steps.ledger.outputs.cache-primary-key }}"
    assert "always()" in save["if"]
    # The folder the cache keeps is the one the export uses, and the names in the key are the
    # ones the export reads.
    state = "${{ env.OPENLINEAGE_EXPORT_STATE_DIR }}"
    assert restore["with"]["path"] == save["with"]["path"] == state
    env = load(GITHUB)["env"]
    assert set(env) == {"WORKSPACE", "OPENLINEAGE_URL"}, env
    steps = github_steps()
    order = [steps.index(s) for s in (restore, github_step(id="export"), save)]
    assert order == sorted(order), "restore, export, save"
    setting = [s for s in steps[: order[0]] if "OPENLINEAGE_EXPORT_STATE_DIR=" in s.get("run", "")]
    assert setting and "GITHUB_ENV" in setting[0]["run"]


def test_the_gitlab_cache_key_names_the_workspace_and_the_server() -> None:
    job = gitlab_job()
    key, variables = job["cache"]["key"], job["variables"]
    assert "$WORKSPACE" in key and "$LEDGER_SERVER" in key, key
    assert variables["OPENLINEAGE_URL"] == "https://$LEDGER_SERVER"
    assert "/" not in key.replace("$", "") and "/" not in variables["LEDGER_SERVER"]
    assert "/" not in variables["WORKSPACE"], "GitLab refuses a key holding a /"
    assert job["cache"]["when"] == "always"
    # The state folder lies outside the checkout (a ledger committed there would pass for one
    # the job kept: the export refuses it); the cache, inside it, is copied there and back.
    state = variables["OPENLINEAGE_EXPORT_STATE_DIR"]
    assert state.startswith("/") and "CI_PROJECT_DIR" not in state and "CI_BUILDS_DIR" not in state
    (cached,) = job["cache"]["paths"]
    script = "\n".join(job["script"])
    assert f'cp -R {cached}. "$OPENLINEAGE_EXPORT_STATE_DIR"' in script
    assert f"git ls-files --error-unmatch {cached.rstrip('/')}" in script
    assert job["after_script"] == [
        f'rm -rf {cached.rstrip("/")} && cp -R "$OPENLINEAGE_EXPORT_STATE_DIR" {cached.rstrip("/")}'
    ]
    assert variables["GIT_CLONE_PATH"] == "$CI_BUILDS_DIR/$CI_PROJECT_PATH", "the same path"


@pytest.mark.parametrize("path", [GITHUB, GITLAB], ids=lambda p: p.name)
def test_no_key_is_written_in_the_files(path: Path) -> None:
    text = path.read_text()
    if path == GITHUB:
        assert github_step(id="export")["env"] == {
            "OPENLINEAGE_API_KEY": "${{ secrets.OPENLINEAGE_API_KEY }}"
        }
        assert text.count("OPENLINEAGE_API_KEY:") == 1
    else:
        assert "OPENLINEAGE_API_KEY" not in gitlab_job()["variables"]
        assert "OPENLINEAGE_API_KEY:" not in text


def test_ci_md_shows_the_files_as_they_are() -> None:
    page = CI_MD.read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", page, flags=re.S)
    assert GITHUB.read_text() in blocks and GITLAB.read_text() in blocks
    for path in (GITHUB, GITLAB):
        assert f"]({path.relative_to(CI_MD.parent).as_posix()})" in page, path.name


# ------------------------------------------------------------- the job, as the CI runs it


class Job:
    """One CI system's job run the way its runner runs it, on a machine whose state folder
    comes from the cache (or not): the shell lines as written, in the repository, with the
    environment the file sets and the server a test's; the install line is left out (the
    package is installed already)."""

    def __init__(self, path: Path, repository: Path, url: str, tmp_path: Path) -> None:
        self.path, self.repository, self.tmp = path, repository, tmp_path
        self.last_exit: int | None = None
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "XDG_"))
        }
        self.env |= {
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "HOME": str(tmp_path / "home"),
            "OPENLINEAGE_URL": url,
            "OPENLINEAGE_API_KEY": "ci-secret-key",
        }
        if path == GITHUB:
            self.env |= {"WORKSPACE": load(GITHUB)["env"]["WORKSPACE"]}
            self.env |= {"RUNNER_TEMP": str(tmp_path / "runner-temp")}
            github_env = tmp_path / "github-env"
            github_env.write_text("")
            where = next(s for s in github_steps() if "GITHUB_ENV" in s.get("run", ""))
            self.bash(where["run"], GITHUB_ENV=str(github_env))
            self.env |= dict(line.split("=", 1) for line in github_env.read_text().splitlines())
            self.cached = Path(self.env["OPENLINEAGE_EXPORT_STATE_DIR"])
        else:
            variables = gitlab_job()["variables"]
            state = variables["OPENLINEAGE_EXPORT_STATE_DIR"]  # in the job's container
            self.env |= {
                "WORKSPACE": variables["WORKSPACE"],
                "OPENLINEAGE_EXPORT_STATE_DIR": f"{tmp_path / 'container'}{state}",
            }
            (cached,) = gitlab_job()["cache"]["paths"]
            self.cached = repository / cached

    @property
    def workspace(self) -> Path:
        return self.repository / self.env["WORKSPACE"]

    def bash(self, script: str, **extra: str) -> subprocess.CompletedProcess[str]:
        # GitHub runs a run: script as `bash -e {0}`; GitLab runs the lines in one shell that
        # stops at the first failing one.
        return subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=self.repository,
            env=self.env | extra,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def run(self) -> tuple[str, subprocess.CompletedProcess[str]]:
        """The job's verdict: passed, warning (passed with one) or failed."""
        if self.path == GITHUB:
            done = self.bash(github_step(id="export")["run"])
            self.last_exit = done.returncode
            if done.returncode != 0:
                return "failed", done
            return ("warning" if "::warning" in done.stdout else "passed"), done
        lines = [line for line in gitlab_job()["script"] if "pip install" not in line]
        done = self.bash("\n".join(lines))
        self.last_exit = done.returncode
        self.bash("\n".join(gitlab_job()["after_script"]))  # whatever the outcome
        if done.returncode == 0:
            return "passed", done
        allowed = gitlab_job()["allow_failure"]["exit_codes"]
        return ("warning" if done.returncode in allowed else "failed"), done

    def save_cache(self) -> Path:
        saved = self.tmp / f"cache-{len(list(self.tmp.glob('cache-*')))}"
        shutil.copytree(self.cached, saved)
        return saved

    def new_machine(self, cache: Path | None) -> None:
        """The next job: a fresh runner (a new container), its cache restored from ``cache``
        (or lost)."""
        shutil.rmtree(self.cached, ignore_errors=True)
        shutil.rmtree(self.env["OPENLINEAGE_EXPORT_STATE_DIR"], ignore_errors=True)
        if cache is not None:
            shutil.copytree(cache, self.cached)


def sent_runs(requests: list[Recorded]) -> set[str]:
    return {r.run_id for r in requests if r.method == "POST" and r.run_id}


@pytest.mark.parametrize("path", [GITHUB, GITLAB], ids=lambda p: p.name)
def test_each_push_exports_only_what_is_new_with_the_ledger_from_the_cache(
    path: Path, tmp_path: Path
) -> None:
    repository = tmp_path / "repository"
    repository.mkdir()
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    with FakeServer() as server:
        job = Job(path, repository, server.url, tmp_path)
        ws = WorkspaceMaker(job.workspace)
        ws.segment("000001.jsonl", [run_record("push-1-a"), run_record("push-1-b")])

        verdict, done = job.run()
        assert verdict == "passed", done.stdout + done.stderr
        first = sent_runs(server.requests)
        assert len(first) == 4, "two editor runs: a pipeline run and a stage run each"
        summary = json.loads(done.stdout)
        assert summary["runs"]["sent"] == 2, summary
        destination = summary["destination"]
        pushed = job.save_cache()

        # The next push, on a fresh machine, with the ledger from the cache: only the new run.
        job.new_machine(pushed)
        ws.segment("000002.jsonl", [run_record("push-2")])
        before = len(server.requests)
        verdict, done = job.run()
        assert verdict == "passed", done.stdout + done.stderr
        second = sent_runs(server.requests[before:])
        assert len(second) == 2 and not second & first, second
        summary = json.loads(done.stdout)
        assert (summary["runs"]["sent"], summary["runs"]["unchanged"]) == (1, 2), summary

        # The cache lost: everything again, under the same run ids (the server updates them).
        job.new_machine(None)
        before = len(server.requests)
        verdict, done = job.run()
        assert verdict == "passed", done.stdout + done.stderr
        assert sent_runs(server.requests[before:]) == first | second

        # The server refuses a run: the job passes, with a warning; the run is sent again next
        # time.
        ws.segment("000003.jsonl", [run_record("push-4")])
        server.script(lambda r: Answer(400, body="no"))
        verdict, done = job.run()
        assert verdict == "warning", done.stdout + done.stderr
        server.script(lambda r: Answer(201))
        before = len(server.requests)
        verdict, done = job.run()
        assert verdict == "passed", done.stdout + done.stderr
        assert len(sent_runs(server.requests[before:])) == 2

        # Another export of the same workspace to the same server on this machine holds the
        # lock: nothing is sent, and the job fails.
        ws.segment("000004.jsonl", [run_record("push-6")])
        state = Path(job.env["OPENLINEAGE_EXPORT_STATE_DIR"])
        before = len(server.requests)
        with ExportLock.acquire(state, str(job.workspace.resolve()), destination):
            verdict, done = job.run()
        assert verdict == "failed" and job.last_exit == 5, done.stdout + done.stderr
        assert sent_runs(server.requests[before:]) == set()

        # A configuration error fails the job.
        job.env["OPENLINEAGE_URL"] = "not a url"
        verdict, done = job.run()
        assert verdict == "failed" and job.last_exit == 2, done.stdout + done.stderr


def test_a_ledger_the_repository_holds_is_never_the_jobs(tmp_path: Path) -> None:
    """Attack A, 2: the pusher commits a ledger (from a rehearsal at the same path, against a
    sink at the same url) saying their run was sent; the job sends it all the same, or stops."""
    repository = tmp_path / "repository"
    repository.mkdir()
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    with FakeServer() as server:
        job = Job(GITLAB, repository, server.url, tmp_path)
        ws = WorkspaceMaker(job.workspace)
        ws.segment("000001.jsonl", [run_record("hidden")])
        verdict, done = job.run()  # the rehearsal
        assert verdict == "passed", done.stdout + done.stderr
        assert (repository / ".openlineage-export-cache" / "ledger.sqlite").exists()
        env = {**job.env, "GIT_AUTHOR_NAME": "p", "GIT_AUTHOR_EMAIL": "p@p"}
        env |= {"GIT_COMMITTER_NAME": "p", "GIT_COMMITTER_EMAIL": "p@p"}
        for git in (["add", "-A"], ["commit", "-qm", "x"]):
            subprocess.run(["git", *git], cwd=repository, env=env, check=True)
        job.new_machine(None)  # a first job: no cache yet, what the checkout holds
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=repository, check=True)
        before = len(server.requests)
        verdict, done = job.run()
        assert verdict == "failed" and job.last_exit == 2, done.stdout + done.stderr
        assert "is in the repository: not used as the ledger" in done.stderr
        assert sent_runs(server.requests[before:]) == set()
