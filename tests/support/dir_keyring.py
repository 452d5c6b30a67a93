"""A real keyring backend for processes the tests start: each password one file in the folder
``$OLX_TEST_KEYRING_DIR`` (so that writers at once cannot lose each other's), chosen with
``PYTHON_KEYRING_BACKEND=support.dir_keyring.DirKeyring`` (and ``tests/`` on ``PYTHONPATH``).

Only for child processes: imported in the test process it would join keyring's discovery.
"""

from __future__ import annotations

import os
from pathlib import Path

import keyring.errors
from keyring.backend import KeyringBackend


class DirKeyring(KeyringBackend):
    """Passwords as files ``SERVICE/USERNAME`` under ``$OLX_TEST_KEYRING_DIR``."""

    priority = 5  # type: ignore[assignment]  # a class attribute where keyring has a property

    @staticmethod
    def _file(service: str, username: str) -> Path:
        return Path(os.environ["OLX_TEST_KEYRING_DIR"]) / service / username

    def get_password(self, service: str, username: str) -> str | None:
        try:
            return self._file(service, username).read_text()
        except FileNotFoundError:
            return None

    def set_password(self, service: str, username: str, password: str) -> None:
        file = self._file(service, username)
        file.parent.mkdir(parents=True, exist_ok=True)
        temp = file.with_name(f".{username}.{os.getpid()}")
        temp.write_text(password)
        temp.replace(file)

    def delete_password(self, service: str, username: str) -> None:
        try:
            self._file(service, username).unlink()
        except FileNotFoundError:
            raise keyring.errors.PasswordDeleteError("not found") from None
