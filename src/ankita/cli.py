"""The `ankita` command: thin commands, each over one `Memory` method."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape as esc
from rich.table import Table

from . import __version__
from ._config import Settings
from ._embedders import Embedder, resolve_embedder
from ._errors import (
    AnkitaError,
    ChannelError,
    InvalidInput,
    ModelError,
    NotFound,
    StoreError,
    UndoError,
)
from ._eval import (
    Precomputed,
    builtin_multilingual_path,
    builtin_pairs_path,
    builtin_stream_labels_path,
    builtin_stream_path,
    evaluate,
    load_pairs,
)
from ._eval import by_source as source_report
from ._files import replacing
from ._jsonl import parse_object, read_jsonl
from ._memory import Memory
from ._models import Fact
from ._sql import FACT_ORDERS
from ._text import sentences, shown_words
from ._validate import check_import_row

T = TypeVar("T")
console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

# Exit codes by error class: scripts can tell bad input from a missing id from a broken store.
EXIT_CODES: list[tuple[type[AnkitaError], int]] = [
    (InvalidInput, 2), (NotFound, 3), (UndoError, 4), (StoreError, 5), (ModelError, 6),
    (ChannelError, 7), (AnkitaError, 1)]


class _Group(click.Group):
    """Translates every AnkitaError into one line on stderr and an exit code: the only place."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AnkitaError as exc:
            code = next(c for cls, c in EXIT_CODES if isinstance(exc, cls))
            err_console.print(f"[red]error[/red] ({exc.code}): {exc}", markup=True)
            sys.exit(code)


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _memory(ctx: click.Context) -> Memory:
    opts = ctx.find_root().obj
    memory = Memory(path=opts["db"], user=opts["user"], embedder=opts["embedder"],
                    judge=opts["judge"])
    ctx.call_on_close(memory.close)
    return memory


def _with_progress(label: str, quiet: bool,
                   call: Callable[[Callable[[int, int], None] | None], T]) -> T:
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


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ankita")
@click.option("--db", envvar="ANKITA_DB", default=None, metavar="PATH",
              help="SQLite file (default: memory.db in your user data folder). Env: ANKITA_DB.")
@click.option("--user", envvar="ANKITA_USER", default="default", show_default=True,
              help="Whose memory. Env: ANKITA_USER.")
@click.option("--embedder", envvar="ANKITA_EMBEDDER", default="auto", show_default=True,
              help="Embedder name (none, auto, ...). Env: ANKITA_EMBEDDER.")
@click.option("--judge", envvar="ANKITA_JUDGE", default="auto", show_default=True,
              type=click.Choice(["auto", "nli", "off"]),
              help="Contradiction judge: auto (when installed), nli (required) or off. "
                   "Env: ANKITA_JUDGE.")
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
def remember(ctx: click.Context, text: tuple[str, ...], kind: str, pin: bool, source: str,
             as_json: bool) -> None:
    """Remember TEXT: merge it, flag a conflict, or store it as new."""
    result = _memory(ctx).remember(" ".join(text), kind=kind, pinned=pin, source=source)
    if as_json:
        _print_json(result.to_dict())
        return
    verb = {"created": "[green]created[/green]", "merged": "[cyan]merged into[/cyan]",
            "conflict": "[yellow]conflict[/yellow]: stored"}[result.action]
    console.print(f"{verb} {result.fact.id}: {esc(result.fact.text)}")
    if result.conflicts_with:
        console.print(f"  flagged against: {', '.join(result.conflicts_with)}")
    console.print(f"  [dim]{result.method} score {result.score:.2f} - {esc(result.reason)}[/dim]")


