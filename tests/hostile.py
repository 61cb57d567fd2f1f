"""Hostile inputs shared by every door's test (tests/test_hostile.py)."""

import hashlib
import sqlite3

# Refused with a clear error at every door.
REFUSED_TEXTS = [
    "",
    "   \t ",
    "x" * 2001,
    "nul \x00 byte",
    "escape \x1b[31m red",
    "bell \x07 ring",
    "delete \x7f char",
    "lone \ud800 surrogate",
    "low \udfff surrogate",
    "replacement \ufffd mark",
]
# Stored verbatim (after trimming surrounding white space) at every door.
STORED_TEXTS = [
    "x" * 2000,
    "emoji 🎉🧠 party",
    "RTL שלום עולם",
    "Arabic مرحبا بالعالم",
    "override \u202eevil",
    "zero\u200bwidth space",
    "combining e\u0301te",
    '"quoted" "unbalanced',
    "star* and prefix*",
    "NEAR(alpha beta)",
    "alpha AND beta OR NOT gamma",
    "'; DROP TABLE facts;--",
    "Robert'); DROP TABLE facts; --",
    "{}[]()^$|?+ regex chars",
    "100%_wildcards%",
    "back\\slash",
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "column:match text",
    "tab\tinside",
    "new\nline inside",
    "\ufeffbyte order mark",
    "  padded on both sides  ",
]
BAD_KINDS = ["../x", "a/b", "a.b", "Tool", "", "k" * 40, "kind space", "ü", "x\x00"]
BAD_USERS = ["../alice", "a/b", ".", "..", "a.b", "", "u" * 65, "bob\x00", "al ice"]
BAD_IDS = ["../x", "a" * 65, "1 OR 1=1", "x\x00", "a.b", "a/b", "*"]
MISSING_ID = "doesnotexist00"
QUERIES = [
    '"',
    "*",
    "NEAR",
    "NEAR(a b)",
    ";--",
    "a AND",
    "OR",
    "^x",
    "col:x",
    '""',
    "'",
    "(",
    ")",
    "-x",
    "+x",
    "a*b",
    "\\",
    "%",
    "_",
]


def snapshot(path) -> str:
    """A digest of every row that matters: equal digests mean nothing changed."""
    db = sqlite3.connect(path)
    digest = hashlib.sha256()
    for table in ("facts", "links", "events", "vectors", "terms"):
        for row in db.execute(f"SELECT * FROM {table} ORDER BY 1, 2"):
            digest.update(repr(row).encode("utf-8", "surrogatepass"))
    db.close()
    return digest.hexdigest()
