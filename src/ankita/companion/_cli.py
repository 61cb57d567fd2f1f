"""`ankita chat` and `ankita persona`: thin commands over the companion runtime."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from ankita._console import _memory, _print_json, console, err_console, esc
from ankita._errors import InvalidInput, ModelError, NotFound
from ankita._files import replacing
from ankita.companion._apps import AppIndex
from ankita.companion._paths import channels_db_path, chat_db_path, persona_path, tasks_db_path
from ankita.companion.channels._channels import Channels
from ankita.companion.chat._chatloop import ChatLoop
from ankita.companion.chat._model import SETUP_HELP, ModelSettings, open_model
from ankita.companion.chat._runtime import Companion
from ankita.companion.chat._transcripts import Transcripts
from ankita.companion.persona._cardpng import card_text, with_card
from ankita.companion.persona._persona import Persona, load_persona, save_persona
from ankita.companion.tasks._schedule import Job, check_target
from ankita.companion.tasks._scheduler import Scheduler


@click.command()
@click.option(
    "--session", default="default", show_default=True, help="Resume (or start) this conversation."
)
@click.option(
    "--provider",
    type=click.Choice(["ollama", "openai"]),
    default=None,
    help="ollama, or openai for any OpenAI-compatible server [ANKITA_CHAT_PROVIDER].",
)
@click.option("--url", default=None, help="The model server's base URL [ANKITA_CHAT_URL].")
@click.option("--model", default=None, help="The model's name [ANKITA_CHAT_MODEL].")
@click.pass_context
def chat(
    ctx: click.Context, session: str, provider: str | None, url: str | None, model: str | None
) -> None:
    """Talk with the companion; it remembers you across sessions. /help lists commands."""
    settings = ModelSettings.from_env(provider=provider, base_url=url, model=model)
    client = open_model(settings)
    try:
        client.ping()
    except ModelError:
        click.echo(SETUP_HELP.format(url=settings.base_url, ctx=settings.context_window))
        sys.exit(6)
    memory = _memory(ctx)
    transcripts = Transcripts(chat_db_path())
    card, apps = load_persona(persona_path()), AppIndex()
    if sys.stdin.isatty():
        # Line editing and history at the prompt: arrow keys move the cursor instead of
        # sending escape sequences to the companion.
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401
    loop = ChatLoop(
        lambda name: Companion(memory, client, card, transcripts, session=name, apps=apps),
        session,
        console,
        err_console,
    )
    try:
        loop.run()
    finally:
        transcripts.close()
    if loop.interrupted:
        sys.exit(130)  # as a shell reports a command ended by Ctrl-C


@click.group()
def persona() -> None:
    """The companion's personality card (Character Card V2/V3 JSON)."""


@persona.command(name="show")
@click.option("--json", "as_json", is_flag=True, help="The whole card as JSON.")
def persona_show(as_json: bool) -> None:
    """Show the card: its fields and Ankita's settings."""
    card = load_persona(persona_path())
    if as_json:
        _print_json(card.card)
        return
    data = card.card["data"]
    for key in ("name", "description", "personality", "scenario", "first_mes", "system_prompt"):
        console.print(f"[bold]{key}[/bold]: {esc(str(data.get(key) or ''))}")
    for key, value in data.get("extensions", {}).get("ankita", {}).items():
        console.print(f"[bold]{key}[/bold]: {esc(str(value))}")
    console.print(f"[dim]{esc(str(persona_path()))}[/dim]")


@persona.command(name="set")
@click.argument("key")
@click.argument("value")
def persona_set(key: str, value: str) -> None:
    """Change one field (name, description, personality, ...) or setting (caring, teasing,
    language, reply_length)."""
    save_persona(load_persona(persona_path()).set(key, value), persona_path())
    console.print(f"{esc(key)} = {esc(value)}")


@persona.command(name="import")
@click.argument("file", type=click.File("rb"))
def persona_import(file: Any) -> None:
    """Use a Character Card V2/V3, as JSON or inside a PNG; unknown fields are kept."""
    card = Persona.from_json(card_text(file.read(), file.name), file.name)
    save_persona(card, persona_path())
    console.print(f"now {esc(card.card['data']['name'])}")


@persona.command(name="export")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True), default="-")
@click.option("--image", type=click.File("rb"), help="With FILE.png: the picture to put it in.")
def persona_export(file: str, image: Any) -> None:
    """Write the card as JSON (to FILE, or standard output), or into a PNG if FILE ends .png.
    A file is written beside its target, then renamed over it, private (0600)."""
    text = load_persona(persona_path()).to_json()
    data = (
        with_card(image.read() if image else None, text)
        if image or file.lower().endswith(".png")
        else (text + "\n").encode()
    )
    if file == "-":
        with click.open_file("-", "wb") as out:
            out.write(data)
        return
    try:
        with replacing(file) as partial:
            partial.write_bytes(data)
    except OSError as exc:
        raise InvalidInput(
            f"cannot write {file}: {exc.strerror or exc}; any earlier file there is unchanged"
        ) from None


