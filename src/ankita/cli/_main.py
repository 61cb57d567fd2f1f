"""The `ankita` group and the commands on one fact or one pair: remember, recall, list, show,
forget, pin, conflicts, resolve, history, undo, compare."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from rich.table import Table

from ankita import __version__
from ankita._console import (
    _facts_table,
    _Group,
    _memory,
    _print_json,
    console,
    err_console,
    esc,
    full_id,
    json_option,
    printable,
)
from ankita._memory import Memory
from ankita._models import Fact
from ankita.analysis._text import shown_words
from ankita.store._sqlbase import (
    FACT_ORDERS,
)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ankita")
@click.option(
    "--db",
    envvar="ANKITA_DB",
    default=None,
    metavar="PATH",
    help="SQLite file (default: memory.db in your user data folder). Env: ANKITA_DB.",
)
@click.option(
    "--user",
    envvar="ANKITA_USER",
    default="default",
    show_default=True,
    help="Whose memory. Env: ANKITA_USER.",
)
@click.option(
    "--embedder",
    envvar="ANKITA_EMBEDDER",
    default="auto",
    show_default=True,
    help="Embedder name (none, auto, ...). Env: ANKITA_EMBEDDER.",
)
@click.option(
    "--judge",
    envvar="ANKITA_JUDGE",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", "nli", "off"]),
    help="Contradiction judge: auto (when installed), nli (required) or off. Env: ANKITA_JUDGE.",
)
@click.pass_context
def cli(ctx: click.Context, db: str | None, user: str, embedder: str, judge: str) -> None:
    """Ankita: memory that merges duplicates, flags conflicts and never silently deletes."""
    ctx.obj = {"db": db, "user": user, "embedder": embedder, "judge": judge}


@cli.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--kind", default="fact", show_default=True, help="Kind of fact (a slug).")
@click.option("--pin", is_flag=True, help="A deliberate fact: never goes stale.")
@click.option("--source", default="user", show_default=True, help="Who wrote it.")
@json_option
@click.pass_context
def remember(
    ctx: click.Context, text: tuple[str, ...], kind: str, pin: bool, source: str, as_json: bool
) -> None:
    """Remember TEXT: merge it, flag a conflict, or store it as new."""
    result = _memory(ctx).remember(" ".join(text), kind=kind, pinned=pin, source=source)
    if as_json:
        _print_json(result.to_dict())
        return
    verb = {
        "created": "[green]created[/green]",
        "merged": "[cyan]merged into[/cyan]",
        "conflict": "[yellow]conflict[/yellow]: stored",
    }[result.action]
    console.print(f"{verb} {result.fact.id}: {esc(result.fact.text)}")
    if result.conflicts_with:
        console.print(f"  flagged against: {', '.join(result.conflicts_with)}")
    if result.possible_conflicts:
        console.print(
            f"  possible conflict with: {', '.join(result.possible_conflicts)} "
            "(kept for review: `ankita conflicts --possible`, `ankita promote`)"
        )
    # The reason names the one score the decision rested on (`compare --explain` shows all).
    console.print(f"  [dim]{esc(result.reason)}[/dim]")


@cli.command()
@click.argument("query", nargs=-1)
@click.option("--limit", default=8, show_default=True, type=int)
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (repeatable).")
@click.option("--prompt", is_flag=True, help="Print the block for a system prompt.")
@json_option
@click.pass_context
def recall(
    ctx: click.Context,
    query: tuple[str, ...],
    limit: int,
    kinds: tuple[str, ...],
    prompt: bool,
    as_json: bool,
) -> None:
    """Facts relevant to QUERY, pinned facts, and conflicts with the notice."""
    result = _memory(ctx).recall(" ".join(query), limit=limit, kinds=list(kinds) or None)
    if as_json:
        _print_json(result.to_dict())
    elif prompt:
        click.echo(printable(result.to_prompt()))
    else:
        table = Table()
        for column in ("id", "text", "score", "flags"):
            table.add_column(column, overflow="fold")
        for item in result.facts:
            flags = [
                n
                for n, on in (
                    ("pinned", item.pinned),
                    ("stale", item.stale),
                    ("conflict", item.conflicting),
                )
                if on
            ]
            table.add_row(item.fact.id, esc(item.fact.text), f"{item.score:.2f}", ", ".join(flags))
        console.print(table)
        if result.notice:
            console.print(f"[yellow]{result.notice}[/yellow]")


@cli.command(name="list")
@click.option("--kind", default=None)
@click.option("--all", "show_all", is_flag=True, help="Include superseded facts.")
@click.option("--search", default=None, help="Only facts whose text contains this.")
@click.option(
    "--only",
    type=click.Choice(["pinned", "conflicting"]),
    default=None,
    help="Only pinned, or only conflicting, facts.",
)
@click.option(
    "--sort",
    "order",
    type=click.Choice(sorted(FACT_ORDERS)),
    default="said",
    show_default=True,
    help="Order by this (then the order said).",
)
@click.option("--desc", is_flag=True, help="Largest (or latest) first.")
@click.option("--limit", type=click.IntRange(1), default=None, help="At most this many facts.")
@click.option("--offset", type=click.IntRange(0), default=0, help="Skip this many first.")
@json_option
@click.pass_context
def list_(
    ctx: click.Context,
    kind: str | None,
    show_all: bool,
    search: str | None,
    only: str | None,
    order: str,
    desc: bool,
    limit: int | None,
    offset: int,
    as_json: bool,
) -> None:
    """List facts, oldest first (or by --sort), a page at a time with --limit/--offset."""
    memory = _memory(ctx)
    facts = memory.list(
        kind=kind,
        include_superseded=show_all,
        search=search,
        limit=limit,
        offset=offset,
        order=order,
        descending=desc,
        only=only,
    )
    if as_json:
        _print_json([f.to_dict() for f in facts])
        return
    console.print(_facts_table(facts))
    if limit is not None or offset:
        total = memory.count(kind, show_all, search, only)
        err_console.print(
            f"{offset + 1 if facts else offset}-{offset + len(facts)} of {total} facts"
        )


@cli.command()
@click.argument("fact_id")
@json_option
@click.pass_context
def show(ctx: click.Context, fact_id: str, as_json: bool) -> None:
    """Show one fact."""
    memory = _memory(ctx)
    fact = memory.get(full_id(memory, fact_id))
    if as_json:
        _print_json(fact.to_dict())
    else:
        for key, value in fact.to_dict().items():
            console.print(f"[bold]{key}[/bold]: {esc(str(value))}")


def _simple(name: str, help_: str, call: Callable[[Memory, str], Fact], done: str) -> None:
    @cli.command(name=name, help=help_)
    @click.argument("fact_id")
    @json_option
    @click.pass_context
    def command(ctx: click.Context, fact_id: str, as_json: bool) -> None:
        memory = _memory(ctx)
        fact = call(memory, full_id(memory, fact_id))
        if as_json:
            _print_json(fact.to_dict())
        else:
            console.print(f"{done} {fact.id}: {esc(fact.text)}")


_simple(
    "forget",
    "Forget a fact (recorded in history; `undo` brings it back).",
    lambda m, i: m.forget(i),
    "forgot",
)
_simple(
    "pin",
    "Pin a fact: it is always recalled and never goes stale.",
    lambda m, i: m.pin(i),
    "pinned",
)
_simple("unpin", "Unpin a fact.", lambda m, i: m.unpin(i), "unpinned")


@cli.command()
@click.option(
    "--limit",
    type=click.IntRange(1, 100_000),
    default=100,
    show_default=True,
    help="Show at most this many pairs.",
)
@click.option("--offset", type=click.IntRange(0), default=0, help="Skip this many first.")
@click.option(
    "--possible",
    is_flag=True,
    help="Possible conflicts instead: kept for review, never in recall's notice (`promote`).",
)
@json_option
@click.pass_context
def conflicts(ctx: click.Context, limit: int, offset: int, possible: bool, as_json: bool) -> None:
    """List flagged pairs (sure conflicts, or --possible ones), a page at a time."""
    memory = _memory(ctx)
    pairs = memory.conflicts(limit, offset, possible=possible)
    if as_json:
        _print_json([c.to_dict() for c in pairs])
        return
    if not pairs:
        console.print("no possible conflicts" if possible else "no conflicts")
    for c in pairs:
        # The side said last first, in every pair (ids alone put some older sides first).
        new, old = (c.b, c.a) if c.newer == c.b.id else (c.a, c.b)
        console.print(f"{new.id}: {esc(new.text)}\n  [yellow]vs[/yellow] {old.id}: {esc(old.text)}")
    total = memory.conflict_count(possible=possible)
    if offset + len(pairs) < total:
        err_console.print(
            f"{offset + len(pairs)} of {total} pairs shown; "
            f"--offset {offset + len(pairs)} shows the next"
        )


@cli.command()
@click.argument("a")
@click.argument("b")
@json_option
@click.pass_context
def promote(ctx: click.Context, a: str, b: str, as_json: bool) -> None:
    """A possible conflict between A and B is a real one: recall will ask which is current."""
    memory = _memory(ctx)
    a, b = full_id(memory, a), full_id(memory, b)
    pair = memory.promote(a, b)
    if as_json:
        _print_json(pair.to_dict())
    else:
        console.print(f"{a} and {b} now conflict; recall asks which is current")


@cli.command(name="clear-conflict")
@click.argument("a")
@click.argument("b")
@click.pass_context
def clear_conflict(ctx: click.Context, a: str, b: str) -> None:
    """Both A and B are true: remove the flag from both sides."""
    memory = _memory(ctx)
    a, b = full_id(memory, a), full_id(memory, b)
    memory.clear_conflict(a, b)
    console.print(f"cleared the conflict between {a} and {b}")


@cli.command()
@click.argument("keep")
@click.argument("over")
@json_option
@click.pass_context
def resolve(ctx: click.Context, keep: str, over: str, as_json: bool) -> None:
    """KEEP is current: OVER becomes superseded (reversible with undo)."""
    memory = _memory(ctx)
    keep, over = full_id(memory, keep), full_id(memory, over)
    fact = memory.resolve(keep=keep, over=over)
    if as_json:
        _print_json(fact.to_dict())
    else:
        console.print(f"kept {fact.id}: {esc(fact.text)}; {esc(over)} is superseded")


@cli.command()
@click.argument("fact_id")
@json_option
@click.pass_context
def history(ctx: click.Context, fact_id: str, as_json: bool) -> None:
    """Every event that touched a fact."""
    memory = _memory(ctx)
    fact_id = full_id(memory, fact_id)
    events = memory.history(fact_id)
    if as_json:
        _print_json([e.to_dict() for e in events])
        return
    table = Table()
    for column in ("event", "at", "type", "detail", "undone by"):
        table.add_column(column, overflow="fold")
    for e in events:
        detail = e.data.get("phrasing") or e.data.get("text") or e.data.get("after") or ""
        partner = e.fact_id if e.other_id == fact_id else e.other_id  # the other side
        if e.type == "resolve":
            detail = f"kept {e.other_id} over {e.fact_id}"
        elif partner and partner != fact_id:
            detail = f"{detail} (with {partner})".strip()
        table.add_row(str(e.id), e.at[:19], e.type, esc(str(detail)), str(e.undone_by or ""))
    console.print(table)


@cli.command()
@click.argument("event_id", type=int)
@json_option
@click.pass_context
def undo(ctx: click.Context, event_id: int, as_json: bool) -> None:
    """Reverse the operation EVENT_ID belongs to."""
    event = _memory(ctx).undo(event_id)
    if as_json:
        _print_json(event.to_dict())
    else:
        undid = ", ".join(str(i) for i in event.data["undid"])
        console.print(
            f"undid the {', '.join(event.data['types'])} of event{'s' * (',' in undid)} "
            f"{undid}; event {event.id} records the undo"
        )


@cli.command()
@click.argument("a")
@click.argument("b")
@click.option("--kind", default="fact", show_default=True)
@click.option("--explain", is_flag=True, help="Show every score and finding.")
@json_option
@click.pass_context
def compare(ctx: click.Context, a: str, b: str, kind: str, explain: bool, as_json: bool) -> None:
    """What remembering B after A would do (writes nothing)."""
    c = _memory(ctx).compare(a, b, kind=kind)
    data: dict[str, Any] = {
        "action": c.action,
        "score": c.score,
        "method": c.method,
        "reason": c.reason,
        "lexical": {
            "score": c.lexical.score,
            "jaccard": c.lexical.jaccard,
            "containment": c.lexical.containment,
            "short_link": c.lexical.short_link,
            "winner": c.lexical.winner,
            "words_a": list(c.lexical.words_a),
            "words_b": list(c.lexical.words_b),
            "matches": [list(m) for m in c.lexical.matches],
        },
        "cosine": c.cosine,
        "findings": [{"check": f.check, "detail": f.detail} for f in c.findings],
        "frame_score": c.frame_score,
        "gates": [{"gate": name, "passed": passed} for name, passed in c.gates],
    }
    if as_json:
        _print_json(data)
        return
    # One line, one score: the one the reason names (a frame's, a cosine, the judge's).
    console.print(f"[bold]{c.action}[/bold]: {esc(c.reason)}")
    if explain:
        lex = data["lexical"]
        console.print(f"  similarity: {esc(c.method)} {c.score:.2f}")
        console.print(
            esc(
                f"  words A: {lex['words_a']}\n  words B: {lex['words_b']}\n"
                f"  matches: {lex['matches']}"
            )
            + f"\n  jaccard {c.lexical.jaccard:.2f}, "
            f"containment {c.lexical.containment:.2f}, short link "
            f"{c.lexical.short_link:.2f} -> {c.lexical.winner}"
        )
        for finding in c.findings:
            console.print(f"  finding: {esc(shown_words(str(finding), a, b))}")
        if c.findings:
            console.print(f"  frame score without the disagreeing words: {c.frame_score:.2f}")
        # Each line is a condition the decision read, true or not (not a test passed).
        for name, holds in c.gates:
            mark = "[green]yes[/green]" if holds else "[dim]no [/dim]"
            console.print(f"  {mark}  {esc(name)}")


def main() -> None:
    cli(prog_name="ankita")
