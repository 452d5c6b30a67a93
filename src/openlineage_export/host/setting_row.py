"""One setting, declared once: its row (:class:`Setting`) and the group it is a field of.

A setting is one field of a :class:`SettingsGroup` dataclass, declared with :func:`setting`:
that one row gives its key in ``.workspace/settings.json``, its type, default, choices, help,
the environment variable that overrides it, the key of openlineage-python's configuration
that stands for it, and the attribute it is read as. Groups live beside what they configure
(the events in ``settings.py``, each destination kind in ``deliver/``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, TypeVar

SettingType = Literal["string", "url", "integer", "number", "boolean", "path", "output"]
"""The kinds of value a setting can hold: ``path`` names a file that must exist, ``output`` a
file or folder to write (it may not exist yet)."""

_ROW = "openlineage_export.setting"


@dataclass(frozen=True)
class Setting:
    """One setting: its key in settings.json, its type, default and meaning.

    ``minimum``/``maximum`` bound numbers (inclusive; every ``integer`` and ``number`` setting
    declares both, so that no value a library cannot take gets past the settings) and
    ``pattern`` is a regular expression a string must match whole. ``attribute`` is the field
    of its group it is read as.
    """

    key: str
    type: SettingType
    default: object
    description: str
    env: str | None = None
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None
    pattern_help: str = "letters, digits, '.', '_', '-'; at most 128"
    ascii: bool = False
    """Its value goes into every request as it is (the request line, a broker's address):
    ASCII only, a host in its ASCII form (``xn--...``), anything else percent-encoded."""
    user_only: bool = False
    """Only the user may set it (environment, command line), never the workspace: it weakens
    how keys travel or which servers are trusted (``guards/trust.py`` enforces it)."""
    ecosystem: str | None = None
    """The key of openlineage-python's configuration that stands for it (``transport.url``:
    ``OPENLINEAGE__TRANSPORT__URL``, or ``transport: url:`` in ``openlineage.yml``)."""
    ecosystem_values: tuple[tuple[str, str], ...] | None = None
    """When only some of that key's values stand for ours: (theirs, ours) pairs; any other
    value is not ours (``transport.type: console`` names no destination of ours)."""
    attribute: str = ""

    def __post_init__(self) -> None:
        if self.type in ("integer", "number") and (self.minimum is None or self.maximum is None):
            raise TypeError(
                f"the {self.type} setting {self.key} must declare its minimum and maximum"
            )


def setting(key: str, type: SettingType, default: object, description: str, **options: Any) -> Any:
    """Declare one field of a :class:`SettingsGroup` as the setting ``key`` (see :class:`Setting`).

    Typed ``Any`` so that ``timeout: float = setting(...)`` reads as the field's own type.
    """
    row = Setting(key, type, default, description, **options)
    return dataclasses.field(default=default, metadata={_ROW: row})


class Values(Protocol):
    """Where a group reads its values: the settings in force (``settings.Settings``)."""

    def value(self, key: str) -> object:
        """The value in force of ``key``."""
        ...


G = TypeVar("G", bound="SettingsGroup")


class SettingsGroup:
    """Base of a group of settings: a frozen dataclass whose fields come from :func:`setting`."""

    title: ClassVar[str] = ""
    """What the group configures, for ``settings list``."""

    @classmethod
    def rows(cls) -> tuple[Setting, ...]:
        """The group's settings, in declaration order, each knowing its attribute."""
        return tuple(
            dataclasses.replace(f.metadata[_ROW], attribute=f.name)
            for f in dataclasses.fields(cls)  # type: ignore[arg-type]
            if _ROW in f.metadata
        )

    @classmethod
    def from_settings(cls: type[G], settings: Values) -> G:
        """The group's values in force."""
        return cls(**{row.attribute: settings.value(row.key) for row in cls.rows()})