@cli.command()
@click.argument("query", nargs=-1)
@click.option("--limit", default=8, show_default=True, type=int)
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (repeatable).")
@click.option("--prompt", is_flag=True, help="Print the block for a system prompt.")
@json_option
@click.pass_context
def recall(ctx: click.Context, query: tuple[str, ...], limit: int, kinds: tuple[str, ...],
           prompt: bool, as_json: bool) -> None:
    """Facts relevant to QUERY, pinned facts, and conflicts with the notice."""
    result = _memory(ctx).recall(" ".join(query), limit=limit, kinds=list(kinds) or None)
    if as_json:
        _print_json(result.to_dict())
    elif prompt:
        click.echo(result.to_prompt())
    else:
        table = Table()
        for column in ("id", "text", "score", "flags"):
            table.add_column(column, overflow="fold")
        for item in result.facts:
            flags = [n for n, on in (("pinned", item.pinned), ("stale", item.stale),
                                     ("conflict", item.conflicting)) if on]
            table.add_row(item.fact.id, esc(item.fact.text), f"{item.score:.2f}", ", ".join(flags))
        console.print(table)
        if result.notice:
            console.print(f"[yellow]{result.notice}[/yellow]")


@cli.command(name="list")
@click.option("--kind", default=None)
@click.option("--all", "show_all", is_flag=True, help="Include superseded facts.")
@click.option("--search", default=None, help="Only facts whose text contains this.")
@click.option("--only", type=click.Choice(["pinned", "conflicting"]), default=None,
              help="Only pinned, or only conflicting, facts.")
@click.option("--sort", "order", type=click.Choice(sorted(FACT_ORDERS)), default="said",
              show_default=True, help="Order by this (then the order said).")
@click.option("--desc", is_flag=True, help="Largest (or latest) first.")
@click.option("--limit", type=click.IntRange(1), default=None, help="At most this many facts.")
@click.option("--offset", type=click.IntRange(0), default=0, help="Skip this many first.")
@json_option
@click.pass_context
def list_(ctx: click.Context, kind: str | None, show_all: bool, search: str | None,
          only: str | None, order: str, desc: bool, limit: int | None, offset: int,
          as_json: bool) -> None:
    """List facts, oldest first (or by --sort), a page at a time with --limit/--offset."""
    memory = _memory(ctx)
    facts = memory.list(kind=kind, include_superseded=show_all, search=search, limit=limit,
                        offset=offset, order=order, descending=desc, only=only)
    if as_json:
        _print_json([f.to_dict() for f in facts])
        return
    console.print(_facts_table(facts))
    if limit is not None or offset:
        total = memory.count(kind, show_all, search, only)
        err_console.print(f"{offset + 1 if facts else offset}-{offset + len(facts)} of "
                          f"{total} facts")


@cli.command()
@click.argument("fact_id")
@json_option
@click.pass_context
def show(ctx: click.Context, fact_id: str, as_json: bool) -> None:
    """Show one fact."""
    fact = _memory(ctx).get(fact_id)
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
        fact = call(_memory(ctx), fact_id)
        if as_json:
            _print_json(fact.to_dict())
        else:
            console.print(f"{done} {fact.id}: {esc(fact.text)}")


_simple("forget", "Forget a fact (recorded in history; `undo` brings it back).",
        lambda m, i: m.forget(i), "forgot")
_simple("pin", "Pin a fact: it is always recalled and never goes stale.",
        lambda m, i: m.pin(i), "pinned")
_simple("unpin", "Unpin a fact.", lambda m, i: m.unpin(i), "unpinned")


@cli.command()
@click.option("--limit", type=click.IntRange(1, 100_000), default=100, show_default=True,
              help="Show at most this many pairs.")
@click.option("--offset", type=click.IntRange(0), default=0, help="Skip this many first.")
@json_option
@click.pass_context
def conflicts(ctx: click.Context, limit: int, offset: int, as_json: bool) -> None:
    """List flagged pairs, a page at a time."""
    memory = _memory(ctx)
    pairs = memory.conflicts(limit, offset)
    if as_json:
        _print_json([c.to_dict() for c in pairs])
        return
    if not pairs:
        console.print("no conflicts")
    for c in pairs:
        console.print(f"{c.a.id}: {esc(c.a.text)}\n  [yellow]vs[/yellow] {c.b.id}: {esc(c.b.text)}")
    total = memory.conflict_count()
    if offset + len(pairs) < total:
        err_console.print(f"{offset + len(pairs)} of {total} pairs shown; "
                          f"--offset {offset + len(pairs)} shows the next")


