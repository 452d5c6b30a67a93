"""What looks like a credential where only a *name* belongs: the rules that keep keys out of
settings.json (which travels with the workspace) and out of a secret's name; and which
parameter names hold a secret (:func:`is_credential_name`), the one test of a dataset
location's parameters (``translate/locations.py``) and of an address setting's path parameters.

``scripts/vscode_settings.py`` turns :func:`looks_like_credential` into the pattern VS Code
checks as a name is typed (from :data:`KEY_PREFIXES`); a test checks that the two agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote

from .. import DISTRIBUTION
from ..errors import ConfigError

PREFIX = "openlineage."
"""Every key of this exporter starts so; the other keys belong to other extensions."""

SECRET_NAME_PATTERN = r"[A-Za-z0-9._-]{1,128}"
"""What a secret's name may be: the rule of the secrets store and of ``secretRef``."""

KEY_PREFIXES = (
    "sk-",
    "sk_",
    "pk_live",
    "pk_test",
    "rk_live",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "AKIA",
    "ASIA",
    "AIza",
    "hf_",
    "npm_",
    "pypi-",
    "dapi",
    "shpat_",
    "SG.",
)
"""How well-known API keys and tokens begin (OpenAI, Stripe, GitHub, GitLab, Slack, AWS, Google,
Hugging Face, npm, PyPI, Databricks, Shopify, SendGrid)."""

_SECRET_ENDINGS = ("apikey", "api_key", "token", "password", "passwd", "secret")
"""Lower-cased endings of a key segment that would hold a credential itself."""


CREDENTIAL_ENDINGS = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "key",
    "signature",
    "credential",
    "credentials",
    "authorization",
    "sessionid",
)
"""A parameter whose name (lower case, without ``-``, ``_``, ``.`` and spaces) ends so holds a
secret: ``sslpassword``, ``client_secret``, ``access_token``, ``X-Amz-Security-Token``,
``AccountKey``, ``SharedAccessKey``, ``api-key``, ``X-Goog-Signature``, ``X-Amz-Credential``."""
CREDENTIAL_NAMES = frozenset({"sig", "pw", "pass", "auth", "sas"})
"""Names that are a secret whole (``sig`` is an Azure SAS token's signature)."""


def is_credential_name(name: str) -> bool:
    """Whether a parameter called ``name`` (as written: any case, percent-encoded or not)
    holds a secret: the one test of a location's parameters (``translate/locations.py``) and of
    an address setting's (``setting_values.py``)."""
    for _ in range(3):  # percent-encoded once or twice over: read what a server would
        decoded = unquote(name)
        if decoded == name:
            break
        name = decoded
    word = re.sub(r"[-_.\s]", "", name).lower()
    return word in CREDENTIAL_NAMES or word.endswith(CREDENTIAL_ENDINGS)


def secret_path_parameter(address: str) -> tuple[int, int] | None:
    """Where the first ``;name=value`` path parameter of ``address`` whose name
    :func:`is_credential_name` calls a secret is (``/api;jsessionid=...``,
    ``.git;private_token=...``; ``;`` percent-encoded too), up to the next ``;``, ``/``, ``?``
    or ``#``; None when it has none."""
    for match in _PATH_PARAMETER.finditer(address):
        if is_credential_name(match["name"]):
            return match.start(), match.end()
    return None


_PATH_PARAMETER = re.compile(
    r"(?:;|%3[bB])\s*(?P<name>[^=;/?#]{1,128}?)\s*(?:=|%3[dD])(?:(?!%3[bB])[^;/?#])*"
)
"""A path parameter (RFC 3986's ``;name=value``), its separators percent-encoded or not."""


def looks_like_secret_key(key: str) -> bool:
    """Whether an ``openlineage.*`` key looks like it would hold a credential itself."""
    if not key.startswith(PREFIX) or key.lower().endswith("secretref"):
        return False
    segments = key.removeprefix(PREFIX).lower().split(".")
    return any(segment.endswith(_SECRET_ENDINGS) for segment in segments)


def looks_like_credential(text: str) -> bool:
    """Whether a *name* (a secret's, a ``secretRef``) looks like a key itself: a known key
    prefix, a JSON web token, or a long random-looking run of letters and digits.

    A name says what a secret is for (``marquez-prod``); a key typed there would be stored in
    settings.json, which travels with the workspace.
    """
    if len(text) >= 16 and text.startswith(KEY_PREFIXES):
        return True
    if text.startswith("eyJ") and text.count(".") == 2:
        return True
    for token in re.split(r"[-_.]", text):
        if len(token) < 20 or not re.search(r"\d", token) or not re.search(r"[A-Za-z]", token):
            continue
        switches = len(re.findall(r"(?<=\d)[A-Za-z]|(?<=[A-Za-z])\d", token))
        if switches >= 3 or len(token) >= 32:
            return True
    return False


def credential_error(subject: str) -> ConfigError:
    """The refusal of a name that looks like a key (never repeating it)."""
    return ConfigError(
        f"{subject} looks like a key itself, not the name of one, and was not stored. Keys "
        f"never go in settings (they travel with the workspace): store the key with "
        f"`{DISTRIBUTION} secrets set NAME` (NAME says what it is for, e.g. marquez-prod) "
        f"and use NAME here."
    )


def secret_key_error(key: str, where: str | None, secret_refs: Iterable[str]) -> ConfigError:
    """The refusal of a key that looks like it holds a secret, pointing at the ``secretRef``
    setting that names one instead (of ``secret_refs``, the one closest to ``key``)."""
    # Never the value: the point of this error is that it may be a real credential.
    remove = f"Remove it ({DISTRIBUTION} settings unset {key}), store" if where else "Store"
    ref = closest_secret_ref(key, secret_refs)
    return ConfigError(
        f"{at(where)}'{key}' looks like it holds a secret. Keys never go in settings (they "
        f"travel with the workspace). {remove} the key with `{DISTRIBUTION} secrets set "
        f"NAME` and set {ref} to NAME."
    )


def closest_secret_ref(key: str, secret_refs: Iterable[str]) -> str:
    """Of the ``secretRef`` settings, the one sharing the most leading segments with ``key``
    (``openlineage.kafka.token``: Kafka's password's); the first declared on a tie."""
    segments = key.split(".")

    def shared(ref: str) -> int:
        count = 0
        for mine, theirs in zip(segments, ref.split("."), strict=False):
            if mine != theirs:
                break
            count += 1
        return count

    refs = list(secret_refs)
    return max(refs, key=shared) if refs else "openlineage.apiKey.secretRef"


def at(where: str | None) -> str:
    """``where: `` to start a message with, or nothing."""
    return f"{where}: " if where else ""