@persona.command(name="edit")
def persona_edit() -> None:
    """Open the card in $EDITOR; it is checked before it is saved."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    card = load_persona(persona_path())
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as handle:
        handle.write(card.to_json() + "\n")
    try:
        subprocess.run([*editor.split(), handle.name], check=True)
        edited = Persona.from_json(Path(handle.name).read_text(encoding="utf-8"), "the edited card")
    except subprocess.CalledProcessError as exc:
        raise InvalidInput(f"the editor exited with {exc.returncode}; nothing saved") from None
    finally:
        os.unlink(handle.name)
    save_persona(edited, persona_path())
    console.print("saved")


def _channels() -> Channels:
    return Channels(channels_db_path())


# -- scheduled tasks -----------------------------------------------------------------------

ACTIONS = {"conflicts": "List the conflicts that wait for an answer."}


def _runner(ctx: click.Context) -> Any:
    """Runs a job: a built-in action, or a companion turn in the job's own session."""
    state: dict[str, Any] = {}

    def run(job: Job) -> str:
        memory = state.get("memory") or state.setdefault("memory", _memory(ctx))
        if job.prompt.startswith("action:"):
            name = job.prompt.split(":", 1)[1]
            if name == "conflicts":
                pairs = memory.conflicts(limit=10)
                if not pairs:
                    return "No conflicts wait for an answer."
                said = "; ".join(f'"{p.a.text}" or "{p.b.text}"' for p in pairs)
                more = memory.conflict_count() - len(pairs)
                return f"These wait for your answer: {said}" + (f"; {more} more" if more else "")
            raise InvalidInput(f"unknown action {name!r}")
        transcripts = Transcripts(chat_db_path())
        try:
            companion = Companion(
                memory,
                open_model(),
                load_persona(persona_path()),
                transcripts,
                session=f"task-{job.id}",
            )
            return companion.send(job.prompt).text or "[SILENT]"
        finally:
            transcripts.close()

    return run


def _scheduler(ctx: click.Context) -> Scheduler:
    def busy() -> bool:
        # A turn of `ankita chat` in any process marks itself in the transcripts database.
        transcripts = Transcripts(chat_db_path())
        try:
            return transcripts.busy(datetime.now(timezone.utc))
        finally:
            transcripts.close()

    return Scheduler(tasks_db_path(), _runner(ctx), busy=busy, deliver=_to_channel)


def _to_channel(target: str, run_id: int, text: str) -> None:
    """A task's result into a channel's outbox; `ankita channels run` sends it."""
    where = check_target(target)
    assert where is not None
    store = _channels()
    try:
        store.configured_channel(where[0])
        store.enqueue(where[0], where[1], text, dedupe=f"task-run:{run_id}")
    finally:
        store.close()


@click.group()
def tasks() -> None:
    """Scheduled tasks and heartbeats (results go to the local inbox or a channel)."""


