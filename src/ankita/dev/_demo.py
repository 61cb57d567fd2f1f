"""`ankita demo`: the product in one minute, on a temporary store."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.console import Console
from rich.markup import escape as esc

from ankita._memory import Memory
from ankita._models import WriteResult


def _show(console: Console, said: str, result: WriteResult) -> None:
    console.print(f'\n[bold]remember[/bold] "{said}"')
    console.print(
        f"  -> [bold]{result.action}[/bold] ({result.method} {result.score:.2f}): "
        f"{esc(result.reason)}"
    )


def run_demo(console: Console, keep: bool = False, embedder: str = "auto") -> None:
    folder = tempfile.mkdtemp(prefix="ankita-demo-")
    path = Path(folder) / "demo.db"
    console.print(f"[dim]A temporary store at {esc(str(path))}[/dim]")
    with Memory(path, embedder=embedder) as memory:
        name = memory.embedder.model_id if memory.embedder is not None else "none (lexical)"
        console.print(f"[dim]embedder: {esc(name)}[/dim]")
        console.rule("1. A duplicate merges")
        first = memory.remember("I use Postgres", kind="tool")
        _show(console, "I use Postgres", first)
        again = memory.remember("Database is Postgres", kind="tool")
        _show(console, "Database is Postgres", again)
        console.print(
            f"  one fact, mentioned {again.fact.mentions} times: {esc(repr(again.fact.text))}"
        )

        console.rule("2. A disagreement is flagged, not overwritten")
        switched = memory.remember("I switched from Postgres to SQLite", kind="tool")
        _show(console, "I switched from Postgres to SQLite", switched)
        _show(console, "I live in Berlin", memory.remember("I live in Berlin", kind="location"))
        moved = memory.remember("I live in Munich", kind="location")
        _show(console, "I live in Munich", moved)

        console.rule("3. Recall tells the assistant to ask")
        recalled = memory.recall("Postgres or SQLite?", limit=4)
        console.print(recalled.to_prompt(), markup=False)

        console.rule("4. The user answers: resolve")
        memory.resolve(keep=switched.fact.id, over=first.fact.id)
        console.print(f"  kept {switched.fact.id}; {first.fact.id} is superseded")
        console.print(memory.recall("Postgres or SQLite?", limit=4).to_prompt(), markup=False)

        console.rule("5. Nothing is lost: undo")
        last = memory.history(first.fact.id)[-1]
        memory.undo(last.id)
        console.print(f"  undid event {last.id} ({last.type}); the conflict is back:")
        console.print(memory.recall("Postgres or SQLite?", limit=4).to_prompt(), markup=False)
    if keep:
        console.print(f"\n[dim]kept: ankita --db {esc(str(path))} list --all[/dim]")
    else:
        for leftover in Path(folder).iterdir():
            leftover.unlink()
        Path(folder).rmdir()
        console.print("\n[dim]The temporary store is deleted (--keep keeps it).[/dim]")
    console.print(
        'Next: [bold]ankita remember "..."[/bold] writes to your own store, '
        "[bold]ankita --help[/bold] lists every command, and the README shows Python, HTTP and "
        "MCP."
    )
