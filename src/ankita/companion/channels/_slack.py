"""Slack through slack-bolt in Socket Mode: events come over a websocket the app opens itself
(no inbound port), and each one is stored before Slack is told it arrived.

`process_before_response=True` makes Bolt run the listener (which stores the event) before it
sends the envelope's acknowledgement; if storing fails there is no acknowledgement and Slack
delivers the event again. Event ids make a redelivered event count once.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

from ankita._errors import ChannelError
from ankita.companion.channels._adapter import Adapter
from ankita.companion.channels._channels import Inbound
from ankita.companion.channels._sending import (
    Attempt,
    Permanent,
    RetryAfter,
    SendResult,
    Sent,
    Transient,
)

DEFAULT_API = "https://slack.com/api/"
METADATA_EVENT = "ankita_outbox"  # the metadata type that carries a message's outbox key
HISTORY_LOOKBACK = 50  # messages read back to find one a crashed attempt may have sent
# Slack's error codes that another attempt cannot fix.
PERMANENT = {
    "channel_not_found",
    "not_in_channel",
    "is_archived",
    "invalid_auth",
    "account_inactive",
    "token_revoked",
    "not_authed",
    "msg_too_long",
    "no_text",
    "restricted_action",
    "missing_scope",
    "invalid_blocks",
    "user_not_found",
    "cannot_dm_bot",
    "ekm_access_denied",
}


class SlackAdapter(Adapter):
    platform = "slack"

    def __init__(self, *args: Any, api: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from slack_sdk import WebClient

        base = api or os.environ.get("ANKITA_SLACK_API") or DEFAULT_API
        self.base_url = base if base.endswith("/") else base + "/"
        self.web = WebClient(
            token=self.secrets["BOT_TOKEN"],
            base_url=self.base_url,
            timeout=int(self.send_timeout_s),
        )
        self.logger = logging.getLogger(f"ankita.slack.{self.channel}")
        self.logger.addHandler(logging.NullHandler())
        self.logger.propagate = False  # the libraries' log lines can carry request details
        self.bot_user = ""
        self.handler: Any = None

    def connect(self, receive: bool = True) -> str:
        from slack_sdk.errors import SlackApiError, SlackClientError

        try:
            me = self.web.auth_test()
        except SlackApiError as exc:
            raise ChannelError(
                self.redact(f"Slack refused the bot token: {exc.response.get('error')}")
            ) from None
        except (SlackClientError, OSError) as exc:
            raise ChannelError(self.redact(f"cannot reach Slack: {exc}")) from None
        self.bot_user = str(me.get("user_id") or "")
        self.identity = f"{me.get('user')} in {me.get('team') or me.get('team_id')}"
        if receive:
            self._start_socket_mode()
        return self.identity

    def _start_socket_mode(self) -> None:
        from slack_bolt import App
        from slack_bolt.adapter.socket_mode import SocketModeHandler
        from slack_sdk import WebClient

        app = App(
            client=self.web,
            process_before_response=True,
            logger=self.logger,
            signing_secret="socket-mode",
        )  # Socket Mode does not sign requests

        @app.event("message")
        def on_message(body: dict[str, Any], event: dict[str, Any]) -> None:
            message = self._normalise(body, event)
            if message is not None:
                self.ingest([message], None)  # raises if not stored: then Slack resends

        @app.event("app_mention")
        def on_mention(body: dict[str, Any]) -> None:
            return None  # the same text also arrives as a message event, handled above

        socket_client = WebClient(base_url=self.base_url, timeout=int(self.send_timeout_s))
        # One listener at a time: a pool of them stored a burst out of order, and the
        # companion answered it so (storing an event is one short insert).
        self.handler = SocketModeHandler(
            app,
            self.secrets["APP_TOKEN"],
            logger=self.logger,
            web_client=socket_client,
            concurrency=1,
        )
        try:
            self.handler.connect()
        except Exception as exc:
            raise ChannelError(self.redact(f"Slack Socket Mode did not connect: {exc}")) from None

    def _normalise(self, body: dict[str, Any], event: dict[str, Any]) -> Inbound | None:
        if event.get("subtype") or event.get("bot_id") or not event.get("user"):
            return None  # edits, joins, other bots and our own messages
        text = str(event.get("text") or "")
        group = event.get("channel_type") != "im"
        if group:
            mention = f"<@{self.bot_user}>"
            if mention not in text:
                return None  # in channels the companion answers only when mentioned
            text = re.sub(r"\s+", " ", text.replace(mention, " ")).strip()
        if not text:
            return None
        update_id = str(body.get("event_id") or event.get("client_msg_id") or event.get("ts"))
        return Inbound(
            self.channel,
            update_id,
            "group" if group else "dm",
            str(event["channel"]),
            str(event["user"]),
            text,
        )

    def disconnect(self) -> None:
        if self.handler is not None:
            self.handler.close()
            self.handler = None

    def send(self, chat_id: str, text: str, attempt: Attempt | None = None) -> SendResult:
        from slack_sdk.errors import SlackApiError, SlackClientError

        # Each message carries its outbox key as metadata; an attempt that may repeat an
        # earlier one first looks for that key among the chat's latest messages.
        metadata = None
        if attempt is not None:
            if attempt.maybe_sent:
                found = self._already_sent(chat_id, attempt.key)
                if found is not None:
                    return Sent(found)
            metadata = {"event_type": METADATA_EVENT, "event_payload": {"key": attempt.key}}
        try:
            answer = self.web.chat_postMessage(channel=chat_id, text=text, metadata=metadata)
        except SlackApiError as exc:
            status = exc.response.status_code
            error = str(exc.response.get("error") or "")
            if status == 429 or error == "ratelimited":
                return RetryAfter(float(exc.response.headers.get("Retry-After", 30)))
            if error in PERMANENT or 400 <= status < 500:
                return Permanent(f"Slack: {error or status}")
            return Transient(f"Slack: {error or status}")
        except TimeoutError:
            return Transient("Slack did not answer in time", maybe_sent=True)
        except (SlackClientError, OSError) as exc:
            return Transient(self.redact(f"cannot reach Slack: {exc}"))
        return Sent(str(answer.get("ts")))

    def _already_sent(self, chat_id: str, key: str) -> str | None:
        """The ts of the bot's message with this key among the chat's latest, if any. When the
        history cannot be read (no `im:history` scope, say) the message is sent again."""
        from slack_sdk.errors import SlackApiError, SlackClientError

        try:
            answer = self.web.conversations_history(
                channel=chat_id, limit=HISTORY_LOOKBACK, include_all_metadata=True
            )
        except (SlackApiError, SlackClientError, OSError) as exc:
            self.report(f"cannot check whether a message was already sent ({exc}); sending it")
            return None
        for message in answer.get("messages") or []:
            metadata = message.get("metadata") or {}
            payload = metadata.get("event_payload") or {}
            if metadata.get("event_type") == METADATA_EVENT and payload.get("key") == key:
                return str(message.get("ts"))
        return None
