"""open_app: an index of installed applications, and a matcher that asks when it is unsure.

Discovery per platform:

- **Linux:** XDG `.desktop` files under `$XDG_DATA_HOME` then `$XDG_DATA_DIRS` (`applications/`).
  The desktop-file id is the path below `applications/` with `/` → `-`, and the first one found
  wins. Only `Type=Application` entries are kept. `Hidden` and `NoDisplay` are honoured, a
  `TryExec` must resolve, and `OnlyShowIn`/`NotShowIn` are checked against
  `$XDG_CURRENT_DESKTOP`.
- **Windows:** Start Menu shortcuts (`.lnk`) from the user's and everyone's Programs folders.
- **macOS:** `.app` bundles in `/Applications`, `/System/Applications` and `~/Applications`.

Entries are de-duplicated by what they launch. The index rebuilds itself when any of those folders
changes (their modification times). Matching scores names and aliases with rapidfuzz. A low score,
or two candidates too close to call, asks instead of launching.
"""

from __future__ import annotations

import configparser
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ankita._errors import InvalidInput, NotFound

LAUNCH_SCORE = 85.0  # at least this sure to launch without asking
ASK_SCORE = 60.0  # below this: no match at all
LEAD = 8.0  # the best must lead the next app by this much


@dataclass(frozen=True)
class App:
    id: str
    name: str
    aliases: tuple[str, ...]
    argv: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class Match:
    kind: str  # "launch" | "ask" | "none"
    app: App | None
    candidates: tuple[tuple[App, float], ...]
    message: str


_FIELD_CODE = re.compile(r"%([fFuUdDnNickvm%])")
# Terminal emulators that run a command given after -e, in the order tried.
TERMINALS = ("x-terminal-emulator", "gnome-terminal", "konsole", "xfce4-terminal", "xterm")
# A name never holds these: a query with them is not a name ("calculator; rm -rf /").
_NOT_IN_A_NAME = set(";|&$`<>\\\n\r")


def _exec_argv(exec_line: str) -> tuple[str, ...]:
    """Exec= without its field codes (%f, %u, ..., also inside an argument: --file=%f);
    %% is a literal percent. An argument that was only field codes is dropped."""
    try:
        parts = shlex.split(exec_line)
    except ValueError:
        return ()
    argv = []
    for part in parts:
        kept = _FIELD_CODE.sub(lambda m: "%" if m.group(1) == "%" else "", part)
        if kept or not _FIELD_CODE.fullmatch(part):
            argv.append(kept)
    return tuple(a for a in argv if a)


def _locale_keys() -> list[str]:
    """The localized keys to read, most specific first: Name[de_DE], Name[de] for de_DE.UTF-8."""
    lang = os.environ.get("LC_ALL") or os.environ.get("LC_MESSAGES") or os.environ.get("LANG", "")
    lang = lang.split(".")[0].split("@")[0]
    if not lang or lang in ("C", "POSIX"):
        return []
    return [lang, lang.split("_")[0]] if "_" in lang else [lang]


def _localized(entry: Any, key: str) -> str:
    for locale in _locale_keys():
        if entry.get(f"{key}[{locale}]"):
            return str(entry[f"{key}[{locale}]"])
    return str(entry.get(key, ""))


def in_terminal(argv: Sequence[str]) -> tuple[str, ...]:
    """A Terminal=true program's command line, run inside the first terminal installed."""
    for terminal in TERMINALS:
        if shutil.which(terminal):
            return (terminal, "-e", *argv)
    raise NotFound(
        f"{argv[0]} runs in a terminal, and no terminal emulator is installed "
        f"(tried {', '.join(TERMINALS)})"
    )


def _resolves(program: str) -> bool:
    return bool(shutil.which(program)) if "/" not in program else Path(program).exists()


def linux_dirs() -> list[Path]:
    home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    dirs = os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share"
    return [Path(d) / "applications" for d in [home, *dirs.split(":")] if d]


def _desktop_files(roots: Sequence[Path]) -> list[tuple[str, Path]]:
    """(desktop-file id, path); the first root holding an id wins."""
    seen: dict[str, Path] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.desktop")):
            desktop_id = str(path.relative_to(root)).replace(os.sep, "-")
            seen.setdefault(desktop_id, path)
    return sorted(seen.items())


