"""The PostgreSQL schema of team memory: numbered, append-only migrations.

The same tables as SQLite's (``database.MIGRATIONS``), many projects in one database:

* every table has ``project``, defaulting to the connection's ``jupymem.project`` setting
  (so the shared SQL never names it), and every key is per project;
* ``events``: seq is per project, given by a trigger from ``chain_heads``, the one row per
  project that holds the head of its hash chain. The trigger refuses an event whose
  ``prev`` is not that head's hash: the chain cannot fork, whoever writes and however.
  ``chain_heads`` exists because row-level security hides other people's private events,
  so "the newest event I can see" is not the head; the head row is visible to members.
  The log is append-only: a DELETE is refused (gc purges payloads, it deletes nothing);
* ``memories.rid`` is a BIGSERIAL: ascending and never reused, what retrieval's in-process
  index needs (writes to a project are serialized, so rids also ascend in commit order);
* no FTS5: lexical search is retrieval's in-process BM25 (``retrieval/postings.py``);
* isolation is the database's job (``security`` below): row-level security, FORCEd so the
  owner is held to it too, admits a row only in the connection's project, only to a member
  of it (``members``), and a private row only to its ``author_role``; a person's working
  set (staged failures, ``%%ask`` messages and summaries) only to its author. History and cited
  evidence carry their memory's ``private``/``author_role``, copied by triggers, because
  a policy that looked the memory up would itself be filtered by the memory's policy.

The schema lives in its own PostgreSQL schema (``SCHEMA``); the version is the count of
rows in ``schema_migrations``.
"""

from __future__ import annotations

from ..database import MEMORY_COLUMNS_DDL
from . import guard

SCHEMA = "jupymem"
USER_ROLE = "jupymem_user"  # the group role every person's login role joins (``admin.create_user``)
OWNER_ROLE = "jupymem_owner"  # owns the tables; NOLOGIN, so no one works as the owner

# Every table that holds a project's rows, and whether its rows can be private.
PROJECT_TABLES = (
    "meta", "events", "memories", "history", "cited_evidence", "staged_evidence",
    "conversation", "conversation_summary", "shared_files", "chain_heads",
)

_PROJECT = "project TEXT NOT NULL DEFAULT current_setting('jupymem.project')"
_AUTHOR = "author_role TEXT NOT NULL DEFAULT current_user"


# A row that belongs to a memory is as private as the memory: copied from the memory's row
# when the row is written (``missing`` says what a row without one gets), and spread to
# the rows when the memory's privacy changes. Text only: the migrations that call these
# are released, so their SQL must come out the same byte for byte (``test_migrations``).
def _copy_privacy(name: str, match: str, missing: str) -> str:
    return f"""CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        SELECT m.private, m.author_role INTO NEW.private, NEW.author_role
            FROM memories m WHERE m.project = NEW.project AND {match};
        IF NOT FOUND THEN{missing}
        END IF;
        RETURN NEW;
    END $$;"""


_PUBLIC_AS_WRITER = """
            NEW.private := 0;
            NEW.author_role := current_user;"""
_NO_VECTOR_WITHOUT_ROW = """
            RAISE EXCEPTION 'jupymem: no memory row % in project % to keep a vector for', NEW.rid, NEW.project
                USING ERRCODE = 'insufficient_privilege';"""


def _spread_privacy(name: str, tables: tuple[str, ...], match: str) -> str:
    updates = "".join(
        f"\n        UPDATE {table} SET private = NEW.private WHERE project = NEW.project AND {match};" for table in tables
    )
    return f"""CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN{updates}
        RETURN NULL;
    END $$;"""


