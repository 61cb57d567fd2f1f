"""`ankita eval`: decisions on labelled pairs, on a memory stream written in order, and recall on
questions; each a fresh store through the normal write path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from ankita._config import Settings
from ankita._console import (
    _print_json,
    console,
    esc,
    json_option,
)
from ankita._errors import (
    InvalidInput,
)
from ankita._memory import Memory
from ankita.analysis._text import sentences
from ankita.cli._main import cli
from ankita.dev._eval import (
    Precomputed,
    builtin_multilingual_path,
    builtin_pairs_path,
    builtin_stream_labels_path,
    builtin_stream_path,
    evaluate,
    load_pairs,
)
from ankita.dev._eval import by_source as source_report
from ankita.embed._embedders import Embedder, resolve_embedder


@cli.command(name="eval")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--errors", is_flag=True, help="Also list every pair decided wrongly.")
@click.option("--plain", is_flag=True, help="Plain rules only (no disagreement check).")
@click.option(
    "--by-source",
    is_flag=True,
    help="Also score each `source` separately (with --stream or --recall: each stream, "
    "worst first).",
)
@click.option(
    "--multilingual",
    is_flag=True,
    help="Score the built-in pairs in twelve languages besides English, per language "
    "(implies --by-source).",
)
@click.option(
    "--plot",
    "plot_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Also draw score distributions per gold label, thresholds marked (.png).",
)
@click.option(
    "--stream",
    is_flag=True,
    help="FILE is a memory stream (LoCoMo JSON, or JSONL of {text, stream?}): write "
    "it in order into a fresh store per stream and score its merges and flags "
    "(default: the built-in stream and its labels).",
)
@click.option(
    "--labels",
    "labels_path",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="With --stream: labelled pairs {conv|stream, a, b, label} to score against.",
)
@click.option(
    "--recall",
    "recall_set",
    is_flag=True,
    help="FILE holds conversations and questions (LoCoMo JSON, or JSONL of {facts, "
    "questions}): write each one's facts, ask its questions, score hit@k/full@k.",
)
@click.option(
    "--k",
    "ks",
    default="5,10",
    show_default=True,
    help="With --recall: the cut-offs, comma-separated.",
)
@click.option(
    "--convs", default=None, help="With --stream or --recall: which streams, e.g. 0-2 or 0,3."
)
@json_option
@click.pass_context
def eval_(
    ctx: click.Context,
    file: str | None,
    errors: bool,
    plain: bool,
    by_source: bool,
    multilingual: bool,
    plot_path: str | None,
    stream: bool,
    labels_path: str | None,
    recall_set: bool,
    ks: str,
    convs: str | None,
    as_json: bool,
) -> None:
    """Score merge/conflict decisions on labelled pairs (default: the built-in set), on a
    memory stream written in order (--stream), or recall on questions (--recall)."""
    opts = ctx.find_root().obj
    if multilingual:
        if file or stream or labels_path or recall_set or convs:
            raise InvalidInput(
                "--multilingual scores the built-in multilingual pairs: no FILE, "
                "--stream or --recall"
            )
        file, by_source = str(builtin_multilingual_path()), True
    if recall_set:
        if not file or stream or labels_path or plot_path or errors or plain:
            raise InvalidInput("--recall takes FILE, and only --k, --convs, --by-source and --json")
        _eval_recall(opts, file, ks, convs, as_json, by_source)
        return
    if stream or labels_path or convs:
        if not stream:
            raise InvalidInput("--labels and --convs go with --stream")
        if not file:  # the stream and labels that ship with Ankita
            file, labels_path = (
                str(builtin_stream_path()),
                labels_path or str(builtin_stream_labels_path()),
            )
        if plot_path:
            raise InvalidInput("--plot is for labelled pairs, not --stream")
        _eval_stream(opts, file, labels_path, convs, plain, errors, as_json, by_source)
        return
    if plot_path:
        from ankita.dev._plot import check_can_plot

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
        return Memory(
            ":memory:", embedder=embedder, detect_disagreement=not plain, judge=opts["judge"]
        )

    report, rows = evaluate(pairs, fresh, name)
    if plot_path:
        from ankita.dev._plot import score_distributions

        # The lines the evaluated memories used (environment included), not the bare defaults.
        merge, conflict = Settings.from_env().thresholds("fact")
        title = (
            f"{Path(file).name if file else 'built-in pairs'}: embedder {name}, "
            f"macro-F1 {report['macro_f1']:.3f}"
        )
        report["plot"] = str(
            score_distributions(
                rows, {"merge line": merge, "conflict line": conflict}, title, plot_path
            )
        )
    if by_source:
        report["by_source"] = source_report(rows, name)
    if errors:
        report["errors"] = [r for r in rows if r["label"] != r["predicted"]]
    if as_json:
        _print_json(report)
        return
    console.print(
        f"pairs {report['pairs']}  accuracy {report['accuracy']:.3f}  macro-F1 "
        f"{report['macro_f1']:.3f}  wrong merges {report['wrong_merge_rate']:.1%}"
        f"  embedder {name}"
    )
    table = Table()
    for column in ("label", "precision", "recall", "f1", "support"):
        table.add_column(column)
    for label, v in report["labels"].items():
        table.add_row(
            label,
            f"{v['precision']:.3f}",
            f"{v['recall']:.3f}",
            f"{v['f1']:.3f}",
            str(v["support"]),
        )
    console.print(table)
    for source, figures in report.get("by_source", {}).items():
        console.print(
            f"  {esc(source)}: {figures['pairs']} pairs, macro-F1 "
            f"{figures['macro_f1']:.3f}, wrong merges "
            f"{figures['wrong_merge_rate']:.1%}"
        )
    for r in report.get("errors", []):
        console.print(esc(f"  {r['label']} -> {r['predicted']}: {r['a']} | {r['b']}"))


def _precomputed(opts: dict[str, Any], texts: list[str]) -> tuple[Embedder | str, str]:
    """The chosen embedder with these texts (and their sentences) embedded in batches up
    front, and its model id ("none" without one)."""
    inner = resolve_embedder(opts["embedder"])
    if inner is None:
        return "none", "none"
    return Precomputed(inner, texts + [x for t in texts for x in sentences(t)]), inner.model_id


def _eval_recall(
    opts: dict[str, Any],
    file: str,
    ks: str,
    convs: str | None,
    as_json: bool,
    by_stream: bool = False,
) -> None:
    """`ankita eval --recall`: one fresh store per conversation (`_recall_eval`); with
    `by_stream` (`--by-source`), each conversation's figures too, worst first."""
    import tempfile

    from ankita.dev._recall_eval import CATEGORIES, load_recall_set, run_recall
    from ankita.dev._stream import select

    try:
        cutoffs = sorted({int(k) for k in ks.split(",") if k.strip()})
    except ValueError:
        raise InvalidInput(f"--k takes whole numbers, got {ks!r}") from None
    if not cutoffs or not all(1 <= k <= 200 for k in cutoffs):
        raise InvalidInput("--k takes cut-offs from 1 to 200")
    streams = select(load_recall_set(file), convs)
    texts = [t for s in streams for t, _ in s.facts] + [
        q for s in streams for q, _, _ in s.questions
    ]
    embedder, name = _precomputed(opts, texts)
    with tempfile.TemporaryDirectory(prefix="ankita-recall-") as folder:
        report = run_recall(
            streams, _fresh_stores(folder, embedder, opts["judge"]), cutoffs, by_stream
        )
    report["embedder"] = name
    if as_json:
        _print_json(report)
        return
    console.print(
        f"questions {report['questions']} over {report['facts']} facts  embedder "
        f"{name}  recall p50 {report['recall_p50_ms']} ms, p95 "
        f"{report['recall_p95_ms']} ms"
    )
    table = Table()
    for column in ("", "all", *CATEGORIES.values()):
        table.add_column(column)
    for key in (f"{m}@{k}" for k in cutoffs for m in ("hit", "full")):
        table.add_row(
            key,
            f"{report[key]:.3f}",
            *(
                f"{report[f'{key}:{c}']:.3f}" if f"{key}:{c}" in report else "-"
                for c in CATEGORIES.values()
            ),
        )
    console.print(table)
    if "by_group" in report:
        # Scored per language pair: "hi>en" is a fact said in Hindi, asked about in English.
        groups = Table()
        for column in ("languages", "questions", *(f"hit@{k}" for k in cutoffs)):
            groups.add_column(column)
        for group, row in report["by_group"].items():
            hits = (f"{row[f'hit@{k}']:.3f}" for k in cutoffs)
            groups.add_row(group or "-", str(row["questions"]), *hits)
        console.print(groups)
    if "by_stream" in report:
        each = Table()
        for column in (
            "stream",
            "questions",
            *(f"{m}@{k}" for k in cutoffs for m in ("hit", "full")),
        ):
            each.add_column(column)
        for row in report["by_stream"]:
            figures = (f"{row[f'{m}@{k}']:.3f}" for k in cutoffs for m in ("hit", "full"))
            each.add_row(esc(row["stream"]), str(row["questions"]), *figures)
        console.print(each)


