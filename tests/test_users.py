"""files/users.py: the user's own folders are positively outside every checkout, reached
without a link a checkout holds, made private; their files never read through a link."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from openlineage_export.files.users import check_own_name, own_folder, read_own
from openlineage_export.files.walk import Refused
from openlineage_export.files.whose import Checkouts, InCheckout


def test_a_folder_in_a_checkout_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    (tmp_path / "co" / ".git").mkdir(parents=True)
    with pytest.raises(InCheckout) as caught:
        own_folder(tmp_path / "co" / ".local" / "state", Checkouts(), create=True)
    assert caught.value.why == f"the checkout {tmp_path / 'co'} (it has .git)"
    assert not (tmp_path / "co" / ".local").exists()


def test_a_link_on_the_way_into_a_checkout_is_judged_where_it_leads(tmp_path: Path) -> None:
    (tmp_path / "co" / ".git").mkdir(parents=True)
    (tmp_path / "co" / "config").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".config").symlink_to(tmp_path / "co" / "config")
    with pytest.raises(InCheckout):
        own_folder(tmp_path / "home" / ".config", Checkouts())


def test_missing_folders_are_made_0700_and_files_never_read_through_a_link(
    tmp_path: Path,
) -> None:
    old = os.umask(0)
    try:
        folder = own_folder(tmp_path / "a" / "b", Checkouts(), create=True)
    finally:
        os.umask(old)
    with folder:
        assert stat.S_IMODE(os.stat(tmp_path / "a").st_mode) == 0o700
        assert read_own(folder, "secrets.json", limit=100) is None
        (tmp_path / "a" / "b" / "secrets.json").symlink_to(tmp_path / "leaked.json")
        with pytest.raises(Refused, match="a link"):
            read_own(folder, "secrets.json", limit=100)
        with pytest.raises(Refused, match="a link, not a file of your own"):
            check_own_name(folder, "secrets.json")
        (tmp_path / "a" / "b" / "own.json").write_text("{}")
        found = read_own(folder, "own.json", limit=100)
        assert found is not None and found[0] == b"{}" and found[1].st_uid == os.geteuid()
    assert not (tmp_path / "leaked.json").exists()