@cli.command(name="clear-conflict")
@click.argument("a")
@click.argument("b")
@click.pass_context
def clear_conflict(ctx: click.Context, a: str, b: str) -> None:
    """Both A and B are true: remove the flag from both sides."""
    _memory(ctx).clear_conflict(a, b)
    console.print(f"cleared the conflict between {a} and {b}")


@cli.command()
@click.argument("keep")
@click.argument("over")
@json_option
@click.pass_context
def resolve(ctx: click.Context, keep: str, over: str, as_json: bool) -> None:
    """KEEP is current: OVER becomes superseded (reversible with undo)."""
    fact = _memory(ctx).resolve(keep=keep, over=over)
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
    events = _memory(ctx).history(fact_id)
    if as_json:
        _print_json([e.to_dict() for e in events])
        return
    table = Table()
    for column in ("event", "at", "type", "detail", "undone by"):
        table.add_column(column, overflow="fold")
    for e in events:
        detail = e.data.get("phrasing") or e.data.get("text") or e.data.get("after") or ""
        if e.other_id:
            detail = f"{detail} (with {e.other_id})".strip()
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
        console.print(f"undid {', '.join(event.data['types'])} (event {event.id})")


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
            "action": c.action, "score": c.score, "method": c.method, "reason": c.reason,
            "lexical": {"score": c.lexical.score, "jaccard": c.lexical.jaccard,
                        "containment": c.lexical.containment,
                        "short_link": c.lexical.short_link, "winner": c.lexical.winner,
                        "words_a": list(c.lexical.words_a), "words_b": list(c.lexical.words_b),
                        "matches": [list(m) for m in c.lexical.matches]},
            "cosine": c.cosine, "findings": [{"check": f.check, "detail": f.detail}
                                             for f in c.findings],
            "frame_score": c.frame_score,
            "gates": [{"gate": name, "passed": passed} for name, passed in c.gates]}
    if as_json:
        _print_json(data)
        return
    console.print(f"[bold]{c.action}[/bold] ({c.method} {c.score:.2f}): {esc(c.reason)}")
    if explain:
        lex = data["lexical"]
        console.print(esc(f"  words A: {lex['words_a']}\n  words B: {lex['words_b']}\n"
                          f"  matches: {lex['matches']}") + f"\n  jaccard {c.lexical.jaccard:.2f}, "
                      f"containment {c.lexical.containment:.2f}, short link "
                      f"{c.lexical.short_link:.2f} -> {c.lexical.winner}")
        for finding in c.findings:
            console.print(f"  finding: {esc(shown_words(str(finding), a, b))}")
        if c.findings:
            console.print(f"  frame score without the disagreeing words: {c.frame_score:.2f}")
        for name, passed in c.gates:
            mark = "[green]pass[/green]" if passed else "[red]fail[/red]"
            console.print(f"  {mark}  {esc(name)}")


@cli.command(name="eval")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--errors", is_flag=True, help="Also list every pair decided wrongly.")
@click.option("--plain", is_flag=True, help="Plain rules only (no disagreement check).")
@click.option("--by-source", is_flag=True, help="Also score each `source` separately.")
@click.option("--multilingual", is_flag=True,
              help="Score the built-in pairs in twelve languages besides English, per language "
                   "(implies --by-source).")
@click.option("--plot", "plot_path", default=None, type=click.Path(dir_okay=False),
              help="Also draw score distributions per gold label, thresholds marked (.png).")
@click.option("--stream", is_flag=True,
              help="FILE is a memory stream (LoCoMo JSON, or JSONL of {text, stream?}): write "
                   "it in order into a fresh store per stream and score its merges and flags "
                   "(default: the built-in stream and its labels).")
