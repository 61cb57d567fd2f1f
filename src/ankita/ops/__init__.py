"""Whole-store operations: the lossless export format and the doctor."""
