"""The command line's shared parts: consoles, JSON output, the error translation (the only
place an AnkitaError becomes an exit code), and opening the memory a command names."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape as markup_escape
from rich.table import Table

from ankita._errors import (
    AnkitaError,
    ChannelError,
    InvalidInput,
    ModelError,
    NotFound,
    StoreError,
    UndoError,
)
from ankita._memory import Memory
from ankita._models import Fact
from ankita._validate import TERMINAL_CONTROL, validate_id

T = TypeVar("T")


def printable(text: str) -> str:
    """Text for a terminal: each control character shown as \\xNN instead of acted on."""
    # A stored ESC [2J must not clear the user's screen.
    return TERMINAL_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def esc(text: str) -> str:
    """Text for rich's console: controls shown (`printable`) and markup escaped."""
    return markup_escape(printable(text))


console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

# Exit codes by error class: scripts can tell bad input from a missing id from a broken store.
EXIT_CODES: list[tuple[type[AnkitaError], int]] = [
    (InvalidInput, 2),
    (NotFound, 3),
    (UndoError, 4),
    (StoreError, 5),
    (ModelError, 6),
    (ChannelError, 7),
    (AnkitaError, 1),
]


class _Group(click.Group):
    """Translates every AnkitaError into one line on stderr and an exit code: the only place."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AnkitaError as exc:
            code = next(c for cls, c in EXIT_CODES if isinstance(exc, cls))
            err_console.print(f"[red]error[/red] ({exc.code}): {esc(str(exc))}", markup=True)
            sys.exit(code)


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _memory(ctx: click.Context) -> Memory:
    opts = ctx.find_root().obj
    memory = Memory(
        path=opts["db"], user=opts["user"], embedder=opts["embedder"], judge=opts["judge"]
    )
    ctx.call_on_close(memory.close)
    return memory


def full_id(memory: Memory, given: str) -> str:
    """A fact id as typed: whole, or a unique prefix of one (as git takes commits)."""
    given = validate_id(given)
    if memory.store.get_fact(memory.user, given) is not None:
        return given
    found = memory.store.ids_starting(memory.user, given)
    if len(found) > 1:
        shown = ", ".join(found[:2]) + (", ..." if len(found) > 2 else "")
        raise InvalidInput(f"{given!r} is the start of several fact ids ({shown}): type more")
    return found[0] if found else given


def _with_progress(
    label: str, quiet: bool, call: Callable[[Callable[[int, int], None] | None], T]
) -> T:
    """Run `call`, giving it a progress callback that drives a bar on stderr when a person is
    watching (a terminal, and no --json); otherwise no callback."""
    if quiet or not sys.stderr.isatty():
        return call(None)
    from rich.progress import Progress

    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task(label, total=None)
        return call(lambda done, total: bar.update(task, completed=done, total=total))


def _facts_table(facts: list[Fact], title: str | None = None) -> Table:
    table = Table(title=title, show_lines=False)
    for column in ("id", "kind", "text", "mentions", "flags"):
        table.add_column(column, overflow="fold")
    for f in facts:
        flags = []
        if f.pinned:
            flags.append("pinned")
        if f.status != "active":
            flags.append(f.status)
        if f.conflicts_with:
            flags.append("conflicts: " + ", ".join(f.conflicts_with))
        table.add_row(f.id, f.kind, esc(f.text), str(f.mentions), esc("; ".join(flags)))
    return table


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