@click.option("--labels", "labels_path", default=None,
              type=click.Path(exists=True, dir_okay=False),
              help="With --stream: labelled pairs {conv|stream, a, b, label} to score against.")
@click.option("--recall", "recall_set", is_flag=True,
              help="FILE holds conversations and questions (LoCoMo JSON, or JSONL of {facts, "
                   "questions}): write each one's facts, ask its questions, score hit@k/full@k.")
@click.option("--k", "ks", default="5,10", show_default=True,
              help="With --recall: the cut-offs, comma-separated.")
@click.option("--convs", default=None,
              help="With --stream or --recall: which streams, e.g. 0-2 or 0,3.")
@json_option
@click.pass_context
def eval_(ctx: click.Context, file: str | None, errors: bool, plain: bool, by_source: bool,
          multilingual: bool, plot_path: str | None, stream: bool, labels_path: str | None,
          recall_set: bool, ks: str, convs: str | None, as_json: bool) -> None:
    """Score merge/conflict decisions on labelled pairs (default: the built-in set), on a
    memory stream written in order (--stream), or recall on questions (--recall)."""
    opts = ctx.find_root().obj
    if multilingual:
        if file or stream or labels_path or recall_set or convs:
            raise InvalidInput("--multilingual scores the built-in multilingual pairs: no FILE, "
                               "--stream or --recall")
        file, by_source = str(builtin_multilingual_path()), True
    if recall_set:
        if not file or stream or labels_path or plot_path or by_source or errors or plain:
            raise InvalidInput("--recall takes FILE, and only --k, --convs and --json")
        _eval_recall(opts, file, ks, convs, as_json)
        return
    if stream or labels_path or convs:
        if not stream:
            raise InvalidInput("--labels and --convs go with --stream")
        if not file:  # the stream and labels that ship with Ankita
            file, labels_path = str(builtin_stream_path()), labels_path or str(
                builtin_stream_labels_path())
        if plot_path or by_source:
            raise InvalidInput("--plot and --by-source are for labelled pairs, not --stream")
        _eval_stream(opts, file, labels_path, convs, plain, errors, as_json)
        return
    if plot_path:
        from ._plot import check_can_plot

        check_can_plot(plot_path)
    pairs = load_pairs(file or builtin_pairs_path())
    inner = resolve_embedder(opts["embedder"])
    name = inner.model_id if inner is not None else "none"
    embedder: Embedder | str = "none"
    if inner is not None:
        texts = [t for p in pairs for t in (p["a"], p["b"])]
        # A write also embeds each sentence of a text that has several.
        embedder = Precomputed(inner, texts + [x for t in texts for x in sentences(t)])

    def fresh() -> Memory:
        return Memory(":memory:", embedder=embedder, detect_disagreement=not plain,
                      judge=opts["judge"])

    report, rows = evaluate(pairs, fresh, name)
    if plot_path:
        from ._plot import score_distributions

        # The lines the evaluated memories used (environment included), not the bare defaults.
        merge, conflict = Settings.from_env().thresholds("fact")
        title = (f"{Path(file).name if file else 'built-in pairs'}: embedder {name}, "
                 f"macro-F1 {report['macro_f1']:.3f}")
        report["plot"] = str(score_distributions(
            rows, {"merge line": merge, "conflict line": conflict}, title, plot_path))
    if by_source:
        report["by_source"] = source_report(rows, name)
    if errors:
        report["errors"] = [r for r in rows if r["label"] != r["predicted"]]
    if as_json:
        _print_json(report)
        return
    console.print(f"pairs {report['pairs']}  accuracy {report['accuracy']:.3f}  macro-F1 "
                  f"{report['macro_f1']:.3f}  wrong merges {report['wrong_merge_rate']:.1%}"
                  f"  embedder {name}")
    table = Table()
    for column in ("label", "precision", "recall", "f1", "support"):
        table.add_column(column)
    for label, v in report["labels"].items():
        table.add_row(label, f"{v['precision']:.3f}", f"{v['recall']:.3f}", f"{v['f1']:.3f}",
                      str(v["support"]))
    console.print(table)
    for source, figures in report.get("by_source", {}).items():
        console.print(f"  {esc(source)}: {figures['pairs']} pairs, macro-F1 "
                      f"{figures['macro_f1']:.3f}, wrong merges "
                      f"{figures['wrong_merge_rate']:.1%}")
    for r in report.get("errors", []):
        console.print(esc(f"  {r['label']} -> {r['predicted']}: {r['a']} | {r['b']}"))


