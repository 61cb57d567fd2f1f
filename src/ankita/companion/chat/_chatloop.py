"""`ankita chat`'s loop at the terminal: lines to the companion, slash commands kept from the
model, recent history shown on resume, and Ctrl-C that cancels the reply being written rather
than the chat."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timezone

from rich.console import Console

from ankita._console import esc
from ankita._errors import AnkitaError
from ankita.companion.chat._input import clean_message
from ankita.companion.chat._runtime import Companion

HELP = """Commands (never sent to the model):
  /help    this list
  /retry   ask the model again for your last message (its reply stays in the history)
  /new     start a new conversation (the old one stays and can be resumed by name)
  /quit    end the chat (also /exit, or Ctrl-D)
Ctrl-C while a reply is being written cancels that reply; at the prompt it ends the chat
(exit status 130)."""
RECENT_SHOWN = 6  # messages shown when a session resumes


class Cancelled(Exception):
    """The user pressed Ctrl-C during a reply: raised into the model's stream to end it."""


def recent_lines(companion: Companion, count: int = RECENT_SHOWN) -> list[tuple[str, str]]:
    """The last user and assistant messages of the session, oldest first: (who, text)."""
    said = [
        m
        for m in companion.transcripts.messages(companion.session)
        if m.kind == "turn" and m.role in ("user", "assistant") and m.content.strip()
    ]
    return [(m.role, m.content) for m in said[-count:]]


class ChatLoop:
    """One terminal conversation. `read` gives the next line (raises EOFError at the end);
    `make` builds the companion for a session name (for /new)."""

    def __init__(
        self,
        make: Callable[[str], Companion],
        session: str,
        console: Console,
        err_console: Console,
        read: Callable[[str], str] = input,
    ) -> None:
        self.make, self.console, self.err = make, console, err_console
        self.read = read
        self.companion = make(session)
        self.name = session  # as the user names it (the companion keys it by user too)
        self.interrupted = False  # ended by Ctrl-C at the prompt (exit status 130)
        self.base = session[:48]  # /new names a conversation after this one and the time
        self.last: str | None = None

    def run(self) -> None:
        self._open()
        try:
            while True:
                try:
                    line = self.read("you> ")
                except EOFError:
                    self.console.print()
                    return
                except KeyboardInterrupt:
                    self.console.print()
                    self.err.print(
                        f"[dim]chat ended; `ankita chat --session {esc(self.name)}` "
                        "takes it up again[/dim]"
                    )
                    self.interrupted = True
                    return
                if not self._command(line.strip()):
                    return
        finally:
            self.companion.lanes.close()

    def _open(self) -> None:
        name = self.companion.persona.card["data"]["name"]
        warning = self.companion.window_warning()
        if warning:
            self.err.print(f"[yellow]warning[/yellow]: {esc(warning)}")
        greeting = self.companion.greeting()
        if greeting:
            self.console.print(f"[bold]{esc(name)}>[/bold] {esc(greeting)}")
            return
        self.companion.resume()  # a question asked in an earlier run may be asked again
        self.err.print(f"[dim]resuming session {esc(self.name)}; the last messages:[/dim]")
        for who, text in recent_lines(self.companion):
            label = "you" if who == "user" else name
            self.err.print(f"[dim]  {esc(label)}> {esc(text)}[/dim]")

    def _command(self, line: str) -> bool:
        """Handle one line; False ends the chat."""
        if not line:
            return True
        if line in ("/quit", "/exit"):
            return False
        if line == "/help":
            self.console.print(esc(HELP))
        elif line == "/new":
            old = self.companion
            stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
            self.name = f"{self.base}-{stamp}"
            self.companion = self.make(self.name)
            old.lanes.close()
            self.console.print(f"[dim]new conversation: {esc(self.name)}[/dim]")
            self._open()
            self.last = None
        elif line == "/retry":
            if self.last is None:
                self.console.print("[dim]nothing to retry yet[/dim]")
            else:
                self._say(self.last, retry=True)
        elif line.startswith("/") and " " not in line:
            self.console.print(f"[dim]unknown command {esc(line)}; /help lists them[/dim]")
        elif not clean_message(line).strip():
            self.err.print("[dim]that line held only control characters; nothing was sent[/dim]")
        else:
            self.last = line
            self._say(line)
        return True

    def _say(self, line: str, retry: bool = False) -> None:
        name = self.companion.persona.card["data"]["name"]
        cancel = threading.Event()
        # The name is printed with the reply's first text: never an empty "Ankita>".
        shown: list[bool] = []

        def show(delta: str) -> None:
            if cancel.is_set():
                raise Cancelled
            if not shown:
                self.console.print(f"[bold]{esc(name)}>[/bold] ", end="")
                shown.append(True)
            self.console.print(esc(delta), end="")

        def end_line() -> None:
            if shown:
                self.console.print()

        send = self.companion.retry if retry else self.companion.send
        try:
            turn = send(line, on_delta=show)
        except (KeyboardInterrupt, Cancelled) as exc:
            if isinstance(exc, KeyboardInterrupt):
                cancel.set()  # the model's stream ends at its next piece of text
            end_line()
            self.err.print("[dim]  (reply cancelled; not kept in the conversation)[/dim]")
            return
        except (AnkitaError, TimeoutError) as exc:
            # One turn's error ends that turn, never the conversation.
            end_line()
            self.err.print(f"[red]error[/red]: {esc(str(exc))}")
            return
        end_line()
        if turn.kind == "silent":
            self.err.print(f"[dim]  ({esc(name)} chose not to reply)[/dim]")
        for call in turn.tool_calls:
            self.err.print(f"[dim]  memory: {esc(call)}[/dim]")
        if turn.compacted:
            self.err.print("[dim]  (older turns were summarised; the transcript keeps them)[/dim]")
