"""The companion's turn: memory in, model with tools, reply classified, context compacted.

Each turn:
1. recall on the conversation so far goes into the system prompt, conflict notice included;
2. one pending "which is current?" conflict is put to the model to ask, at most once a session;
3. the model answers, calling the memory tools as it likes (remember, forget, recall,
   resolve_conflict, clear_conflict, ...), for a bounded number of rounds;
4. the reply is classified: normal (shown), silent (recorded only) or error;
5. when the server's measured prompt size passes the compaction line (60% of the window by
   default), the conversation is compacted: first a silent turn lets the model save durable
   facts, then older turns are summarised in chunks that fit, the latest turns and the pending
   question staying verbatim. If summarising fails, nothing is dropped: a fixed fallback note
   stands in and the history stays.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ankita import tools as memory_tools
from ankita._errors import AnkitaError, InvalidInput, ModelError, NotFound
from ankita._jsonl import parse_json
from ankita._memory import Memory
from ankita.companion._apps import OPEN_APP_TOOL, AppIndex
from ankita.companion.chat._input import clean_message
from ankita.companion.chat._lanes import Lanes
from ankita.companion.chat._model import ChatModel, ModelReply
from ankita.companion.chat._replies import classify, strip_head_token
from ankita.companion.chat._transcripts import Message, Transcripts, validate_session
from ankita.companion.persona._persona import (
    Persona,
    build_system_prompt,
    estimate_tokens,
    post_history,
)

MAX_TOOL_ROUNDS = 5
KEEP_RECENT = 6  # messages kept verbatim through a compaction
COMPACT_AT = 0.6
RECALL_TURNS = 3  # user messages whose words feed recall
BUSY_LEASE_S = 15.0  # a turn's busy mark lapses this long after its process stops renewing it
QUESTION_PAGE = 50  # flagged pairs read at a time when looking for one to ask about
MIN_COMPACTED_TOKENS = 64  # a summary replaces at least this much of the conversation
FALLBACK_SUMMARY = (
    "(Earlier parts of this conversation were shortened because a summary "
    "could not be made. They are saved in the transcript.)"
)
FLUSH_PROMPT = (
    "The conversation is about to be shortened. If the user said anything lasting "
    "about themselves that is not in your memory yet, save it now with the remember "
    "tool. Then answer with exactly [SILENT]."
)
SUMMARY_PROMPT = (
    "Summarise this part of a conversation between {user} and {char} in a few "
    "sentences: what was discussed, decided or promised. Facts about {user} are "
    "stored elsewhere; keep only what the conversation needs to continue."
)


@dataclass(frozen=True)
class Turn:
    """What one user message produced."""

    kind: str  # "normal" | "silent" | "error"
    text: str  # shown to the user: empty unless normal
    tool_calls: tuple[str, ...]  # "name(args) -> result", in order
    prompt_tokens: int | None
    compacted: bool
    asked_conflict: tuple[str, str] | None


class Companion:
    def __init__(
        self,
        memory: Memory,
        model: ChatModel,
        persona: Persona,
        transcripts: Transcripts,
        session: str = "default",
        user_name: str | None = None,
        compact_at: float = COMPACT_AT,
        lanes: Lanes | None = None,
        deadline_s: float | None = None,
        apps: AppIndex | None = None,
    ) -> None:
        self.memory, self.model, self.persona = memory, model, persona
        self.apps = apps  # with an index, the model also gets the open_app tool
        self.transcripts = transcripts
        # A session is its user's: bob's "default" is not alice's (user names hold no ".").
        # The default user's sessions keep their bare names, as before users were told apart.
        session = validate_session(session)
        self.session = session if memory.user == "default" else f"{memory.user}.{session}"
        # The name the card gives the user, else the memory's user ("default" names nobody).
        self.user_name = (
            user_name
            or persona.setting("user_name").strip()
            or (memory.user if memory.user != "default" else "the user")
        )
        self.window = model.settings.context_window
        self.compact_at = compact_at
        self.lanes = lanes or Lanes()
        self.deadline_s = deadline_s or model.settings.timeout_s * (MAX_TOOL_ROUNDS + 1)
        self.last_prompt_tokens: int | None = None

    # -- the session ----------------------------------------------------------------------

    def greeting(self) -> str | None:
        """The card's first message, once, when the session is new."""
        if self.transcripts.messages(self.session):
            return None
        text = self.persona.greeting(self.user_name, self.session)
        if text:
            self.transcripts.add(self.session, "assistant", text)
        return text or None

    def _since(self) -> tuple[str | None, list[Message]]:
        """The latest summary (if any) and the turns the prompt still holds verbatim: those
        after the summary's cut, and the ones it pinned (a pending conflict question)."""
        messages = self.transcripts.messages(self.session)
        summary, keep_from, pinned = None, 0, set()
        for message in messages:
            if message.kind == "summary":
                summary = message.content
                keep_from = int(message.extra.get("keep_from", message.seq))
                pinned = set(message.extra.get("pinned", []))
        return summary, [
            m for m in messages if m.kind == "turn" and (m.seq >= keep_from or m.seq in pinned)
        ]

    def _pending_question(self) -> tuple[str, tuple[str, str] | None]:
        """A conflict not yet asked about in this session, the newest first, as an instruction
        to ask it. Read a page at a time: a memory may hold thousands of flagged pairs."""
        asked = set(self._asked())
        offset = 0
        while pairs := self.memory.conflicts(limit=QUESTION_PAGE, offset=offset):
            for pair in pairs:
                if f"{pair.a.id}|{pair.b.id}" in asked:
                    continue
                text = (
                    f'Your memory holds two facts that disagree: [{pair.a.id}] "{pair.a.text}" '
                    f'and [{pair.b.id}] "{pair.b.text}". Ask {self.user_name}, once and '
                    "briefly, which is current (or whether both are true). When they answer, "
                    "call resolve_conflict with keep and over, or clear_conflict if both hold."
                )
                return text, (pair.a.id, pair.b.id)
            offset += QUESTION_PAGE
        return "", None

    def resume(self) -> None:
        """A conversation taken up again may ask its open questions once more."""
        self._set_asked([])

    def _asked(self) -> list[str]:
        """The conflicts this session has asked about, as "a|b" keys."""
        return list(json.loads(self.transcripts.get(self.session, "asked") or "[]"))

    def _set_asked(self, keys: list[str]) -> None:
        self.transcripts.put(self.session, "asked", json.dumps(keys))

    def _mark_asked(self, pair: tuple[str, str], message: Message) -> None:
        self._set_asked([*self._asked(), f"{pair[0]}|{pair[1]}"])
        # Which message asked it: compaction keeps it verbatim while the conflict stands.
        self.transcripts.put(self.session, f"asked_in:{pair[0]}|{pair[1]}", str(message.seq))

    def _open_questions(self) -> set[int]:
        """The messages that asked about a conflict that still stands (from what this session
        asked, not from every flagged pair of the memory)."""
        seqs = set()
        for key in self._asked():
            a, b = key.split("|")
            try:
                standing = b in self.memory.get(a).conflicts_with
            except NotFound:
                standing = False
            seq = self.transcripts.get(self.session, f"asked_in:{key}")
            if standing and seq is not None:
                seqs.add(int(seq))
        return seqs

    def _system(self, history: list[Message], summary: str | None, question: str) -> dict[str, Any]:
        said = [m.content for m in history if m.role == "user"][-RECALL_TURNS:]
        # Cleaned again: a session stored before messages were cleaned still resumes.
        block = (
            self.memory.recall(clean_message(" ".join(said))[-2000:]).to_prompt() if said else ""
        )
        lore = self.persona.lore(
            " ".join(m.content for m in history[-2 * RECALL_TURNS :]), self.user_name
        )
        return {
            "role": "system",
            "content": build_system_prompt(
                self.persona, self.user_name, block, question or None, summary, lore
            ),
        }

    # -- one turn -------------------------------------------------------------------------

    def send(self, text: str, on_delta: Callable[[str], None] | None = None) -> Turn:
        """Answer one user message; runs in the session's lane, under the watchdog."""
        result: Turn = self.lanes.run(
            f"session:{self.session}", lambda: self._send(text, on_delta), self.deadline_s
        )
        return result

    def retry(self, text: str, on_delta: Callable[[str], None] | None = None) -> Turn:
        """Ask again for `text`: a conflict question the retried reply put is put again."""
        last = [m.seq for m in self.transcripts.messages(self.session) if m.role == "assistant"]
        if last:
            by = {k: self.transcripts.get(self.session, f"asked_in:{k}") for k in self._asked()}
            self._set_asked([k for k, seq in by.items() if seq != str(last[-1])])
        return self.send(text, on_delta)

    def withdraw(self, reply: str) -> None:
        """A reply the user stopped (voice's stop word) leaves the conversation the model
        reads, as a reply cancelled in `ankita chat` never enters it."""
        self.transcripts.withdraw(self.session, reply)

    def _send(self, text: str, on_delta: Callable[[str], None] | None) -> Turn:
        text = clean_message(text).strip()  # nothing stored can poison the session
        if not text:
            return Turn("silent", "", (), None, False, None)
        with _BusyLease(self.transcripts):
            return self._turn(text, on_delta)

    def _turn(self, text: str, on_delta: Callable[[str], None] | None) -> Turn:
        self.transcripts.add(self.session, "user", text)
        summary, history = self._since()
        question, pair = self._pending_question()
        messages = [self._system(history, summary, question)] + [m.to_model() for m in history]
        post = post_history(self.persona, self.user_name)
        messages += [post] if post else []
        calls: list[str] = []
        held = _Held(on_delta)
        try:
            reply = self._converse(messages, calls, held.feed)
        except ModelError as exc:
            self.transcripts.add(self.session, "assistant", str(exc), kind="error")
            raise
        verdict = classify(reply.content)
        held.finish(verdict.text if verdict.kind == "normal" else "")
        said = self.transcripts.add(
            self.session,
            "assistant",
            reply.content if verdict.kind != "normal" else verdict.text,
            kind="turn" if verdict.kind == "normal" else "silent",
        )
        # A silent reply asked nothing: the question waits for the next turn that speaks.
        pair = pair if verdict.kind == "normal" else None
        if pair is not None:
            self._mark_asked(pair, said)
        compacted = False
        if reply.prompt_tokens is not None:
            self.last_prompt_tokens = reply.prompt_tokens
        used = reply.prompt_tokens or estimate_tokens(json.dumps(messages))
        if used >= self.compact_at * self.window and self._compaction_helps(history):
            compacted = self.compact()
        return Turn(verdict.kind, verdict.text, tuple(calls), reply.prompt_tokens, compacted, pair)

    def _tools(self) -> list[dict[str, Any]]:
        return memory_tools.openai_tools() + ([OPEN_APP_TOOL] if self.apps else [])

    def _converse(
        self,
        messages: list[dict[str, Any]],
        calls: list[str],
        on_delta: Callable[[str], None] | None,
    ) -> ModelReply:
        """Ask the model; run its tool calls against memory and ask again, a few rounds."""
        tools = self._tools()
        reply = self.model.chat(messages, tools, on_delta)
        for _ in range(MAX_TOOL_ROUNDS):
            if not reply.tool_calls:
                return reply
            assistant = {
                "role": "assistant",
                "content": reply.content,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": c.arguments
                            if isinstance(c.arguments, str)
                            else json.dumps(c.arguments),
                        },
                    }
                    for c in reply.tool_calls
                ],
            }
            messages.append(assistant)
            self.transcripts.add(
                self.session,
                "assistant",
                reply.content,
                kind="tool",
                tool_calls=assistant["tool_calls"],
            )
            for call in reply.tool_calls:
                try:
                    if call.name == "open_app" and self.apps is not None:
                        result = self._open_app(call.arguments)
                    else:
                        result = memory_tools.dispatch(call.name, call.arguments, self.memory)
                except AnkitaError as exc:  # the model sees the error and can correct itself
                    result = f"error ({exc.code}): {exc}"
                calls.append(f"{call.name}({_short(call.arguments)}) -> {result}")
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": result}
                )
                self.transcripts.add(
                    self.session, "tool", result, kind="tool", tool_call_id=call.id, name=call.name
                )
            reply = self.model.chat(messages, tools, on_delta)
        return reply

    def _open_app(self, arguments: dict[str, Any] | str) -> str:
        args = parse_json(arguments, "open_app") if isinstance(arguments, str) else arguments
        name = args.get("name") if isinstance(args, dict) else None
        if not isinstance(name, str):
            raise InvalidInput("open_app: needs a string argument name")
        assert self.apps is not None
        found = self.apps.open(name)
        if found.kind == "ask":
            return f"Not sure which app: ask the user {found.message}"
        return found.message[:1].upper() + found.message[1:] + "."

    # -- compaction -----------------------------------------------------------------------

    def fixed_tokens(self) -> int:
        """About how many tokens every request spends before any turn: the system prompt
        (personality, instructions) and the tool schemas."""
        system = build_system_prompt(self.persona, self.user_name, "", None, None)
        return estimate_tokens(system) + estimate_tokens(json.dumps(self._tools()))

    def window_warning(self) -> str | None:
        """What to tell the user when the model's window cannot hold the fixed prompt."""
        fixed = self.fixed_tokens()
        if fixed < self.compact_at * self.window:
            return None
        return (
            f"the model's context window ({self.window} tokens) leaves no room for the "
            f"conversation: the personality, instructions and tool schemas alone take about "
            f"{fixed}. Set ANKITA_CHAT_CONTEXT to the model's real window, or use a model "
            "with a larger one; older turns cannot be summarised away below that."
        )

    def _compaction_helps(self, history: list[Message]) -> bool:
        """A summary only pays when the turns it would replace hold a real share of the room
        the fixed prompt leaves; otherwise every turn would cost three model calls."""
        old = history[:-KEEP_RECENT]
        room = self.window - self.fixed_tokens()
        return bool(old) and estimate_tokens(json.dumps([m.to_model() for m in old])) >= max(
            MIN_COMPACTED_TOKENS, room // 4
        )

    def compact(self) -> bool:
        """Flush durable facts, then summarise older turns. True if a summary was written."""
        summary, history = self._since()
        if len(history) <= KEEP_RECENT:
            return False
        question, _ = self._pending_question()
        self._flush(history, summary, question)
        open_questions = self._open_questions()
        recent = history[-KEEP_RECENT:]
        pinned = sorted(m.seq for m in history[:-KEEP_RECENT] if m.seq in open_questions)
        old = [m for m in history[:-KEEP_RECENT] if m.seq not in open_questions]
        summarised = True
        try:
            text = self._summarise(old, summary)
        except ModelError as exc:
            # Never a wiped context: the fallback note stands in, every turn stays saved, and
            # the latest ones stay in the prompt.
            self.transcripts.add(self.session, "assistant", f"summary failed: {exc}", kind="error")
            text = (summary + "\n" if summary else "") + FALLBACK_SUMMARY
            summarised = False
        self.transcripts.add(
            self.session, "system", text, kind="summary", keep_from=recent[0].seq, pinned=pinned
        )
        return summarised

    def _flush(self, history: list[Message], summary: str | None, question: str) -> None:
        """The silent turn: the model may call remember before anything is summarised."""
        messages = (
            [self._system(history, summary, question)]
            + [m.to_model() for m in history]
            + [{"role": "user", "content": FLUSH_PROMPT}]
        )
        calls: list[str] = []
        try:
            reply = self._converse(messages, calls, None)
        except ModelError as exc:
            self.transcripts.add(
                self.session, "assistant", f"memory flush failed: {exc}", kind="error"
            )
            return
        self.transcripts.add(self.session, "assistant", reply.content, kind="flush", calls=calls)

    def _summarise(self, old: list[Message], summary: str | None) -> str:
        """Summaries of chunks that each fit well inside the window, folded together."""
        budget = int(self.window * 0.5)
        instruction = SUMMARY_PROMPT.format(
            user=self.user_name, char=self.persona.card["data"]["name"]
        )
        chunks: list[list[str]] = [[]]
        for message in old:
            line = f"{message.role}: {message.content}"[: budget * 4]
            if estimate_tokens("\n".join(chunks[-1] + [line])) > budget and chunks[-1]:
                chunks.append([])
            chunks[-1].append(line)
        running = summary or ""
        for chunk in chunks:
            prompt = (f"Summary so far: {running}\n\n" if running else "") + "\n".join(chunk)
            reply = self.model.chat(
                [{"role": "system", "content": instruction}, {"role": "user", "content": prompt}]
            )
            verdict = classify(reply.content)
            if verdict.kind != "normal":
                raise ModelError("the summary came back empty")
            running = verdict.text
        return running


