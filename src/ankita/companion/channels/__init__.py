"""Channels: Telegram, Discord and Slack adapters, the access policy, the outbox and the relay."""