@tasks.command(name="add")
@click.argument("name")
@click.option("--every", default=None, help="An interval: 30s, 15m, 2h, 1d.")
@click.option("--cron", default=None, help="A cron expression, e.g. '0 9 * * *'.")
@click.option("--at", "at_", default=None, help="Once, at a future ISO time (2027-01-15T09:00).")
@click.option("--prompt", default=None, help="What to ask the companion.")
@click.option(
    "--action",
    type=click.Choice(sorted(ACTIONS)),
    default=None,
    help="A built-in action instead of a prompt.",
)
@click.option("--heartbeat", is_flag=True, help="A check-in: retried when busy, active hours.")
@click.option("--active-hours", default=None, help="Heartbeats only: 08:00-22:00.")
@click.option("--tz", default="UTC", show_default=True, help="The schedule's time zone.")
@click.option(
    "--to",
    "target",
    default="inbox",
    show_default=True,
    help="Where results go: inbox, or channel:NAME:CHAT_ID.",
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def tasks_add(
    ctx: click.Context,
    name: str,
    every: str | None,
    cron: str | None,
    at_: str | None,
    prompt: str | None,
    action: str | None,
    heartbeat: bool,
    active_hours: str | None,
    tz: str,
    target: str,
    as_json: bool,
) -> None:
    """Add a task NAME with one schedule and a prompt (or a built-in action)."""
    given = [(k, v) for k, v in (("every", every), ("cron", cron), ("at", at_)) if v]
    if len(given) != 1:
        raise InvalidInput("give exactly one of --every, --cron, --at")
    if bool(prompt) == bool(action):
        raise InvalidInput("give exactly one of --prompt, --action")
    where = check_target(target)
    if where is not None:
        _channels().check_task_chat(*where)  # a typo must not post results to a stranger
    s = _scheduler(ctx)
    job = s.add(
        name,
        f"{given[0][0]} {given[0][1]}",
        prompt or f"action:{action}",
        kind="heartbeat" if heartbeat else "task",
        tz=tz,
        active_hours=active_hours,
        target=target,
    )
    state = dict((j.id, st) for j, st in s.jobs())[job.id]
    if as_json:
        _print_json({**job.__dict__, **state})
    else:
        console.print(f"added {job.id}: {esc(job.name)}, next run {state['next_run_at']}")


@tasks.command(name="list")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def tasks_list(ctx: click.Context, as_json: bool) -> None:
    """Every task with its schedule, next run and last status."""
    rows = [{**job.__dict__, **state} for job, state in _scheduler(ctx).jobs()]
    if as_json:
        _print_json(rows)
        return
    for row in rows:
        # Backing off after failures, a task's next run is its retry, not the slot it missed.
        retrying = row["failures"] and row["retry_at"]
        nxt = f"retry {row['retry_at']}" if retrying else f"next {row['next_run_at']}"
        console.print(
            f"{row['id']}  {esc(row['name'])}  {row['kind']}  {esc(row['schedule'])} "
            f"({row['tz']})  {nxt}  last {row['last_status'] or 'not run yet'}"
        )


@tasks.command(name="remove")
@click.argument("job_id")
@click.pass_context
def tasks_remove(ctx: click.Context, job_id: str) -> None:
    """Remove a task (its run history stays)."""
    _scheduler(ctx).remove(job_id)
    console.print(f"removed {job_id}")


@tasks.command(name="runs")
@click.argument("job_id", required=False)
@click.option("--limit", default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def tasks_runs(ctx: click.Context, job_id: str | None, limit: int, as_json: bool) -> None:
    """The latest runs (of one task, or all), with status and output."""
    runs = _scheduler(ctx).runs(job_id, limit)
    if as_json:
        _print_json([r.to_dict() for r in runs])
        return
    for run in runs:
        console.print(
            f"{run.finished_at or run.started_at}  {run.job_id}  {run.status}  "
            f"{esc(run.output or run.reason or '')}"
        )


@tasks.command(name="run-now")
@click.argument("job_id")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def tasks_run_now(ctx: click.Context, job_id: str, as_json: bool) -> None:
    """Run a task at once, outside its schedule."""
    run = _scheduler(ctx).run_now(job_id)
    if as_json:
        _print_json(run.to_dict())
    else:
        console.print(f"{run.status}: {esc(run.output or run.reason or '')}")


@tasks.command(name="run")
@click.option("--once", is_flag=True, help="Run what is due now, then exit.")
@click.pass_context
def tasks_run(ctx: click.Context, once: bool) -> None:
    """Run due tasks every second until Ctrl-C (or, with --once, what is due now); recovers
    interrupted runs first. Each run prints as it finishes."""
    s = _scheduler(ctx)
    s.subscribe(
        lambda run: console.print(
            f"{run.finished_at}  {run.job_id}  {run.status}  {esc(run.output or run.reason or '')}"
        )
    )
    s.recover()
    if once:
        ran = s.tick()
        console.print(f"{len(ran)} run(s) finished; nothing else is due")
        return
    console.print("running due tasks every second; Ctrl-C stops")
    try:
        while True:
            s.tick()
            time.sleep(1)
    except KeyboardInterrupt:
        console.print("stopped")


@tasks.command(name="inbox")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def tasks_inbox(ctx: click.Context, as_json: bool) -> None:
    """What scheduled runs delivered to the local inbox, oldest first."""
    rows = _scheduler(ctx).inbox()
    if as_json:
        _print_json([{"id": i, "job_id": j, "text": t, "at": a} for i, j, t, a in rows])
        return
    for _, job_id, text, at in rows:
        console.print(f"{at}  {job_id}  {esc(text)}")


# -- applications --------------------------------------------------------------------------


@click.group()
def apps() -> None:
    """Installed applications the companion can open (open_app)."""


@apps.command(name="list")
@click.option("--json", "as_json", is_flag=True)
def apps_list(as_json: bool) -> None:
    """Every application found, de-duplicated."""
    found = AppIndex().apps()
    if as_json:
        _print_json([app.__dict__ for app in found])
        return
    for app in found:
        console.print(f"{esc(app.name)}  [dim]{esc(app.id)}: {esc(' '.join(app.argv))}[/dim]")


@apps.command(name="open")
@click.argument("name", nargs=-1, required=True)
@click.option("--dry-run", is_flag=True, help="Say what would be launched, launch nothing.")
def apps_open(name: tuple[str, ...], dry_run: bool) -> None:
    """Open the application called NAME; asks instead when unsure."""
    launched: list[Sequence[str]] = []
    index = AppIndex(launch=launched.append) if dry_run else AppIndex()
    found = index.open(" ".join(name))
    if found.kind == "none":
        raise NotFound(found.message)
    if dry_run and launched:
        console.print(f"would run: {esc(' '.join(launched[0]))}")
    else:
        console.print(esc(found.message))
