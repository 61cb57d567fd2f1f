"""The `ankita` command: thin commands, each over one `Memory` method."""

from ankita.cli import _evalcli, _store  # noqa: F401  (their commands join the group as imported)
from ankita.cli._main import cli, main
from ankita.cli._ops import bench, token
from ankita.companion._cli import apps, chat, persona, tasks
from ankita.companion.channels._channelcli import channels
from ankita.companion.voice._voicecli import voice

for _command in (bench, token, chat, persona, tasks, apps, voice, channels):
    cli.add_command(_command)

__all__ = ["cli", "main"]