def _precomputed(opts: dict[str, Any], texts: list[str]) -> tuple[Embedder | str, str]:
    """The chosen embedder with these texts (and their sentences) embedded in batches up
    front, and its model id ("none" without one)."""
    inner = resolve_embedder(opts["embedder"])
    if inner is None:
        return "none", "none"
    return Precomputed(inner, texts + [x for t in texts for x in sentences(t)]), inner.model_id


def _eval_recall(opts: dict[str, Any], file: str, ks: str, convs: str | None,
                 as_json: bool) -> None:
    """`ankita eval --recall`: one fresh store per conversation (`_recall_eval`)."""
    import tempfile

    from ._recall_eval import CATEGORIES, load_recall_set, run_recall
    from ._stream import select

    try:
        cutoffs = sorted({int(k) for k in ks.split(",") if k.strip()})
    except ValueError:
        raise InvalidInput(f"--k takes whole numbers, got {ks!r}") from None
    if not cutoffs or not all(1 <= k <= 200 for k in cutoffs):
        raise InvalidInput("--k takes cut-offs from 1 to 200")
    streams = select(load_recall_set(file), convs)
    texts = [t for s in streams for t, _ in s.facts] + [q for s in streams
                                                         for q, _, _ in s.questions]
    embedder, name = _precomputed(opts, texts)
    with tempfile.TemporaryDirectory(prefix="ankita-recall-") as folder:
        report = run_recall(streams, _fresh_stores(folder, embedder, opts["judge"]), cutoffs)
    report["embedder"] = name
    if as_json:
        _print_json(report)
        return
    console.print(f"questions {report['questions']} over {report['facts']} facts  embedder "
                  f"{name}  recall p50 {report['recall_p50_ms']} ms, p95 "
                  f"{report['recall_p95_ms']} ms")
    table = Table()
    for column in ("", "all", *CATEGORIES.values()):
        table.add_column(column)
    for key in (f"{m}@{k}" for k in cutoffs for m in ("hit", "full")):
        table.add_row(key, f"{report[key]:.3f}", *(
            f"{report[f'{key}:{c}']:.3f}" if f"{key}:{c}" in report else "-"
            for c in CATEGORIES.values()))
    console.print(table)


def _fresh_stores(folder: str, embedder: Embedder | str, judge: str | None,
                  plain: bool = False) -> Callable[[Any], Memory]:
    """A new store file in `folder` for each stream asked for: a file, as a user's store is,
    so the candidate index and its tiers run as they do in use."""
    numbers = iter(range(1_000_000))

    def fresh(stream: Any) -> Memory:
        return Memory(Path(folder) / f"{next(numbers)}.db", embedder=embedder,
                      detect_disagreement=not plain, judge=judge)
    return fresh