def mark_busy(transcripts: Transcripts, busy: bool, lease: str = "") -> None:
    """Mark a turn as running for BUSY_LEASE_S from now, or clear its mark."""
    until = datetime.now(timezone.utc) + timedelta(seconds=BUSY_LEASE_S)
    transcripts.set_busy(until if busy else None, lease)


class _BusyLease:
    """Marks a turn as running for other processes (a heartbeat never interrupts a live turn):
    a short lease renewed while the turn runs, cleared when it ends. A process killed mid-turn
    stops renewing, so its mark lapses within BUSY_LEASE_S instead of a whole deadline."""

    def __init__(self, transcripts: Transcripts) -> None:
        self.transcripts, self.done = transcripts, threading.Event()
        self.lease = uuid.uuid4().hex  # this turn's own mark
        self.thread = threading.Thread(target=self._renew, name="busy-lease", daemon=True)

    def __enter__(self) -> None:
        mark_busy(self.transcripts, True, self.lease)  # the turn's thread: its own connection
        self.thread.start()

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()
        mark_busy(self.transcripts, False, self.lease)

    def _renew(self) -> None:
        # A connection of its own, opened at the first renewal: most turns end before it.
        own: Transcripts | None = None
        try:
            while not self.done.wait(BUSY_LEASE_S / 3):
                own = own or Transcripts(self.transcripts.path)
                mark_busy(own, True, self.lease)
        finally:
            if own is not None:
                own.close()


class _Held:
    """Streams a reply while holding back its edges until it is classified, so a silent
    token at the start or end of a reply is never shown."""

    EDGE = 16

    def __init__(self, out: Callable[[str], None] | None) -> None:
        self.out, self.text, self.sent, self.started = out, "", 0, False

    def feed(self, delta: str) -> None:
        self.text += delta
        if not self.started:
            if len(self.text.strip()) < self.EDGE:
                return
            self.text, self.started = strip_head_token(self.text.lstrip()), True
        safe = len(self.text) - self.EDGE
        if self.out is not None and safe > self.sent:
            self.out(self.text[self.sent : safe])
            self.sent = safe

    def finish(self, final: str) -> None:
        """Print what is left of the classified text ('' for a silent reply)."""
        if self.out is not None and final and len(final) > self.sent:
            self.out(final[self.sent :])


def _short(arguments: Any) -> str:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."