MIGRATIONS: tuple[str, ...] = (
    # 1: the tables of SQLite's migrations 1-4, per project, without FTS5.
    f"""
    CREATE TABLE members (
        project TEXT NOT NULL,
        role TEXT NOT NULL,
        PRIMARY KEY (project, role)
    );
    CREATE TABLE meta ({_PROJECT}, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (project, key));
    CREATE TABLE chain_heads ({_PROJECT} PRIMARY KEY, seq BIGINT NOT NULL, hash TEXT NOT NULL, at TEXT);
    CREATE TABLE events (
        {_PROJECT},
        seq BIGINT NOT NULL,
        uid TEXT NOT NULL,
        type TEXT NOT NULL,
        at TEXT NOT NULL,
        payload TEXT,
        payload_hash TEXT NOT NULL,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL,
        scope TEXT NOT NULL DEFAULT 'local',
        source TEXT,
        writer TEXT,
        {_AUTHOR},
        PRIMARY KEY (project, seq),
        UNIQUE (project, uid),
        UNIQUE (project, hash)
    );
    CREATE INDEX events_shared ON events (project, source) WHERE scope = 'shared';
    CREATE TABLE memories (
        {_PROJECT},
        rid BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL,
        {MEMORY_COLUMNS_DDL}
        seq BIGINT NOT NULL,
        author TEXT,
        private INTEGER NOT NULL DEFAULT 0,
        source TEXT,
        {_AUTHOR},
        UNIQUE (project, id)
    );
    CREATE INDEX memories_project_rid ON memories (project, rid);
    CREATE INDEX memories_status ON memories (project, status, kind);
    CREATE INDEX memories_seq ON memories (project, seq);
    CREATE INDEX memories_supersedes ON memories (project, supersedes) WHERE supersedes IS NOT NULL;
    CREATE TABLE history (
        {_PROJECT},
        memory_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        at TEXT NOT NULL,
        action TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '{{}}',
        private INTEGER NOT NULL DEFAULT 0,
        {_AUTHOR}
    );
    CREATE INDEX history_memory ON history (project, memory_id, seq);
    CREATE TABLE cited_evidence (
        {_PROJECT},
        handle TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        data TEXT NOT NULL,
        private INTEGER NOT NULL DEFAULT 0,
        {_AUTHOR},
        PRIMARY KEY (project, handle)
    );
    CREATE TABLE staged_evidence (
        {_PROJECT},
        handle TEXT NOT NULL,
        session TEXT NOT NULL,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (project, handle)
    );
    CREATE INDEX staged_session ON staged_evidence (project, session, created_at);
    CREATE TABLE conversation (
        {_PROJECT},
        id BIGSERIAL PRIMARY KEY,
        notebook TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL,
        {_AUTHOR}
    );
    CREATE INDEX conversation_notebook ON conversation (project, notebook, id);
    CREATE TABLE conversation_summary (
        {_PROJECT},
        notebook TEXT NOT NULL,
        summary TEXT NOT NULL,
        folded INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (project, notebook)
    );
    CREATE TABLE shared_files (
        {_PROJECT},
        name TEXT NOT NULL,
        size BIGINT NOT NULL,
        mtime_ns BIGINT NOT NULL,
        ino BIGINT NOT NULL,
        lines INTEGER NOT NULL,
        applied INTEGER NOT NULL,
        problems TEXT NOT NULL DEFAULT '[]',
        tail_ok INTEGER NOT NULL DEFAULT 1,
        due TEXT,
        PRIMARY KEY (project, name)
    );
    """,
    # 2: the chain's guard: seq from the head row, prev must be the head, append-only.
    """
    CREATE FUNCTION chain_append() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        head_seq BIGINT;
        head_hash TEXT;
    BEGIN
        -- The row lock taken here queues every other writer of this project behind us.
        -- A project's first event makes its head row (a second first writer waits on it).
        INSERT INTO chain_heads (project, seq, hash) VALUES (NEW.project, 0, repeat('0', 64)) ON CONFLICT DO NOTHING;
        SELECT seq, hash INTO head_seq, head_hash FROM chain_heads WHERE project = NEW.project FOR UPDATE;
        IF NEW.prev IS DISTINCT FROM head_hash THEN
            RAISE EXCEPTION 'jupymem: event % does not follow the head of project %''s chain', NEW.uid, NEW.project
                USING ERRCODE = 'serialization_failure';
        END IF;
        IF NEW.seq IS NULL THEN
            NEW.seq := head_seq + 1;
        ELSIF NEW.seq <= head_seq THEN
            RAISE EXCEPTION 'jupymem: event seq % is not after the head (%)', NEW.seq, head_seq
                USING ERRCODE = 'serialization_failure';
        END IF;
        UPDATE chain_heads SET seq = NEW.seq, hash = NEW.hash, at = NEW.at WHERE project = NEW.project;
        RETURN NEW;
    END $$;
    CREATE TRIGGER events_chain BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION chain_append();
    CREATE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'jupymem: the event log is append-only (gc purges payloads, it deletes no event)';
    END $$;
    CREATE TRIGGER events_append_only BEFORE DELETE OR TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION append_only();
    """,
    # 3: a memory's privacy follows it into history and cited evidence.
    f"""
    {_copy_privacy("inherit_privacy", "m.id = NEW.memory_id", _PUBLIC_AS_WRITER)}
    CREATE TRIGGER history_privacy BEFORE INSERT ON history FOR EACH ROW EXECUTE FUNCTION inherit_privacy();
    CREATE TRIGGER cited_privacy BEFORE INSERT ON cited_evidence FOR EACH ROW EXECUTE FUNCTION inherit_privacy();
    {_spread_privacy("spread_privacy", ("history", "cited_evidence"), "memory_id = NEW.id")}
    CREATE TRIGGER memories_privacy AFTER UPDATE OF private ON memories
        FOR EACH ROW WHEN (OLD.private IS DISTINCT FROM NEW.private) EXECUTE FUNCTION spread_privacy();
    CREATE FUNCTION keep_author() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.author_role := OLD.author_role;  -- no one makes a row someone else's
        RETURN NEW;
    END $$;
    CREATE TRIGGER memories_author BEFORE UPDATE ON memories FOR EACH ROW EXECUTE FUNCTION keep_author();
    CREATE TRIGGER events_author BEFORE UPDATE ON events FOR EACH ROW EXECUTE FUNCTION keep_author();
    CREATE TRIGGER conversation_author BEFORE UPDATE ON conversation FOR EACH ROW EXECUTE FUNCTION keep_author();
    """,
)

