"""Debian's Chromium as the review page's test and benchmark launch it (never a downloaded one)."""

from __future__ import annotations

CHROMIUM = "/usr/bin/chromium"
# Without these Chromium keeps trying to reach Google's hosts, which this network refuses.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
