"""Editing the workspace's settings.json: one key set or removed, every other key (ours and
other extensions') left in its place and as it was written (``jsonfile.py``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import ConfigError
from .credentials import PREFIX, looks_like_secret_key
from .jsonfile import check_editable, raw_entries, write_entries
from .setting_values import check_value, parse_text
from .settings import Catalogue, user_only_error
from .workspace import Workspace

_SURROGATE = re.compile("[\ud800-\udfff]")


def set_setting(
    workspace: Path | Workspace, catalogue: Catalogue, key: str, value_text: str
) -> object:
    """Store one setting, given as text, in settings.json and return the value stored.

    ``value_text`` is parsed by the key's type (booleans: true/false, yes/no, 1/0, on/off) and
    checked as :func:`~.settings.load_settings` checks it. Every other key keeps its place and
    its text.
    """
    ws = Workspace.at(workspace)
    row = catalogue.declared(key, None)
    if row.user_only:
        raise user_only_error(row, "is not stored in the workspace's settings.json", present=False)
    # What the user wrote is stored (a relative path stays relative, 30 stays 30).
    value = parse_text(row, value_text)
    check_value(row, value, key, ws.root)
    file = ws.settings_file
    check_editable(ws.root, file)
    entries = raw_entries(file, root=ws.root)
    raw_key = entries[key][0] if key in entries else json.dumps(key, ensure_ascii=False)
    text = json.dumps(value, ensure_ascii=False)
    if not text.isascii() and _SURROGATE.search(text):
        # A file name's byte that is not UTF-8 (U+DC80-U+DCFF as Python reads it) has no UTF-8:
        # written as its JSON escape, it reads back as the same name.
        text = json.dumps(value)
    entries[key] = (raw_key, text)
    write_entries(file, entries, root=ws.root)
    return value


def unset_setting(workspace: Path | Workspace, catalogue: Catalogue, key: str) -> bool:
    """Remove ``key`` from settings.json; True if it was there.

    Any ``openlineage.*`` key present in the file can be removed, so that a misspelled or a
    secret-holding key can be got rid of. Keys of other extensions are refused.
    """
    ws = Workspace.at(workspace)
    if not key.startswith(PREFIX):
        raise ConfigError(
            f"'{key}' is not an openlineage.* setting; keys of other extensions are left alone"
        )
    file = ws.settings_file
    check_editable(ws.root, file)
    entries = raw_entries(file, root=ws.root)
    if key not in entries:
        if catalogue.get(key) is not None or looks_like_secret_key(key):
            return False
        catalogue.declared(key, str(file))  # raises: unknown, with a suggestion
    del entries[key]
    write_entries(file, entries, root=ws.root)
    return True