def _eval_stream(opts: dict[str, Any], file: str, labels_path: str | None, convs: str | None,
                 plain: bool, errors: bool, as_json: bool) -> None:
    """`ankita eval --stream`: one fresh store per stream, written in order (`_stream`)."""
    import tempfile

    from ._stream import load_labels, load_streams, run_stream, select

    streams = select(load_streams(file), convs)
    labels = load_labels(labels_path) if labels_path else {}
    embedder, name = _precomputed(opts, [t for s in streams for t, _ in s.facts])
    with tempfile.TemporaryDirectory(prefix="ankita-stream-") as folder:
        report, flagged = run_stream(streams, labels,
                                     _fresh_stores(folder, embedder, opts["judge"], plain))
    report["embedder"] = name
    if errors:
        # Flags a person labelled otherwise, and flags nobody labelled yet (to label next).
        report["errors"] = [f for f in flagged if f["label"] is None or f["label"] != (
            "conflict" if f["action"] == "conflict" else "duplicate")]
    if as_json:
        _print_json(report)
        return
    console.print(
        f"streams {report['streams']}  facts {report['facts']}  embedder {name}\n"
        f"conflict writes {report['conflict_writes_per_1k']} per 1,000 facts, links "
        f"{report['conflict_links_per_1k']} (on pairs labelled duplicate or neither: "
        f"{report['false_conflict_links_per_1k']}); merges {report['merges_per_1k']}\n"
        f"merge precision {report['merge_precision']}, conflict precision "
        f"{report['conflict_precision']}; recall of labelled duplicates "
        f"{report['duplicate_recall']}, of labelled conflicts {report['conflict_recall']}; "
        f"flagged and unlabelled {report['flagged_unlabelled']}\n"
        f"write p50 {report['write_p50_ms']} ms, p95 {report['write_p95_ms']} ms")
    for f in report.get("errors", []):
        console.print(esc(f"  {f['action']} ({f['label'] or 'unlabelled'}): {f['a']} | "
                          f"{f['b']}\n    {f['reason']}"))



@cli.command()
@click.option("--batch-size", default=32, show_default=True, type=int)
@json_option
@click.pass_context
def reindex(ctx: click.Context, batch_size: int, as_json: bool) -> None:
    """Embed every fact that has no vector from the current embedder (or lost it)."""
    memory = _memory(ctx)
    report = _with_progress("embedding", as_json, lambda progress: memory.reindex(
        batch_size=batch_size, progress=progress))
    if as_json:
        _print_json(report)
        return
    console.print(f"{report['model']}: {report['embedded']} embedded, {report['failed']} "
                  f"failed, of {report['missing']} missing")
    for error in report["errors"]:
        console.print(f"  [red]{esc(error)}[/red]")
    if report["failed"]:
        sys.exit(1)


@cli.command(name="import")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@json_option
@click.pass_context
def import_(ctx: click.Context, file: Any, as_json: bool) -> None:
    """Import a JSONL file: an `ankita export` (restored exactly, into an empty memory), or
    one fact per line ({"text", "kind"?, "pinned"?, "source"?}).

    Plain lines go through the normal write path, so duplicates merge and conflicts are
    flagged. A malformed line stops the import before anything is written.
    """
    from ._dump import check_record, is_dump_header

    lines = list(file)
    first = next((line for line in lines if line.strip()), "")
    memory = _memory(ctx)
    if first and is_dump_header(parse_object(first, f"{file.name}:1")):
        counts = memory.restore(read_jsonl(lines, file.name, check_record))
    else:
        rows = read_jsonl(lines, file.name, check_import_row)
        counts = _with_progress("importing", as_json,
                                lambda progress: memory.import_rows(rows, progress=progress))
    if as_json:
        _print_json(counts)
    else:
        console.print(", ".join(f"{v} {k}" for k, v in counts.items()))


@cli.command()
@click.option("--output", "-o", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              help="A file (written beside it first, then renamed over it, 0600), or - for "
                   "standard output.")
@click.option("--vectors", is_flag=True, help="Include the stored vectors (base64 float32).")
@click.pass_context
def export(ctx: click.Context, output: str, vectors: bool) -> None:
    """Write the user's whole memory (facts, links, history) as JSONL; `import` restores it."""
    rows = _memory(ctx).export(vectors=vectors)
    header = next(rows)
    if header["left_out"]:
        err_console.print(f"left out {len(header['left_out'])} facts whose stored text is not "
                          f"valid UTF-8: {', '.join(header['left_out'])} (see `ankita doctor`)")
    rows = itertools.chain([header], rows)
    if output == "-":
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    try:
        with replacing(output) as partial, open(partial, "w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise StoreError(f"cannot write {output}: {exc.strerror or exc}; "
                         "any earlier file there is unchanged") from None


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.pass_context
def backup(ctx: click.Context, file: str) -> None:
    """Copy the whole store to FILE with SQLite's online backup (safe while writers run)."""
    path = _memory(ctx).backup(file)
    err_console.print(f"backed up to {esc(path)}")


