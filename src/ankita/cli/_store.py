"""Commands on the whole store: reindex, import, export, backup, doctor, serve, mcp, tools
and demo."""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

import click

from ankita._console import (
    _memory,
    _print_json,
    _with_progress,
    console,
    err_console,
    esc,
    json_option,
)
from ankita._errors import (
    StoreError,
)
from ankita._files import replacing
from ankita._jsonl import parse_object, read_jsonl
from ankita._validate import check_import_row
from ankita.cli._main import cli


@cli.command()
@click.option("--batch-size", default=32, show_default=True, type=int)
@click.option(
    "--multilingual",
    is_flag=True,
    help="Embed the facts that lack a vector in the multilingual space (the backfill).",
)
@json_option
@click.pass_context
def reindex(ctx: click.Context, batch_size: int, multilingual: bool, as_json: bool) -> None:
    """Embed every fact that has no vector from the current embedder (or lost it)."""
    memory = _memory(ctx)
    report = _with_progress(
        "embedding",
        as_json,
        lambda progress: memory.reindex(
            batch_size=batch_size, progress=progress, multilingual=multilingual
        ),
    )
    if as_json:
        _print_json(report)
        return
    console.print(
        f"{report['model']}: {report['embedded']} embedded, {report['failed']} "
        f"failed, of {report['missing']} missing"
    )
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
    from ankita.ops._dump import check_record, is_dump_header

    lines = list(file)
    first = next((line for line in lines if line.strip()), "")
    memory = _memory(ctx)
    if first and is_dump_header(parse_object(first, f"{file.name}:1")):
        counts = memory.restore(read_jsonl(lines, file.name, check_record))
    else:
        rows = read_jsonl(lines, file.name, check_import_row)
        counts = _with_progress(
            "importing", as_json, lambda progress: memory.import_rows(rows, progress=progress)
        )
    if as_json:
        _print_json(counts)
    else:
        console.print(", ".join(f"{v} {k}" for k, v in counts.items()))


@cli.command()
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    help="A file (written beside it first, then renamed over it, 0600), or - for standard output.",
)
@click.option("--vectors", is_flag=True, help="Include the stored vectors (base64 float32).")
@click.pass_context
def export(ctx: click.Context, output: str, vectors: bool) -> None:
    """Write the user's whole memory (facts, links, history) as JSONL; `import` restores it."""
    rows = _memory(ctx).export(vectors=vectors)
    header = next(rows)
    if header["left_out"]:
        err_console.print(
            f"left out {len(header['left_out'])} facts whose stored text is not "
            f"valid UTF-8: {', '.join(header['left_out'])} (see `ankita doctor`)"
        )
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
        raise StoreError(
            f"cannot write {output}: {exc.strerror or exc}; any earlier file there is unchanged"
        ) from None


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.pass_context
def backup(ctx: click.Context, file: str) -> None:
    """Copy the whole store to FILE with SQLite's online backup (safe while writers run)."""
    path = _memory(ctx).backup(file)
    err_console.print(f"backed up to {esc(path)}")


@cli.command()
@click.option(
    "--repair",
    is_flag=True,
    help="Fix what is safe: rebuild indexes, drop links and vectors that point at "
    "nothing. Facts and history are never changed.",
)
@json_option
@click.pass_context
def doctor(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Check the store: schema, SQLite integrity, links, history, indexes, vectors."""
    memory = _memory(ctx)
    report = memory.doctor(repair=repair)
    if as_json:
        _print_json(report)
    else:
        console.print(
            f"{esc(memory.path)} (schema {report['schema_version']}): "
            + ("[green]ok[/green]" if report["ok"] else "[red]problems[/red]")
        )
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
            console.print(
                f"  {vectors['facts_without_current_vectors']} facts have no vector "
                f"from {esc(vectors['current_model'])}: `ankita reindex` adds them"
            )
    if not report["ok"]:
        sys.exit(1)


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=int)
@click.pass_context
def serve(ctx: click.Context, host: str, port: int) -> None:
    """Serve the memory API and the review page over HTTP (OpenAPI schema at /openapi.json)."""
    import uvicorn

    from ankita._config import default_db_path
    from ankita.server._guards import TimedH11, is_loopback
    from ankita.server._server import check_bind, create_app

    opts = ctx.find_root().obj
    path = opts["db"] or str(default_db_path())
    check_bind(host, path)
    app = create_app(
        path,
        default_user=opts["user"],
        embedder=opts["embedder"],
        judge=opts["judge"],
        anonymous=is_loopback(host),
    )
    if not _port_free(host, port):
        # Before claiming to serve: uvicorn would print our line, then fail on the port.
        err_console.print(
            f"[red]error[/red] (port_in_use): {esc(host)}:{port} is taken by another program "
            "(another `ankita serve`?); stop it or choose another --port"
        )
        sys.exit(8)
    err_console.print(
        f"ankita serving {esc(path)} on http://{host}:{port} "
        "(review page: /, API schema: /openapi.json)"
    )
    # SIGTERM: stop taking requests, and give the ones running 3 s before closing them.
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=3,
        http=TimedH11,
    )


def _port_free(host: str, port: int) -> bool:
    """Whether a server could listen on host:port now (as uvicorn binds, SO_REUSEADDR set)."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError:
        return True  # a name that does not resolve: uvicorn says so itself
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError:
            return False
    return True


@cli.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Run an MCP server over stdio with the memory tools (for desktop MCP clients)."""
    from ankita.server._mcp import run_stdio

    run_stdio(_memory(ctx))


@cli.command(name="tools")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["openai", "anthropic"]),
    default="openai",
    show_default=True,
)
def tools_(fmt: str) -> None:
    """Print the memory tools as JSON schemas for function-calling agents."""
    from ankita.tools import anthropic_tools, openai_tools

    _print_json(openai_tools() if fmt == "openai" else anthropic_tools())


@cli.command()
@click.option("--keep", is_flag=True, help="Keep the temporary store and print its path.")
@click.pass_context
def demo(ctx: click.Context, keep: bool) -> None:
    """A one-minute tour on a temporary store: merge, conflict, notice, resolve, undo."""
    from ankita.dev._demo import run_demo

    run_demo(console, keep=keep, embedder=ctx.find_root().obj["embedder"])
