"""The settings that decide how a key travels: the user's alone, never the workspace's.

``guards/trust.py`` refuses them from a workspace's settings.json (``user_only``); the destinations
read them from here (docs/security.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ..host.setting_row import SettingsGroup, setting


@dataclass(frozen=True)
class KeySettings(SettingsGroup):
    """How a key or password may travel, and how the server's certificate is checked."""

    title: ClassVar[str] = "delivery"
    """Shown with the other delivery settings: to a person they are one group."""

    tls_ca_bundle: Path | None = setting(
        "openlineage.tls.caBundle",
        "path",
        None,
        "CA bundle file to verify the server's certificate with (relative paths start at the "
        "workspace folder). Yours to set, never the workspace's.",
        env="OPENLINEAGE_TLS_CA_BUNDLE",
        user_only=True,
    )
    tls_verify: bool = setting(
        "openlineage.tls.verify",
        "boolean",
        True,
        "Verify the server's TLS certificate. Yours to set, never the workspace's.",
        env="OPENLINEAGE_TLS_VERIFY",
        user_only=True,
        ecosystem="transport.verify",
    )
    allow_insecure_key: bool = setting(
        "openlineage.allowInsecureKey",
        "boolean",
        False,
        "Allow sending a key or password in clear text to a host that is not this machine. "
        "Yours to set, never the workspace's.",
        env="OPENLINEAGE_ALLOW_INSECURE_KEY",
        user_only=True,
    )
