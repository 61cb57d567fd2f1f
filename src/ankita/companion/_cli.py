"""`ankita chat` and `ankita persona`: thin commands over the companion runtime."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import click
from rich.markup import escape as esc

from .._errors import InvalidInput, ModelError
from ..cli import _memory, _print_json, console, err_console
from ._model import SETUP_HELP, ModelSettings, open_model
from ._paths import chat_db_path, persona_path
from ._persona import Persona, load_persona, save_persona
from ._runtime import Companion
from ._transcripts import Transcripts


@click.command()
@click.option("--session", default="default", show_default=True,
              help="Resume (or start) this conversation.")
@click.option("--provider", type=click.Choice(["ollama", "openai"]), default=None,
              help="ollama, or openai for any OpenAI-compatible server [ANKITA_CHAT_PROVIDER].")
@click.option("--url", default=None, help="The model server's base URL [ANKITA_CHAT_URL].")
@click.option("--model", default=None, help="The model's name [ANKITA_CHAT_MODEL].")
@click.pass_context
def chat(ctx: click.Context, session: str, provider: str | None, url: str | None,
         model: str | None) -> None:
    """Talk with the companion; it remembers you across sessions. /quit ends."""
    settings = ModelSettings.from_env(provider=provider, base_url=url, model=model)
    client = open_model(settings)
    try:
        client.ping()
    except ModelError:
        click.echo(SETUP_HELP.format(url=settings.base_url, ctx=settings.context_window))
        sys.exit(6)
    memory = _memory(ctx)
    transcripts = Transcripts(chat_db_path())
    companion = Companion(memory, client, load_persona(persona_path()), transcripts,
                          session=session)
    name = companion.persona.card["data"]["name"]
    greeting = companion.greeting()
    if greeting:
        console.print(f"[bold]{esc(name)}>[/bold] {esc(greeting)}")
    else:
        count = len(transcripts.messages(session))
        err_console.print(f"[dim]resuming session {esc(session)} ({count} messages)[/dim]")
    while True:
        try:
            line = input("you> ")
        except (EOFError, KeyboardInterrupt):
            click.echo()
            break
        if line.strip() in ("/quit", "/exit"):
            break
        if not line.strip():
            continue
        console.print(f"[bold]{esc(name)}>[/bold] ", end="")
        try:
            turn = companion.send(line, on_delta=lambda d: console.print(esc(d), end=""))
        except (ModelError, TimeoutError) as exc:
            console.print()
            err_console.print(f"[red]error[/red]: {esc(str(exc))}")
            continue
        console.print()
        for call in turn.tool_calls:
            err_console.print(f"[dim]  memory: {esc(call)}[/dim]")
        if turn.compacted:
            err_console.print("[dim]  (older turns were summarised; the transcript keeps "
                              "them)[/dim]")
    companion.lanes.close()
    transcripts.close()


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
    for key in ("name", "description", "personality", "scenario", "first_mes",
                "system_prompt"):
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
@click.argument("file", type=click.File("r", encoding="utf-8"))
def persona_import(file: Any) -> None:
    """Use a Character Card V2/V3 JSON file; unknown fields and extensions are kept."""
    card = Persona.from_json(file.read(), file.name)
    save_persona(card, persona_path())
    console.print(f"now {esc(card.card['data']['name'])}")


@persona.command(name="export")
@click.argument("file", type=click.File("w", encoding="utf-8"), default="-")
def persona_export(file: Any) -> None:
    """Write the card as JSON (to FILE, or standard output)."""
    file.write(load_persona(persona_path()).to_json() + "\n")


@persona.command(name="edit")
def persona_edit() -> None:
    """Open the card in $EDITOR; it is checked before it is saved."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    card = load_persona(persona_path())
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False,
                                     encoding="utf-8") as handle:
        handle.write(card.to_json() + "\n")
    try:
        subprocess.run([*editor.split(), handle.name], check=True)
        edited = Persona.from_json(Path(handle.name).read_text(encoding="utf-8"),
                                   "the edited card")
    except subprocess.CalledProcessError as exc:
        raise InvalidInput(f"the editor exited with {exc.returncode}; nothing saved") from None
    finally:
        os.unlink(handle.name)
    save_persona(edited, persona_path())
    console.print("saved")
