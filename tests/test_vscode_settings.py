"""The VS Code extension's settings and kinds' secrets are the tool's: one source of truth (the
catalogue, the kinds' registry).

editor/vscode/package.json's ``contributes.configuration`` and editor/vscode/src/kindSecrets.ts
are written by scripts/vscode_settings.py from the settings declarations and the registry's
rows; these tests fail when the two drift apart (a setting added, a default or a description
changed, a kind with a secret added, without regenerating them).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from helpers import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from openlineage_export.deliver.registry import CATALOGUE, KINDS
from openlineage_export.host.credentials import SECRET_NAME_PATTERN, looks_like_credential

PACKAGE_JSON = ROOT / "editor" / "vscode" / "package.json"
EXTENSION_SOURCES = ROOT / "editor" / "vscode" / "src"
KIND_SECRETS_TS = EXTENSION_SOURCES / "kindSecrets.ts"


def test_package_json_holds_the_settings_the_generator_writes() -> None:
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "vscode_settings.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stderr


def test_the_extension_knows_each_kinds_secret_as_its_registry_row_declares_it() -> None:
    """KIND_SECRETS, which the extension reads to hand a kind's secret over, is each row's
    ``secret`` (its setting, its variable, what it is), and no other source of the extension
    spells a secret's variable by hand."""
    text = KIND_SECRETS_TS.read_text()
    rows = [json.loads(row) for row in re.findall(r"^  (\{.*\}),$", text, re.MULTILINE)]
    assert rows == [
        {
            "kind": kind.name,
            "setting": kind.secret.setting,
            "env": kind.secret.env,
            "what": kind.secret.what,
            "address": kind.address or "",
        }
        for kind in KINDS.values()
        if kind.secret is not None
    ]
    addresses = re.search(r"^export const KIND_ADDRESSES[^=]*= (\{.*\});$", text, re.MULTILINE)
    assert addresses is not None
    assert json.loads(addresses.group(1)) == {
        kind.name: kind.address for kind in KINDS.values() if kind.address
    }
    variables = [row["env"] for row in rows]
    for source in EXTENSION_SOURCES.glob("*.ts"):
        if source != KIND_SECRETS_TS:
            text = source.read_text()
            assert not [v for v in variables if v in text], source


def test_every_setting_with_its_default_choices_and_bounds() -> None:
    configuration = json.loads(PACKAGE_JSON.read_text())["contributes"]["configuration"]
    assert configuration["title"] == "OpenLineage Export"
    properties = configuration["properties"]
    # The product page's steps first (where events go, the key's name, the path, the
    # namespace, a dry run), then the tool's other settings in its order, then the editor's own
    # (never the workspace's file's); VS Code lists them by "order".
    steps = [
        "openlineage.url",
        "openlineage.apiKey.secretRef",
        "openlineage.endpoint",
        "openlineage.namespace",
        "openlineage.dryRun",
    ]
    rest = [row.key for row in CATALOGUE if row.key not in steps]
    assert list(properties) == [
        *steps,
        *rest,
        "openlineage.autoExport",
        "openlineage.marquez.webUrl",
    ]
    assert [properties[key]["order"] for key in properties] == list(range(len(properties)))
    for own in ("openlineage.autoExport", "openlineage.dryRun"):
        prop = properties[own]
        assert (prop["type"], prop["default"]) == ("boolean", False)  # off unless turned on
    for row in CATALOGUE:
        prop = properties[row.key]
        assert prop["default"] == ("" if row.default is None else row.default), row.key
        assert prop["description"].startswith(row.description), row.key
        assert prop.get("enum") == (list(row.choices) if row.choices else None), row.key
        assert prop.get("minimum") == row.minimum and prop.get("maximum") == row.maximum
        if row.env:
            assert row.env in prop["description"]


SECRET_NAMES = st.one_of(
    st.from_regex(SECRET_NAME_PATTERN, fullmatch=True),
    # Shapes near the rule's edges: key prefixes, long mixed runs, tokens between separators.
    st.builds(
        lambda prefix, body: prefix + body,
        st.sampled_from(["sk-", "ghp_", "AKIA", "SG.", "eyJ", "hf_", "prod-"]),
        st.from_regex(r"[A-Za-z0-9._-]{0,40}", fullmatch=True),
    ),
    st.lists(
        st.from_regex(r"[a-z]{0,6}[0-9]{0,6}[A-Z]{0,6}[0-9]{0,4}", fullmatch=True),
        min_size=1,
        max_size=5,
    )
    .map(lambda parts: "-".join(parts)[:128])
    .filter(bool),
)


@settings(max_examples=3000, deadline=None)
@given(SECRET_NAMES)
def test_vs_code_refuses_a_key_shaped_secret_name_as_the_cli_does(name: str) -> None:
    """The secretRef settings' pattern in package.json (checked by VS Code as it is typed, before
    it stores anything) refuses exactly the names the CLI refuses as key-shaped."""
    properties = json.loads(PACKAGE_JSON.read_text())["contributes"]["configuration"]["properties"]
    for key in ("openlineage.apiKey.secretRef", "openlineage.kafka.sasl.password.secretRef"):
        accepted = re.fullmatch(properties[key]["pattern"], name) is not None
        assert accepted == (not looks_like_credential(name)), (key, name)


def test_the_secret_name_pattern_catches_the_usual_keys() -> None:
    pattern = json.loads(PACKAGE_JSON.read_text())["contributes"]["configuration"]["properties"][
        "openlineage.apiKey.secretRef"
    ]["pattern"]
    for key in (
        "sk-live-4f9Kx2Lp8Qw3Zr7Tb6Nc",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "AKIAIOSFODNN7EXAMPLE",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
    ):
        assert re.fullmatch(pattern, key) is None, key
    for name in ("marquez-prod", "prod.marquez_2", "datahub-staging-2026", ""):
        assert re.fullmatch(pattern, name) is not None, name
