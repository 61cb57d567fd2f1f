"""Where facts live: the store contract written once over SQL, its SQLite and PostgreSQL backends,
and undo.
"""
