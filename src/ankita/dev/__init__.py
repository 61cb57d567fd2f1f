"""Measuring Ankita: bench, eval on pairs, streams and recall questions, charts and the demo."""
