"""The term postings of candidate search in SQL: filing a fact under its terms, the change log
that in-memory copies catch up from, and the reads a write's questions make."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ankita.store._ask import SIZE, TOP, Ask, groups_met_in, reads, size_of
from ankita.store._sqlbase import (
    PARTS_MAX,
    TERMS_MAX,
    SQLBase,
    TermsOf,
    padded_list,
    placeholders,
)


class TermsSQL(SQLBase):
    """Postings: each fact's index terms, and the log of their changes."""

    def refresh_terms(self, version: str, terms_of: TermsOf) -> int:
        """Refile every fact if the store was indexed by another text analysis than `version`
        (an upgrade changed stemming or stop-words, or a store from before the terms): facts
        found before must still be found. Returns how many facts were refiled."""

        def current() -> bool:
            row = self._run("SELECT value FROM meta WHERE key = 'analyzer'").fetchone()
            return bool(row) and row[0] == version

        if current():
            return 0
        with self.transaction():
            if current():  # another process refiled them meanwhile
                return 0
            rows = self._run('SELECT id, "user", text FROM facts').fetchall()
            self._run("DELETE FROM terms")
            for fact_id, user, text in rows:
                self.index_fact(user, fact_id, terms_of(text), logged=False)
            if rows:
                self._log_terms(None, None)  # every user's postings changed
            self._run(
                "INSERT INTO meta (key, value) VALUES ('analyzer', ?) ON CONFLICT (key) "
                "DO UPDATE SET value = excluded.value",
                (version,),
            )
        return len(rows)

    def index_fact(
        self, user: str, fact_id: str, terms: frozenset[str], logged: bool = True
    ) -> None:
        """File the fact under its candidate-search terms (docs/index.md)."""
        # Every caller files a new fact, or one whose postings it has just deleted: so these
        # are all of the fact's postings.
        self._run_many(
            'INSERT INTO terms ("user", term, fact_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
            [(user, term, fact_id) for term in sorted(terms)],
        )
        if logged:
            self._log_terms(user, fact_id, terms)

    def _log_terms(
        self, user: str | None, fact_id: str | None, terms: frozenset[str] | None = None
    ) -> None:
        """Note that a fact's postings changed (None: every fact's, of every user), for the
        in-memory copies of other connections (`_terms.TermIndex`); and, if `terms` says what
        they are now, for this connection's."""
        seq = self._run(
            'INSERT INTO term_changes ("user", fact_id) VALUES (?, ?) RETURNING seq',
            (user, fact_id),
        ).fetchone()[0]
        self.last_logged = seq
        if user is not None and fact_id is not None and terms is not None:
            own = self.own_filings
            own[seq] = (user, fact_id, terms)
            if len(own) > self.OWN_FILINGS_MAX:
                del own[next(iter(own))]  # the oldest: a copy missing one reads the log

    def term_changes(self, user: str, since: int) -> list[tuple[int, str | None]]:
        """(seq, fact id) of every change to the user's postings after `since`, in order; a
        fact id of None means that every fact's may have changed."""
        return [
            (r[0], r[1])
            for r in self._run(
                'SELECT seq, fact_id FROM term_changes WHERE seq > ? AND ("user" = ? OR '
                '"user" IS NULL) ORDER BY seq',
                (since, user),
            ).fetchall()
        ]

    def last_term_change(self) -> int:
        return int(self._run("SELECT COALESCE(MAX(seq), 0) FROM term_changes").fetchone()[0])

    def user_terms(self, user: str) -> Iterator[tuple[str, str]]:
        """(term, fact id) of every posting of the user, in term order, as they are read."""
        yield from self._run(
            'SELECT term, fact_id FROM terms WHERE "user" = ? ORDER BY term', (user,)
        )

    def postings(
        self,
        user: str,
        terms: Sequence[str],
        ranges: Sequence[tuple[str, str, Sequence[str]]],
        found_terms: Sequence[str] = (),
    ) -> list[tuple[str, str | None, int]]:
        """(fact id, term, part) of the user's postings under one of `terms` (part -1) or in
        one of `ranges` [low, high) but not one of its excluded terms (part = its number); and
        (fact id, None, -2) for a fact filed under one of `found_terms`, once however many. In
        few statements whose shapes repeat: the lists padded to a power of two, the ranges one
        SELECT each."""
        parts: list[tuple[str, list[Any]]] = []
        for listed, column, part in ((found_terms, "NULL", -2), (terms, "term", -1)):
            for start in range(0, len(listed), TERMS_MAX):
                chunk = padded_list(listed[start : start + TERMS_MAX])
                parts.append(
                    (
                        f'SELECT fact_id, {column}, {part} FROM terms WHERE "user" = ? '
                        f"AND term IN ({placeholders(chunk)})",
                        [user, *chunk],
                    )
                )
        for number, (low, high, excluded) in enumerate(ranges):
            sql = 'SELECT fact_id, term, ? FROM terms WHERE "user" = ? AND term >= ? AND term < ?'
            out: list[Any] = []
            if excluded:
                # Padded with the empty term, which no range holds (NULL would exclude all).
                out = padded_list(excluded, "")
                sql += f" AND term NOT IN ({placeholders(out)})"
            parts.append((sql, [number, user, low, high, *out]))
        rows: list[tuple[str, str | None, int]] = []
        for start in range(0, len(parts), PARTS_MAX):  # bounded statement size
            chunk_parts = parts[start : start + PARTS_MAX]
            rows += self._run(
                " UNION ".join(sql for sql, _ in chunk_parts),
                [p for _, ps in chunk_parts for p in ps],
            ).fetchall()
        return rows

    def terms_of(
        self, ids: Sequence[str], fields: Sequence[str] | None = None
    ) -> list[tuple[str, str]]:
        """(fact id, term) of every term of these facts, or of those under one of `fields`."""
        if fields is not None and not fields:
            return []  # under none of no fields, as the in-memory postings answer
        rows: list[tuple[str, str]] = []
        # The fields are asked in SQL: most of a fact's terms are under other fields, and each
        # row returned is decoded in Python. substr, not a range: Postgres collations ignore
        # punctuation.
        wanted = " OR ".join(["substr(term, 1, ?) = ?"] * len(fields or ()))
        where = f" AND ({wanted})" if wanted else ""
        asked = [x for f in fields or () for x in (len(f), f)]
        for start in range(0, len(ids), TERMS_MAX):
            chunk = padded_list(ids[start : start + TERMS_MAX])
            rows += self._run(
                f"SELECT fact_id, term FROM terms WHERE fact_id IN ({placeholders(chunk)}){where}",
                [*chunk, *asked],
            ).fetchall()
        return rows

    def groups_met(self, ids: Sequence[str], ask: Ask) -> dict[str, set[int]]:
        """For each of these facts, the groups of the ask that one of its terms meets."""
        return groups_met_in(self.terms_of(ids, ask.fields), ask)

    def filed_under(self, user: str, term: str, ids: Sequence[str]) -> set[str]:
        """Those of these facts that are filed under `term`."""
        found: set[str] = set()
        for start in range(0, len(ids), TERMS_MAX):
            chunk = padded_list(ids[start : start + TERMS_MAX])
            found.update(
                r[0]
                for r in self._run(
                    f'SELECT fact_id FROM terms WHERE "user" = ? AND term = ? AND fact_id IN '
                    f"({placeholders(chunk)})",
                    [user, term, *chunk],
                ).fetchall()
            )
        return found

    def counted(self, user: str, ask: Ask) -> set[str]:
        """Facts filed under one of the ask's fields + a word of at least `ask.at_least` of its
        groups, counted by the database: a common word's postings are many, their count few."""
        parts: list[str] = []
        params: list[Any] = []
        for number, group in enumerate(ask.groups):
            select = f'SELECT fact_id, {number} AS g FROM terms WHERE "user" = ? AND '
            for field in ask.fields:
                seeks, runs = reads(field, group)
                for start in range(0, len(seeks), TERMS_MAX):
                    chunk = seeks[start : start + TERMS_MAX]
                    parts.append(f"{select}term IN ({placeholders(chunk)})")
                    params += [user, *chunk]
                for run in runs:
                    # The run's range, in code point order (the terms column compares bytes
                    # in both backends); in it, the covered words and those extending the word.
                    covered = sorted(run.covered)
                    either = f"term IN ({placeholders(covered)}) OR " if covered else ""
                    extension = "term > ?"
                    if run.longest is not None:
                        extension += " AND length(term) <= ?"
                    parts.append(f"{select}term >= ? AND term < ? AND ({either}{extension})")
                    params += [
                        user,
                        run.low,
                        run.high,
                        *covered,
                        run.extends,
                        *([] if run.longest is None else [run.longest]),
                    ]
        if ask.at_least > len(ask.groups) or not parts:
            return set()
        sql = (
            f"SELECT fact_id, COUNT(DISTINCT g) FROM ({' UNION ALL '.join(parts)}) AS m "
            f"GROUP BY fact_id HAVING COUNT(DISTINCT g) >= {max(1, int(ask.at_least))}"
        )
        met = dict(self._run(sql, params).fetchall())
        # A fact's size is read only where it may matter (`Ask.by_size`).
        unsure = sorted(f for f, n in met.items() if n < ask.sure)
        size = self.sizes(unsure) if unsure else {}
        return {f for f, n in met.items() if n >= ask.needs(size.get(f, 0))}

    def sizes(self, ids: Sequence[str]) -> dict[str, int]:
        """The size each of these facts is filed under (`_ask.SIZE`; 0 if none)."""
        under: dict[str, list[str]] = {i: [] for i in ids}
        for fact_id, term in self.terms_of(ids, (SIZE,)):
            under[fact_id].append(term)
        return {i: size_of(terms) for i, terms in under.items()}

    def terms_under(
        self, user: str, prefixes: Sequence[str], ids: Sequence[str] | None = None
    ) -> list[tuple[str, str]]:
        """(fact id, term) of every term starting with one of `prefixes`, of these facts (or
        of all the user's)."""
        clause, params = "", list[Any]()
        if ids is not None:
            if not ids:
                return []
            clause, params = self._ids_clause(sorted(ids), "fact_id")
            clause = " AND " + clause
        out: list[tuple[str, str]] = []
        for prefix in prefixes:
            out += [
                (r[0], r[1])
                for r in self._run(
                    'SELECT fact_id, term FROM terms WHERE "user" = ? AND term >= ? AND term < ?'
                    + clause,
                    [user, prefix, prefix + TOP, *params],
                ).fetchall()
            ]
        return out
