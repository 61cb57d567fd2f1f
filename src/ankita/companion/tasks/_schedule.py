"""What a job is and when it runs: its schedule (`every 1h`, a daily time, a date), time zone,
next occurrence, grace window, active hours and target."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ankita._errors import InvalidInput

GRACE_MIN_S, GRACE_MAX_S = 120, 7200


@dataclass(frozen=True)
class Job:
    id: str
    name: str
    kind: str  # "task" | "heartbeat"
    schedule: str  # "at <ISO time>" | "every <N><s|m|h|d>" | "cron <five fields>"
    tz: str
    prompt: str
    target: str  # "inbox", or "channel:NAME:CHAT_ID" (through that channel's outbox)
    active_hours: str | None  # "HH:MM-HH:MM" in the job's time zone, heartbeats only
    enabled: bool
    created_at: str  # `every` counts its intervals from here


def iso_seconds(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(f"unknown time zone {name!r} (e.g. Europe/Berlin, UTC)") from None


def _every_seconds(value: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    if len(value) < 2 or value[-1] not in units or not value[:-1].isdigit():
        raise InvalidInput(f"every takes a number and a unit (30s, 15m, 2h, 1d), got {value!r}")
    seconds = int(value[:-1]) * units[value[-1]]
    if seconds < 10:
        raise InvalidInput("every must be at least 10 seconds")
    return seconds


def check_schedule(schedule: str, tz: str) -> None:
    kind, _, value = schedule.partition(" ")
    zone = _zone(tz)
    if kind == "every":
        _every_seconds(value.strip())
    elif kind == "at":
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInput(f"at takes an ISO time (2026-12-01T09:00), got {value!r}") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=zone)
    elif kind == "cron":
        from croniter import croniter

        if not croniter.is_valid(value.strip()):
            raise InvalidInput(f"not a cron expression: {value!r}")
    else:
        raise InvalidInput("a schedule is 'at <time>', 'every <interval>' or 'cron <expression>'")


def next_after(job: Job, after: datetime) -> datetime | None:
    """The first occurrence strictly after `after` (None: a one-shot that has passed)."""
    kind, _, value = job.schedule.partition(" ")
    zone = _zone(job.tz)
    if kind == "every":
        step = timedelta(seconds=_every_seconds(value.strip()))
        created = parse_iso(job.created_at)
        count = int((after - created) / step) + 1
        return created + count * step
    if kind == "at":
        moment = datetime.fromisoformat(value.strip())
        moment = moment if moment.tzinfo else moment.replace(tzinfo=zone)
        return moment if moment > after else None
    from croniter import croniter

    local = after.astimezone(zone)
    result: datetime = croniter(value.strip(), local).get_next(datetime)
    return result


def period_s(job: Job, around: datetime) -> float:
    first = next_after(job, around)
    second = next_after(job, first) if first else None
    return (second - first).total_seconds() if first and second else 3600.0


def grace_s(job: Job, around: datetime) -> float:
    return min(GRACE_MAX_S, max(GRACE_MIN_S, period_s(job, around) / 2))


def in_active_hours(job: Job, now: datetime) -> bool:
    if not job.active_hours:
        return True
    start_text, _, end_text = job.active_hours.partition("-")
    start, end = time.fromisoformat(start_text), time.fromisoformat(end_text)
    local = now.astimezone(_zone(job.tz)).time()
    return start <= local < end if start <= end else (local >= start or local < end)


def check_target(target: str) -> tuple[str, str] | None:
    """None for the inbox, or (channel, chat id) for "channel:NAME:CHAT_ID"."""
    if target == "inbox":
        return None
    kind, _, rest = target.partition(":")
    channel, _, chat = rest.partition(":")
    if kind != "channel" or not channel or not chat:
        raise InvalidInput(f"a target is inbox or channel:NAME:CHAT_ID, got {target!r}")
    return channel, chat
