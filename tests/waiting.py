"""Waiting in tests for something another thread or process does."""

import time


def wait_for(predicate, timeout=20.0):
    """True once `predicate()` is, polled every 50 ms; False after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False
