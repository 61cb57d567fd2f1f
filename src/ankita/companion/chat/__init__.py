"""Chat: one conversation on a local model, its sessions, lanes, reply classes, terminal loop."""
