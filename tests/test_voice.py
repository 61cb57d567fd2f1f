"""The voice state machine, driven by injected transcripts and a fake clock."""

import pytest

from ankita import InvalidInput, NotFound
from ankita.companion.voice._voice import (
    FOLLOW_UP,
    HINT,
    LISTENING,
    PROCESSING,
    SPEAKING,
    STANDBY,
    Voice,
    read_inputs,
)


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def voice():
    clock = Clock()
    return Voice(clock), clock


def test_standby_shows_the_hint_and_ignores_speech_without_the_wake_word():
    v, _ = voice()
    assert v.hint() == HINT
    assert v.heard("what's the weather") == [("ignored", "no wake word"), ("show_hint", HINT)]
    assert v.state == STANDBY


def test_wake_command_reply_follow_up_without_wake_word_then_expiry():
    v, clock = voice()
    assert v.heard("Ankita") == [("listen", "")] and v.state == LISTENING
    assert v.heard("what time is it") == [("ask", "what time is it")]
    assert v.reply("It is five.") == [("mute", ""), ("speak", "It is five.")]
    assert v.state == SPEAKING and v.mic_muted()
    assert v.heard("it is five") == [("ignored", "microphone muted")]  # our own voice
    assert v.spoken() == [("unmute_after", "0.5"), ("listen", "")]
    assert v.state == FOLLOW_UP and v.hint() is None
    clock.t += 0.6
    # The follow-up needs no wake word.
    assert v.heard("And tomorrow?") == [("ask", "and tomorrow")] and v.state == PROCESSING
    v.reply("Six.")
    v.spoken()
    clock.t += 24.9
    assert v.tick() == [] and v.state == FOLLOW_UP  # window still open: it re-armed
    clock.t += 0.2
    assert v.tick() == [("show_hint", HINT)] and v.state == STANDBY
    assert v.heard("and the day after") == [("ignored", "no wake word"), ("show_hint", HINT)]


def test_wake_word_with_a_command_in_one_breath():
    v, _ = voice()
    assert v.heard("Ankita, open the calendar") == [("ask", "open the calendar")]
    assert v.state == PROCESSING


def test_a_stop_word_cancels_speech_even_while_muted():
    v, clock = voice()
    v.heard("Ankita tell me a story")
    v.reply("Once upon a time ...")
    assert v.heard("stop") == [("cancel_speech", ""), ("unmute_after", "0.5"), ("listen", "")]
    assert v.state == FOLLOW_UP
    v.heard("Ankita what time is it")  # the mute tail is still running
    clock.t += 1
    assert v.heard("what time is it") == [("ask", "what time is it")]


def test_a_stop_word_cancels_a_request_being_worked_on():
    v, _ = voice()
    v.heard("Ankita search my notes")
    assert v.heard("cancel")[0] == ("cancel_request", "")


def test_woken_but_nothing_said_returns_to_standby():
    v, clock = voice()
    v.heard("Ankita")
    clock.t += 8.1
    assert v.tick() == [("show_hint", HINT)] and v.state == STANDBY


def test_failures_never_leave_it_stuck():
    v, _ = voice()
    v.heard("Ankita what is new")
    assert v.failed("model timed out") == [("show_hint", HINT)]
    assert v.state == STANDBY and v.heard("Ankita") == [("listen", "")]


def test_a_silent_reply_opens_the_follow_up_window_without_speaking():
    v, _ = voice()
    v.heard("Ankita never mind")
    assert v.reply("") == [("listen", "")] and v.state == FOLLOW_UP and not v.mic_muted()


def test_session_inputs_are_all_checked_before_anything_starts(tmp_path):
    wav = tmp_path / "hello.wav"
    wav.write_bytes(b"RIFF")
    assert read_inputs(["+2.5", str(wav), "tell me a story"]) == [
        ("silence", 2.5),
        ("wav", str(wav)),
        ("text", "tell me a story"),
    ]
    for bad in ("+abc", "+-30", "+nan", "+inf", "+"):
        with pytest.raises(InvalidInput, match="takes a number of seconds"):
            read_inputs(["ankita", bad])
    with pytest.raises(NotFound, match="no WAV file"):
        read_inputs(["ankita", str(tmp_path / "missing.wav")])


def test_the_voice_command_refuses_bad_inputs_with_an_exit_code(tmp_path):
    from click.testing import CliRunner

    from ankita.cli import cli

    runner = CliRunner()
    bad = runner.invoke(cli, ["--db", str(tmp_path / "m.db"), "voice", "ankita", "+abc"])
    assert bad.exit_code == 2 and "takes a number of seconds" in bad.output
    missing = runner.invoke(cli, ["--db", str(tmp_path / "m.db"), "voice", "gone.wav"])
    assert missing.exit_code == 3 and "no WAV file" in missing.output
    # An error's text is printed as it is, brackets and all (never read as markup).
    odd = runner.invoke(cli, ["--db", str(tmp_path / "m.db"), "voice", "[bold]x.wav"])
    assert odd.exit_code == 3 and "no WAV file '[bold]x.wav'" in odd.output
    neither = runner.invoke(cli, ["--db", str(tmp_path / "m.db"), "voice"])
    assert neither.exit_code == 2 and "give INPUTS, or --mic, or --stream WAV" in neither.output


def test_the_hint_is_shown_at_the_start_and_once_when_a_window_expires():
    v, clock = voice()
    assert v.start() == [("show_hint", HINT)]
    v.heard("Ankita")
    assert v.start() == []  # only in standby
    clock.t += 8.1  # the listening window expires, found by the next transcript
    assert v.heard("what is the weather") == [
        ("show_hint", HINT),
        ("ignored", "no wake word"),
    ]


def test_a_stop_word_with_nothing_to_stop_is_never_a_question():
    v, clock = voice()
    assert v.heard("Ankita stop") == [("listen", "")] and v.state == LISTENING
    assert v.heard("stop") == [("ignored", "nothing to stop"), ("listen", "")]
    v.heard("what time is it")
    v.reply("Five.")
    v.spoken()
    clock.t += 1
    assert v.heard("cancel") == [("ignored", "nothing to stop"), ("listen", "")]
    assert v.state == FOLLOW_UP


def test_the_follow_up_window_is_judged_where_speech_began():
    v, clock = voice()
    v.heard("Ankita what time is it")
    v.reply("Five.")
    v.spoken()
    began = clock.t + 24.5  # a long sentence begun inside the 25 s window ...
    clock.t += 26.0  # ... ends after it
    assert v.heard("and what about tomorrow morning", started=began) == [
        ("ask", "and what about tomorrow morning")
    ]
    v.reply("Six.")
    v.spoken()
    clock.t += 26.0
    assert v.heard("and after", started=clock.t - 0.5)[0] == ("show_hint", HINT)  # began late
