"""`ankita bench` and `ankita token`: measuring, and API tokens for `ankita serve`."""

from __future__ import annotations

import click
from rich.table import Table

from ankita._console import _memory, _print_json, console, err_console, esc, json_option
from ankita._errors import InvalidInput, NotFound


@click.command()
@click.option(
    "--facts",
    "sizes",
    default="1000,10000",
    show_default=True,
    help="Store sizes, comma-separated.",
)
@click.option(
    "--writes", default=300, show_default=True, type=int, help="Timed writes and recalls per size."
)
@click.option(
    "--exhaustive-writes",
    default=300,
    show_default=True,
    type=int,
    help="How many of those writes also go through the exhaustive reference.",
)
@click.option(
    "--writers",
    default=8,
    show_default=True,
    type=int,
    help="Then this many processes write at once (0 skips it).",
)
@click.option(
    "--writer-writes",
    default=200,
    show_default=True,
    type=int,
    help="Facts each of those processes writes.",
)
@click.option(
    "--plot",
    "plot_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Also draw latency against store size (.png).",
)
@click.option(
    "--real",
    "real_path",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Only the write cost of a real memory stream (LoCoMo JSON or JSONL of "
    "{text, stream?}), beside as many generated facts in the same run.",
)
@click.option(
    "--style",
    type=click.Choice(["short", "real"]),
    default="short",
    show_default=True,
    help="Generated facts: short ones of one user, or long multi-clause third-person ones "
    "like a real memory stream's.",
)
@click.option(
    "--corpus",
    "corpus_path",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Measure on your own facts instead (LoCoMo JSON or JSONL of {text}), in file order: "
    "it needs the largest size plus three times --writes facts.",
)
@json_option
@click.pass_context
def bench(
    ctx: click.Context,
    sizes: str,
    writes: int,
    exhaustive_writes: int,
    writers: int,
    writer_writes: int,
    plot_path: str | None,
    real_path: str | None,
    style: str,
    corpus_path: str | None,
    as_json: bool,
) -> None:
    """Measure remember/recall latency, import rate and memory at several store sizes, and
    throughput with concurrent writer processes. With `--db postgresql://...` it runs on new
    schemas in that database (dropped afterwards); otherwise on temporary SQLite files."""
    from ankita.dev._bench import bench as run_bench

    if real_path:
        _real_bench(ctx, real_path, as_json)
        return

    try:
        size_list = [int(x) for x in sizes.split(",") if x.strip()]
    except ValueError:
        raise InvalidInput(f"--facts takes whole numbers, got {sizes!r}") from None
    if not size_list or any(n < 10 for n in size_list) or writes < 1:
        raise InvalidInput("--facts sizes must be at least 10, and --writes at least 1")
    if writers < 0 or writer_writes < 1:
        raise InvalidInput("--writers must be 0 or more, and --writer-writes at least 1")
    if corpus_path:
        from ankita.dev._corpus import corpus_texts

        corpus_texts(corpus_path, max(size_list) + 3 * writes)  # refused before any work
    if plot_path:
        from ankita.dev._plot import check_can_plot

        check_can_plot(plot_path)
    embedder = ctx.find_root().obj["embedder"]
    db = ctx.find_root().obj["db"]
    server = db if db and str(db).startswith(("postgresql://", "postgres://")) else None

    def progress(n: int) -> None:
        err_console.print(
            f"[dim]bench: {n} facts ...[/dim]"
            if n > 0
            else f"[dim]bench: {-n} writer processes at once ...[/dim]"
        )

    report = run_bench(
        size_list,
        embedder,
        writes,
        exhaustive_writes,
        on_size=progress,
        server=server,
        judge=ctx.find_root().obj["judge"],
        writers=writers,
        writer_writes=writer_writes,
        style=style,
        corpus=corpus_path,
    )
    if plot_path:
        from ankita.dev._plot import latency_by_size

        report["plot"] = str(
            latency_by_size(
                report["runs"],
                f"ankita bench ({report['backend']}, embedder {embedder})",
                plot_path,
            )
        )
    if as_json:
        _print_json(report)
        return
    table = Table(
        title=f"ankita bench ({report['backend']}, embedder {esc(embedder)}, "
        f"facts: {esc(report['facts_from'])})"
    )
    columns = [
        "facts",
        "reference_ms",
        "remember_p50_ms",
        "remember_p95_ms",
        "recall_p50_ms",
        "recall_p95_ms",
        "import_facts_per_s",
        "peak_rss_mb",
        "serving_peak_rss_mb",
        "serving_remember_p50_ms",
        "serving_parse_ms_per_write",
        "exhaustive_speedup",
        "decisions_identical",
        "postings_load_s",
    ]
    if any("import_vs_embedder" in run for run in report["runs"]):
        columns += ["import_vs_embedder", "import_bound_vs_embedder"]
    # One row per figure and one column per store size: it fits in 80 columns, where a column
    # per figure (12 of them) cut every number to "10…".
    table.add_column("")
    for run in report["runs"]:
        table.add_column(f"{run.get('facts', '?')} facts", overflow="fold")
    for column in columns[1:]:
        values = [esc(str(run.get(column, run.get("error", "")))) for run in report["runs"]]
        table.add_row(column.replace("_", " "), *values)
    console.print(table)
    if "concurrent" in report:
        c = report["concurrent"]
        console.print(
            f"{c['processes']} writer processes x {c['writes_per_process']} facts: "
            f"{c.get('different_users_facts_per_s', c.get('different_users_error'))} "
            f"facts/s as different users, "
            f"{c.get('same_user_facts_per_s', c.get('same_user_error'))} facts/s as "
            "one user"
        )


def _real_bench(ctx: click.Context, path: str, as_json: bool) -> None:
    """`ankita bench --real FILE`: what one write of a real fact costs (`real_write_cost`)."""
    from ankita.dev._realcost import real_write_cost

    opts = ctx.find_root().obj
    report = real_write_cost(path, opts["embedder"], opts["judge"])
    report["embedder"] = opts["embedder"]
    if as_json:
        _print_json(report)
        return
    console.print(
        f"{report['facts']} facts in {report['streams']} streams, embedder "
        f"{esc(str(opts['embedder']))}"
    )
    for label in ("real", "generated"):
        console.print(
            f"  {label}: p50 {report[f'{label}_p50_ms']} ms, p95 "
            f"{report[f'{label}_p95_ms']} ms, CPU "
            f"{report[f'{label}_cpu_ms_per_write']} ms a write"
        )
    console.print(f"  real / generated CPU a write: {report['real_vs_generated_cpu']}x")


@click.group()
def token() -> None:
    """API tokens for `ankita serve` (only a hash is stored)."""


@token.command(name="create")
@click.option("--user", "for_user", required=True, help="The user this token acts as.")
@click.option("--label", default=None, help="A note to tell tokens apart.")
@click.pass_context
def token_create(ctx: click.Context, for_user: str, label: str | None) -> None:
    """Create a token and print it once."""
    from ankita.server._guards import create_token

    memory = _memory(ctx)
    click.echo(create_token(memory.store, for_user, label))
    err_console.print("Store it now: only its hash is kept.")


@token.command(name="list")
@json_option
@click.pass_context
def token_list(ctx: click.Context, as_json: bool) -> None:
    """List tokens (hash prefix, user, label, created)."""
    rows = _memory(ctx).store.tokens()
    if as_json:
        _print_json([{"id": r[0], "user": r[1], "label": r[2], "created_at": r[3]} for r in rows])
        return
    for prefix, user, label, created in rows:
        console.print(f"{prefix}  {esc(user)}  {esc(label or '')}  {created}")


@token.command(name="revoke")
@click.argument("token_id")
@click.pass_context
def token_revoke(ctx: click.Context, token_id: str) -> None:
    """Revoke a token by the id shown in `token list`."""
    if len(token_id) < 8 or not all(c in "0123456789abcdef" for c in token_id):
        raise InvalidInput("give the token id from `ankita token list` (12 hex characters)")
    memory = _memory(ctx)
    with memory.store.transaction() as store:
        if store.revoke_token(token_id) == 0:
            raise NotFound(f"no token {token_id}")
    console.print(f"revoked {token_id}")