# -- row-level security -------------------------------------------------------------

# The membership test does not depend on the row, so PostgreSQL runs it once a statement.
_MEMBER = (
    "project = current_setting('jupymem.project', true)"
    " AND EXISTS (SELECT 1 FROM members m WHERE m.project = current_setting('jupymem.project', true)"
    " AND m.role = current_user)"
)
_VISIBLE = {
    "memories": "(private = 0 OR author_role = current_user)",
    "history": "(private = 0 OR author_role = current_user)",
    "cited_evidence": "(private = 0 OR author_role = current_user)",
    "events": "(scope <> 'private' OR author_role = current_user)",
    "conversation": "author_role = current_user",  # a person's %%ask conversation is theirs
}
# Tables whose author_role is the writer (history and cited evidence inherit the memory's).
_AUTHORED = ("memories", "events", "conversation")


def policy(table: str) -> str:
    """The row-level security predicate of ``table``."""
    extra = _VISIBLE.get(table)
    return f"{_MEMBER} AND {extra}" if extra else _MEMBER


def _security() -> str:
    out = [
        "ALTER TABLE members ENABLE ROW LEVEL SECURITY;",
        "ALTER TABLE members FORCE ROW LEVEL SECURITY;",
        # A person sees only their own memberships; only an administrator changes them.
        "CREATE POLICY own_memberships ON members FOR SELECT USING (role = current_user);",
        f"GRANT SELECT ON members TO {USER_ROLE};",
    ]
    for table in PROJECT_TABLES:
        pred = policy(table)
        out += [
            f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;",
            f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY;",
            f"CREATE POLICY in_project ON {table} USING ({pred}) WITH CHECK ({pred});",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {USER_ROLE};",
        ]
        if table in _AUTHORED:  # a row is written in its writer's name, never another's
            out.append(
                f"CREATE POLICY own_rows ON {table} AS RESTRICTIVE FOR INSERT WITH CHECK (author_role = current_user);"
            )
    out.append(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA {SCHEMA} TO {USER_ROLE};")
    return "\n".join(out)


# 4: the policies. Built from the tables above once; a later change is a new migration.
MIGRATIONS += (_security(),)

# 5: verify for a member who cannot see every event. Others' private events leave gaps in
# the chain a member reads, so the links and header hashes of the whole chain are checked
# here, by a function that runs as the owner (who may read every event, and nothing else
# runs as the owner) and answers only how many events there are and the first bad one:
# no hidden event's content leaves the database. The member checks what it can see
# itself, payloads included (``maintenance.verify``). The header is spelled as
# ``eventlog.event_hash`` spells it; to_json escapes text as Python's json does.
MIGRATIONS += (f"""
    CREATE POLICY owner_verifies ON events AS PERMISSIVE FOR SELECT TO {OWNER_ROLE} USING (true);
    CREATE POLICY owner_verifies ON members AS PERMISSIVE FOR SELECT TO {OWNER_ROLE} USING (true);
    CREATE POLICY owner_verifies ON chain_heads AS PERMISSIVE FOR SELECT TO {OWNER_ROLE} USING (true);
    CREATE FUNCTION chain_check() RETURNS TABLE (events BIGINT, bad_seq BIGINT, problem TEXT)
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {SCHEMA}, pg_temp AS $$
    DECLARE
        p TEXT := current_setting('jupymem.project', true);
        r RECORD;
        last TEXT := repeat('0', 64);
        n BIGINT := 0;
        header TEXT;
    BEGIN
        -- session_user: the person who logged in (current_user is the owner in here).
        IF NOT EXISTS (SELECT 1 FROM members m WHERE m.project = p AND m.role = session_user) THEN
            RAISE EXCEPTION 'jupymem: % is not a member of project %', session_user, p
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        FOR r IN SELECT e.seq, e.uid, e.type, e.at, e.payload, e.payload_hash, e.prev, e.hash
                 FROM events e WHERE e.project = p ORDER BY e.seq LOOP
            n := n + 1;
            IF r.prev IS DISTINCT FROM last THEN
                RETURN QUERY SELECT n, r.seq, 'does not follow the event before it (broken chain)'::text;
                RETURN;
            END IF;
            header := '{{"at":' || to_json(r.at)::text || ',"payload_hash":' || to_json(r.payload_hash)::text
                || ',"prev":' || to_json(r.prev)::text || ',"type":' || to_json(r.type)::text
                || ',"uid":' || to_json(r.uid)::text || '}}';
            IF encode(sha256(convert_to(header, 'UTF8')), 'hex') IS DISTINCT FROM r.hash THEN
                RETURN QUERY SELECT n, r.seq, 'fails its hash; it was altered'::text;
                RETURN;
            END IF;
            IF r.payload IS NOT NULL
               AND encode(sha256(convert_to(r.payload, 'UTF8')), 'hex') IS DISTINCT FROM r.payload_hash THEN
                RETURN QUERY SELECT n, r.seq, 'has a payload that was altered'::text;
                RETURN;
            END IF;
            last := r.hash;
        END LOOP;
        IF last IS DISTINCT FROM coalesce((SELECT h.hash FROM chain_heads h WHERE h.project = p), repeat('0', 64)) THEN
            RETURN QUERY SELECT n, NULL::bigint, 'the head of the chain is not its last event'::text;
            RETURN;
        END IF;
        RETURN QUERY SELECT n, NULL::bigint, NULL::text;
    END $$;
    REVOKE ALL ON FUNCTION chain_check() FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION chain_check() TO {USER_ROLE};
    GRANT SELECT ON schema_migrations TO {USER_ROLE};
""",)

# 6: the dense leg's stored vectors, one table per tier (``vectors.SLOTS``), keyed by the
# memory's row: bytes as ``retrieval/index.py`` makes them (float32, or int8 for the
# transformer), read whole into the same in-process index SQLite's vectors feed, so the
# two engines rank alike. Not pgvector's ``vector``: its HNSW search would filter rows by
# row-level security after the index scan (a small project among many gets fewer than k),
# computes float32 cosines where the in-process copy keeps float16/int8 ones (other
# confidences than SQLite's), and CREATE EXTENSION vector (0.6) needs a superuser
# (``benchmarks/bench_pg_dense.py`` measures the rest). A vector is as private as its
# memory: ``private``/``author_role`` are copied from the memory's row on every write
# (as history's are) and follow it when it changes; a vector for a row the writer cannot
# see is refused. A memory's row leaving takes its vectors with it (the foreign key).
VECTOR_TABLES = ("memory_vectors", "memory_vectors_transformer")


def _vectors() -> str:
    out = [f"""
    {_copy_privacy("vector_privacy", "m.rid = NEW.rid", _NO_VECTOR_WITHOUT_ROW)}
    {_spread_privacy("spread_vector_privacy", VECTOR_TABLES, "rid = NEW.rid")}
    """]
    for table in VECTOR_TABLES:
        pred = policy(table)
        out.append(f"""
    CREATE TABLE {table} (
        {_PROJECT},
        rid BIGINT NOT NULL REFERENCES memories (rid) ON DELETE CASCADE,
        memory_id TEXT NOT NULL,
        model TEXT NOT NULL,
        vector BYTEA NOT NULL,
        private INTEGER NOT NULL DEFAULT 0,
        {_AUTHOR},
        PRIMARY KEY (project, rid)
    );
    CREATE TRIGGER {table}_privacy BEFORE INSERT OR UPDATE ON {table}
        FOR EACH ROW EXECUTE FUNCTION vector_privacy();
    ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
    ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
    CREATE POLICY in_project ON {table} USING ({pred}) WITH CHECK ({pred});
    GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {USER_ROLE};
    """)
    out.append("""
    CREATE TRIGGER memories_vector_privacy AFTER UPDATE OF private ON memories
        FOR EACH ROW WHEN (OLD.private IS DISTINCT FROM NEW.private) EXECUTE FUNCTION spread_vector_privacy();
    """)
    return "".join(out)


_VISIBLE.update(dict.fromkeys(VECTOR_TABLES, "(private = 0 OR author_role = current_user)"))
MIGRATIONS += (_vectors(),)

# 7: a person's working set is theirs: staged failures and %%ask summaries gain the
# writer's role, and row-level security shows each person only their own (as their
# conversation messages already are). A staged failure is a person's until a memory
# cites it: the cited copy (``cited_evidence``) is then as visible as that memory. Both
# tables were written by no one before (the engine refused them), so the default fills
# nothing that matters. A person keeps a summary per notebook: the key gains the role.
_OWN_WORK = ("staged_evidence", "conversation_summary")


def _own_work() -> str:
    out = []
    for table in _OWN_WORK:
        pred = f"{_MEMBER} AND author_role = current_user"
        out.append(f"""
    ALTER TABLE {table} ADD COLUMN author_role TEXT NOT NULL DEFAULT current_user;
    DROP POLICY in_project ON {table};
    CREATE POLICY in_project ON {table} USING ({pred}) WITH CHECK ({pred});
    CREATE TRIGGER {table}_author BEFORE UPDATE ON {table} FOR EACH ROW EXECUTE FUNCTION keep_author();
    """)
    out.append("""
    ALTER TABLE conversation_summary DROP CONSTRAINT conversation_summary_pkey;
    ALTER TABLE conversation_summary ADD PRIMARY KEY (project, author_role, notebook);
    CREATE INDEX staged_author ON staged_evidence (project, author_role, created_at);
    """)
    return "".join(out)


_VISIBLE.update(dict.fromkeys(_OWN_WORK, "author_role = current_user"))
_VISIBLE.update(dict.fromkeys(VECTOR_TABLES, "author_role = current_user"))  # from migration 8 (``guard``)
MIGRATIONS += (_own_work(),)

# 8: the database enforces the log: members append, the database derives the rest
# (``guard``, where the migration and its reasons are).
MIGRATIONS += (guard.migration(SCHEMA, OWNER_ROLE, USER_ROLE, _MEMBER),)

# 9: SQLite's migration 5: a shared file's ctime beside its mtime (``share.signature``).
MIGRATIONS += ("""
    ALTER TABLE shared_files ADD COLUMN ctime_ns BIGINT NOT NULL DEFAULT 0;
    """,)

SCHEMA_VERSION = len(MIGRATIONS)