@cli.command()
@click.option("--repair", is_flag=True,
              help="Fix what is safe: rebuild indexes, drop links and vectors that point at "
                   "nothing. Facts and history are never changed.")
@json_option
@click.pass_context
def doctor(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Check the store: schema, SQLite integrity, links, history, indexes, vectors."""
    memory = _memory(ctx)
    report = memory.doctor(repair=repair)
    if as_json:
        _print_json(report)
    else:
        console.print(f"{esc(memory.path)} (schema {report['schema_version']}): "
                      + ("[green]ok[/green]" if report["ok"] else "[red]problems[/red]"))
        for check in report["checks"]:
            mark = "[green]ok[/green]" if check["ok"] else "[red]FAIL[/red]"
            console.print(f"  {mark} {esc(check['name'])}")
            for problem in check["problems"][:20]:
                console.print(f"      - {esc(problem)}")
            if len(check["problems"]) > 20:
                console.print(f"      ... and {len(check['problems']) - 20} more")
            if check["problems"] and check["repairable"]:
                console.print("      (`ankita doctor --repair` can fix this)")
        for done in report["repaired"]:
            console.print(f"  [cyan]repaired:[/cyan] {esc(done)}")
        vectors = report["vectors"]
        if vectors["current_model"] and vectors["facts_without_current_vectors"]:
            console.print(f"  {vectors['facts_without_current_vectors']} facts have no vector "
                          f"from {esc(vectors['current_model'])}: `ankita reindex` adds them")
    if not report["ok"]:
        sys.exit(1)


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=int)
@click.pass_context
def serve(ctx: click.Context, host: str, port: int) -> None:
    """Serve the memory API and the review page over HTTP (OpenAPI schema at /openapi.json)."""
    import uvicorn

    from ._config import default_db_path
    from ._server import check_bind, create_app, is_loopback

    opts = ctx.find_root().obj
    path = opts["db"] or str(default_db_path())
    check_bind(host, path)
    app = create_app(path, default_user=opts["user"], embedder=opts["embedder"],
                     judge=opts["judge"],
                     anonymous=is_loopback(host))
    err_console.print(f"ankita serving {esc(path)} on http://{host}:{port} "
                      "(review page: /, API schema: /openapi.json)")
    # SIGTERM: stop taking requests, and give the ones running 3 s before closing them.
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=3)


@cli.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Run an MCP server over stdio with the memory tools (for desktop MCP clients)."""
    from ._mcp import run_stdio

    run_stdio(_memory(ctx))


@cli.command(name="tools")
@click.option("--format", "fmt", type=click.Choice(["openai", "anthropic"]), default="openai",
              show_default=True)
def tools_(fmt: str) -> None:
    """Print the memory tools as JSON schemas for function-calling agents."""
    from .tools import anthropic_tools, openai_tools

    _print_json(openai_tools() if fmt == "openai" else anthropic_tools())


@cli.command()
@click.option("--keep", is_flag=True, help="Keep the temporary store and print its path.")
@click.pass_context
def demo(ctx: click.Context, keep: bool) -> None:
    """A one-minute tour on a temporary store: merge, conflict, notice, resolve, undo."""
    from ._demo import run_demo

    run_demo(console, keep=keep, embedder=ctx.find_root().obj["embedder"])


def main() -> None:
    cli(prog_name="ankita")


def _add_more_commands() -> None:
    # Imported last: these commands reuse this module's helpers.
    from ._cli_ops import bench, token
    from .companion._cli import apps, channels, chat, persona, tasks, voice

    for command in (bench, token, chat, persona, tasks, apps, voice, channels):
        cli.add_command(command)


_add_more_commands()
