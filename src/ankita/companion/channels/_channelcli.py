"""`ankita channels`: Telegram, Discord and Slack: access policy, pairing and the senders it
approved, running, testing, the outbox."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import click

from ankita import Memory
from ankita._console import _print_json, console, err_console, esc
from ankita._errors import ChannelError, InvalidInput, ModelError, NotFound
from ankita.companion._cli import _channels, _scheduler
from ankita.companion._paths import channels_db_path, chat_db_path, persona_path
from ankita.companion.chat._model import open_model

# -- channels ------------------------------------------------------------------------------


@click.group()
def channels() -> None:
    """Channels (Telegram, Discord, Slack): access policy, pairing, running, testing."""


@channels.command(name="list")
@click.option("--json", "as_json", is_flag=True)
def channels_list(as_json: bool) -> None:
    """Configured channels: policies, whether their secrets are set (never the values), and
    their outbox (anything not listed is denied)."""
    from ankita.companion.channels._adapter import load_secrets

    store = _channels()
    rows, counts = store.configured(), store.outbox_counts()
    for row in rows:
        try:
            load_secrets(row["name"], row["platform"])
            row["secrets"] = "set"
        except InvalidInput as exc:  # which variable is missing, or a readable file
            row["secrets"] = str(exc)
        row["outbox"] = counts.get(row["name"], {})
    if as_json:
        _print_json(rows)
        return
    for row in rows:
        outbox = ", ".join(f"{n} {status}" for status, n in sorted(row["outbox"].items()))
        console.print(
            f"{esc(row['name'])}  {row['platform']}  dm: {row['dm_policy']}  "
            f"groups: {row['group_policy']}  allow: {', '.join(row['allow_from'])}  "
            f"user: {esc(row['user'])}  secrets: {esc(row['secrets'])}  "
            f"outbox: {outbox or 'empty'}"
        )


@channels.command(name="add")
@click.argument("name")
@click.option("--platform", type=click.Choice(["telegram", "discord", "slack"]), required=True)
@click.option(
    "--dm",
    "dm_policy",
    type=click.Choice(["pairing", "allowlist", "open", "disabled"]),
    default="pairing",
    show_default=True,
)
@click.option(
    "--groups",
    "group_policy",
    type=click.Choice(["open", "allowlist", "disabled"]),
    default="disabled",
    show_default=True,
)
@click.option("--allow", "allow_from", multiple=True, help="A sender or group id (repeatable).")
@click.pass_context
def channels_add(
    ctx: click.Context,
    name: str,
    platform: str,
    dm_policy: str,
    group_policy: str,
    allow_from: tuple[str, ...],
) -> None:
    """Configure a channel's access policy (secrets stay in the environment)."""
    user = ctx.find_root().obj["user"]
    unpaired = _channels().add(name, platform, dm_policy, group_policy, list(allow_from), user)
    console.print(
        f"{esc(name)}: {platform}, direct messages {dm_policy}, groups {group_policy}, "
        f"memory of {esc(user)}"
    )
    if unpaired:
        console.print(
            f"{unpaired} paired senders were paired for another user's memory; they must pair again"
        )


@channels.command(name="pair")
@click.argument("code")
def channels_pair(code: str) -> None:
    """Approve a pairing code a sender received."""
    channel, sender = _channels().pair(code)
    console.print(f"paired {esc(sender)} on {esc(channel)}")


@channels.command(name="senders")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
def channels_senders(name: str, as_json: bool) -> None:
    """The senders paired on channel NAME, and when."""
    store = _channels()
    store.configured_channel(name)
    paired = store.senders(name)
    if as_json:
        _print_json([{"sender": s, "approved_at": at} for s, at in paired])
        return
    for sender, at in paired:
        console.print(f"{esc(sender)}  [dim]paired {esc(at)}[/dim]")
    if not paired:
        console.print("no paired senders")


