"""The command classes: the one error boundary, and help that ends with examples.

Every command and group of the CLI is a :class:`Command` or :class:`Commands`; the group's
:meth:`Commands.invoke` is the one place the library's errors become a message and an exit
code (``errors.py`` draws their tree). A command module raises; it never exits on an error.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from .. import jsonout
from ..errors import ExportError, OutputError
from ..files.walk import shown_path
from ..terminal.signals import exit_interrupted
from ..terminal.streams import STDOUT, detach, write_err
from .echo import echo
from .exit_codes import EXIT_READER_GONE
from .host_words import host_words


class Command(click.Command):
    """A command whose help ends with its examples (and sections built only when asked)."""

    def __init__(
        self,
        *args: Any,
        examples: str = "",
        sections: Callable[[], Sequence[tuple[str, str]]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.examples = examples
        self.sections = sections

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Examples, then any further sections (environment, exit codes, keys), verbatim."""
        super().format_epilog(ctx, formatter)
        extra = [("Examples", self.examples)] if self.examples else []
        extra += list(self.sections() if self.sections is not None else [])
        for title, text in extra:
            with formatter.section(title):
                for line in text.splitlines():
                    formatter.write(" " * formatter.current_indent + line + "\n")


class Commands(click.Group):
    """The one error boundary: the library's errors become one line and their exit code.

    It also owns how the command ends (click's standalone mode would say "Aborted!" and exit 1
    on Ctrl-C): Ctrl-C anywhere is exit 130 with no traceback.
    """

    command_class = Command
    group_class = type  # subgroups are Commands too

    def __init__(self, *args: Any, examples: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.examples = examples

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an ExportError is one line (JSON with --progress json)."""
        try:
            return super().invoke(ctx)
        except OutputError as exc:
            detach(STDOUT)  # nothing more goes out, nor fails at the interpreter's last flush
            if exc.errno == errno.EPIPE:
                ctx.exit(EXIT_READER_GONE)  # | head -1: the reader had what it wanted
            self._error(ctx, exc)
        except ExportError as exc:
            self._error(ctx, exc)

    @staticmethod
    def _error(ctx: click.Context, exc: ExportError) -> None:
        """One line on stderr (JSON with --progress json), and the error's exit code."""
        # A path in it may hold bytes that are not UTF-8 (a workspace's folder): shown \xff.
        message = shown_path(host_words().error(exc))
        if ctx.meta.get("json_progress"):
            write_err(
                jsonout.dumps(
                    {"event": "error", "message": message, "exitCode": exc.exit_code}
                ).decode()
            )
        else:
            echo(f"error: {message}", err=True)
        ctx.exit(exc.exit_code)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Parse, run, and exit with the command's code: 130 for Ctrl-C wherever it comes."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.Abort as exc:
            cause = exc.__cause__ or exc.__context__
            if isinstance(cause, KeyboardInterrupt):
                exit_interrupted("interrupted")
            echo("aborted: no input", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            exit_interrupted("\ninterrupted")
        except click.ClickException as exc:
            _show_click_error(exc)
            sys.exit(exc.exit_code)
        except OSError as exc:  # click's own output (--help, a usage error) to a closed pipe
            if exc.errno != errno.EPIPE:
                raise
            detach(STDOUT)
            sys.exit(EXIT_READER_GONE)
        sys.exit(code if isinstance(code, int) else 0)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each subcommand with its whole summary (wrapped, never cut short with "...")."""
        rows = [
            (name, command.get_short_help_str(limit=1000))
            for name in self.list_commands(ctx)
            if (command := self.get_command(ctx, name)) is not None and not command.hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The group's examples, verbatim."""
        super().format_epilog(ctx, formatter)
        if self.examples:
            with formatter.section("Examples"):
                for line in self.examples.splitlines():
                    formatter.write(" " * formatter.current_indent + line + "\n")


def _show_click_error(exc: click.ClickException) -> None:
    """Click's own errors (a bad option, a missing argument) in the tool's one style: the usage
    and how to get help, then ``error: ...`` as every other error of the tool says it."""
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        help_option = next(iter(ctx.help_option_names), None)
        echo(ctx.get_usage(), err=True)
        if help_option is not None and ctx.command.get_help_option(ctx) is not None:
            echo(f"Try '{ctx.command_path} {help_option}' for help.", err=True)
        echo("", err=True)
    echo(f"error: {exc.format_message()}", err=True)