def _fresh_stores(
    folder: str, embedder: Embedder | str, judge: str | None, plain: bool = False
) -> Callable[[Any], Memory]:
    """A new store file in `folder` for each stream asked for: a file, as a user's store is,
    so the candidate index and its tiers run as they do in use."""
    numbers = iter(range(1_000_000))

    def fresh(stream: Any) -> Memory:
        return Memory(
            Path(folder) / f"{next(numbers)}.db",
            embedder=embedder,
            detect_disagreement=not plain,
            judge=judge,
        )

    return fresh


def _eval_stream(
    opts: dict[str, Any],
    file: str,
    labels_path: str | None,
    convs: str | None,
    plain: bool,
    errors: bool,
    as_json: bool,
    by_stream: bool = False,
) -> None:
    """`ankita eval --stream`: one fresh store per stream, written in order (`_stream`);
    with `by_stream` (`--by-source`), each stream's figures too, worst first."""
    import tempfile

    from ankita.dev._stream import load_labels, load_streams, run_stream, select

    streams = select(load_streams(file), convs)
    labels = load_labels(labels_path) if labels_path else {}
    embedder, name = _precomputed(opts, [t for s in streams for t, _ in s.facts])
    with tempfile.TemporaryDirectory(prefix="ankita-stream-") as folder:
        report, flagged = run_stream(
            streams, labels, _fresh_stores(folder, embedder, opts["judge"], plain), by_stream
        )
    report["embedder"] = name
    if errors:
        # Flags a person labelled otherwise, and flags nobody labelled yet (to label next).
        report["errors"] = [
            f
            for f in flagged
            if f["label"] is None
            or f["label"] != ("duplicate" if f["action"] == "merge" else "conflict")
        ]
    if as_json:
        _print_json(report)
        return
    console.print(
        f"streams {report['streams']}  facts {report['facts']}  embedder {name}\n"
        f"conflict writes {report['conflict_writes_per_1k']} per 1,000 facts, links "
        f"{report['conflict_links_per_1k']} (on pairs labelled duplicate or neither: "
        f"{report['false_conflict_links_per_1k']}); possible conflicts "
        f"{report['possible_conflicts_per_1k']} (precision {report['possible_precision']}); "
        f"merges {report['merges_per_1k']}\n"
        f"merge precision {report['merge_precision']}, conflict precision "
        f"{report['conflict_precision']}; recall of labelled duplicates "
        f"{report['duplicate_recall']}, of labelled conflicts {report['conflict_recall']}; "
        f"flagged and unlabelled {report['flagged_unlabelled']}\n"
        f"write p50 {report['write_p50_ms']} ms, p95 {report['write_p95_ms']} ms"
    )
    for one in report.get("by_stream", []):
        console.print(
            esc(
                f"  {one['stream']}: {one['facts']} facts, wrong {one['wrong_per_1k']} per "
                f"1,000; conflict writes {one['conflict_writes_per_1k']}, false links "
                f"{one['false_conflict_links_per_1k']}, possible "
                f"{one['possible_conflicts_per_1k']} per 1,000; merge precision "
                f"{one['merge_precision']} ({one['merge_true']} of {one['merge_labelled']}), "
                f"duplicate recall {one['duplicate_recall']}, conflict recall "
                f"{one['conflict_recall']}"
            )
        )
    for f in report.get("errors", []):
        console.print(
            esc(
                f"  {f['action']} ({f['label'] or 'unlabelled'}): {f['a']} | "
                f"{f['b']}\n    {f['reason']}"
            )
        )