def parse_desktop(desktop_id: str, path: Path, desktop_env: Sequence[str]) -> App | None:
    """One .desktop file as an App, or None when it should not be offered."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return None
    if not parser.has_section("Desktop Entry"):
        return None
    entry = parser["Desktop Entry"]
    if entry.get("Type") != "Application" or not entry.get("Name"):
        return None
    if entry.get("Hidden", "").lower() == "true" or entry.get("NoDisplay", "").lower() == "true":
        return None
    if entry.get("TryExec") and not _resolves(entry["TryExec"]):
        return None
    only = [d for d in entry.get("OnlyShowIn", "").split(";") if d]
    never = [d for d in entry.get("NotShowIn", "").split(";") if d]
    if only and not set(only) & set(desktop_env):
        return None
    if never and set(never) & set(desktop_env):
        return None
    argv = _exec_argv(entry.get("Exec", ""))
    if not argv:
        return None
    if entry.get("Terminal", "").lower() == "true":
        try:
            argv = in_terminal(argv)
        except NotFound:
            return None  # it could not be shown to the user
    name = _localized(entry, "Name")
    # The name in the user's language, and the untranslated one as an alias.
    aliases = [entry["Name"], _localized(entry, "GenericName"), entry.get("GenericName", "")]
    aliases += _localized(entry, "Keywords").split(";") + entry.get("Keywords", "").split(";")
    unique = dict.fromkeys(a.strip() for a in aliases if a.strip())
    return App(desktop_id.removesuffix(".desktop"), name, tuple(unique), argv, str(path))


def windows_dirs() -> list[Path]:
    out = []
    for var in ("APPDATA", "PROGRAMDATA"):
        if os.environ.get(var):
            out.append(Path(os.environ[var]) / "Microsoft" / "Windows" / "Start Menu" / "Programs")
    return out


def mac_dirs() -> list[Path]:
    return [Path("/Applications"), Path("/System/Applications"), Path.home() / "Applications"]


def discover(platform: str | None = None, roots: Sequence[Path] | None = None) -> list[App]:
    """Every launchable app of the platform, de-duplicated by what it launches."""
    platform = platform or sys.platform
    apps: list[App] = []
    if platform.startswith("linux"):
        desktop_env = [d for d in os.environ.get("XDG_CURRENT_DESKTOP", "").split(":") if d]
        for desktop_id, path in _desktop_files(roots or linux_dirs()):
            app = parse_desktop(desktop_id, path, desktop_env)
            if app is not None:
                apps.append(app)
    elif platform.startswith("win"):
        names: set[str] = set()
        for root in roots or windows_dirs():
            for path in sorted(root.rglob("*.lnk")) if root.is_dir() else []:
                # The user's and everyone's Start Menu often hold the same shortcut.
                if path.stem.lower() not in names:
                    names.add(path.stem.lower())
                    apps.append(App(path.stem, path.stem, (), (str(path),), str(path)))
    elif platform == "darwin":
        for root in roots or mac_dirs():
            for path in sorted(root.glob("*.app")) if root.is_dir() else []:
                apps.append(App(path.stem, path.stem, (), ("open", "-a", str(path)), str(path)))
    unique: dict[tuple[str, ...], App] = {}
    for app in apps:
        unique.setdefault(app.argv, app)  # the same program twice is offered once
    return sorted(unique.values(), key=lambda a: a.name.lower())


def _default_launch(argv: Sequence[str]) -> None:
    if sys.platform.startswith("win") and argv and argv[0].lower().endswith(".lnk"):
        os.startfile(argv[0])  # type: ignore[attr-defined]  # Windows only
        return
    subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


class AppIndex:
    """The discovered apps, rebuilt when a watched folder changes."""

    def __init__(
        self,
        platform: str | None = None,
        roots: Sequence[Path] | None = None,
        launch: Callable[[Sequence[str]], None] = _default_launch,
    ) -> None:
        self.platform = platform or sys.platform
        self.roots = list(roots) if roots is not None else None
        self.launch = launch
        self._stamp: tuple[float, ...] | None = None
        self._apps: list[App] = []

    def _watched(self) -> list[Path]:
        if self.roots is not None:
            return self.roots
        if self.platform.startswith("linux"):
            return linux_dirs()
        return windows_dirs() if self.platform.startswith("win") else mac_dirs()

    def _signature(self) -> tuple[float, ...]:
        stamps = []
        for root in self._watched():
            if root.is_dir():
                stamps.append(root.stat().st_mtime)
                stamps += [p.stat().st_mtime for p in root.rglob("*") if p.is_dir()]
            else:
                stamps.append(-1.0)
        return tuple(stamps)

    def apps(self) -> list[App]:
        stamp = self._signature()
        if stamp != self._stamp:
            self._apps = discover(self.platform, self._watched())
            self._stamp = stamp
        return self._apps

    def match(self, query: str) -> Match:
        from rapidfuzz import fuzz

        wanted = " ".join(str(query).lower().split())
        if not wanted:
            raise InvalidInput("which app? give its name")
        if _NOT_IN_A_NAME & set(str(query)):
            raise InvalidInput(f"{query!r} is not an app name: names hold no ; | & $ ` < > \\")
        scored = []
        for app in self.apps():
            names = [app.name, app.id, *app.aliases]
            if wanted in (n.lower() for n in names):
                return Match("launch", app, ((app, 100.0),), f"opening {app.name}")
            score = max(fuzz.WRatio(wanted, n.lower()) for n in names)
            scored.append((app, float(score)))
        scored.sort(key=lambda pair: -pair[1])
        top = tuple(scored[:3])
        if not top or top[0][1] < ASK_SCORE:
            return Match("none", None, top, f"no installed app looks like {query!r}")
        close = len(top) > 1 and top[0][1] - top[1][1] < LEAD
        if top[0][1] < LAUNCH_SCORE or close:
            choices = ", ".join(app.name for app, score in top if score >= ASK_SCORE)
            return Match("ask", None, top, f"which one did you mean: {choices}?")
        return Match("launch", top[0][0], top, f"opening {top[0][0].name}")

    def open(self, query: str) -> Match:
        """Launch the app if the match is sure; otherwise say what to ask. A launch that
        fails (its program is gone) is a NotFound, never an OSError out of a session."""
        found = self.match(query)
        if found.kind == "launch" and found.app is not None:
            try:
                self.launch(found.app.argv)
            except OSError as exc:
                raise NotFound(
                    f"could not open {found.app.name}: {found.app.argv[0]!r} "
                    f"cannot be started ({exc.strerror or exc})"
                ) from None
        return found


# The tool a chat model gets when the companion has an app index.
OPEN_APP_TOOL = {
    "type": "function",
    "function": {
        "name": "open_app",
        "description": "Open an installed application on the user's computer by its name. If "
        "the name is ambiguous, the result says which apps to ask the user about.",
        "parameters": {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The application's name, e.g. 'calculator'.",
                }
            },
            "required": ["name"],
            "additionalProperties": False,
        },
    },
}
