"""Voice: speech recognition, dictation, echo cancelling and the live loop."""