@channels.command(name="unpair")
@click.argument("name")
@click.argument("sender")
def channels_unpair(name: str, sender: str) -> None:
    """Revoke a paired SENDER on channel NAME (they must pair again)."""
    _channels().unpair(name, sender)
    console.print(f"unpaired {esc(sender)} on {esc(name)}")


@channels.command(name="remove")
@click.argument("name")
def channels_remove(name: str) -> None:
    """Remove a channel's configuration (its senders are denied from then on)."""
    _channels().remove(name)
    console.print(f"removed {esc(name)}")


def _report(line: str) -> None:
    stamp = datetime.now(timezone.utc).strftime("%H:%M:%S")
    err_console.print(f"[dim]{stamp}[/dim] {esc(line)}")


@channels.command(name="test")
@click.argument("name")
@click.option("--to", "chat_id", default=None, help="Also send a test message to this chat id.")
def channels_test(name: str, chat_id: str | None) -> None:
    """Check a channel's credentials (and send one message with --to)."""
    from ankita.companion.channels._relay import open_adapter
    from ankita.companion.channels._sending import Sent

    config = _channels().configured_channel(name)
    adapter = open_adapter(config, lambda updates, offset: None, _report, None)
    try:
        identity = adapter.connect(receive=False)
        console.print(f"{esc(name)}: connected to {config['platform']} as {esc(identity)}")
        if chat_id:
            result = adapter.send(chat_id, "Test message from Ankita: this channel works.")
            if not isinstance(result, Sent):
                raise ChannelError(f"sending failed: {result}")
            console.print(f"sent a test message to {esc(chat_id)} (id {result.platform_id})")
    finally:
        adapter.disconnect()


@channels.command(name="outbox")
@click.option("--json", "as_json", is_flag=True)
@click.option("--limit", default=20, show_default=True)
def channels_outbox(as_json: bool, limit: int) -> None:
    """The latest outgoing messages and their delivery state."""
    rows = _channels().outbox()[-limit:]
    if as_json:
        _print_json(rows)
        return
    for row in rows:
        console.print(
            f"{row['id']}  {esc(row['channel'])}  {esc(row['chat_id'])}  "
            f"{row['status']}  attempts {row['attempts']}  "
            f"{'maybe sent before  ' if row['maybe_sent'] else ''}"
            f"{esc(row['last_error'] or '')}"
        )


@channels.command(name="run")
@click.argument("names", nargs=-1)
@click.option("--with-tasks", is_flag=True, help="Also run due scheduled tasks (every second).")
@click.pass_context
def channels_run(ctx: click.Context, names: tuple[str, ...], with_tasks: bool) -> None:
    """Connect the channels (all, or NAMES) and answer as the companion until stopped."""
    import signal

    from ankita.companion.channels._relay import CompanionResponder, Relay

    opts = ctx.find_root().obj

    model = open_model()
    try:
        model.ping()
    except ModelError:
        err_console.print(
            "[yellow]warning[/yellow]: no chat model answered at "
            f"{esc(model.settings.base_url)}; pairing works, replies will say "
            "the model is unreachable"
        )
    responder = CompanionResponder(
        lambda user: Memory(path=opts["db"], user=user, embedder=opts["embedder"]),
        model,
        persona_path(),
        chat_db_path(),
    )
    relay = Relay(channels_db_path(), responder, report=_report, only=list(names) or None)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        identities = relay.start()
    except BaseException:
        responder.close()
        raise
    if not identities:
        relay.stop()
        responder.close()
        raise NotFound("no channel is configured; add one with `ankita channels add`")
    for name, identity in identities.items():
        _report(f"{name}: connected as {identity}")
    scheduler = _scheduler(ctx) if with_tasks else None
    if scheduler is not None:
        scheduler.subscribe(
            lambda run: _report(f"task {run.job_id}: {run.status} {run.output or run.reason or ''}")
        )
        scheduler.recover()
    try:
        while not stop.wait(1.0):
            if scheduler is not None:
                scheduler.tick()
    except KeyboardInterrupt:
        pass
    finally:
        relay.stop()
        responder.close()
