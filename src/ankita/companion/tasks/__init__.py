"""Scheduled tasks and heartbeats: when a job is due, and running it."""
