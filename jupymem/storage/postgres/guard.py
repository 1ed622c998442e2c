"""Migration 8: the database keeps the log honest, not our queries.

Before it, members held UPDATE and DELETE on the log's tables and wrote the derived rows
themselves, so a member with raw SQL could rewrite a teammate's memory, re-hash the chain
after it and move the head, and ``verify`` answered ok. From here on:

* A member's only write to the log is ``INSERT INTO events``. Two triggers check it before
  it lands: ``event_author`` (running as the member) makes ``author_role`` the connecting
  role and ``writer`` that role with the label the administrator gave it (``people``), so
  no process names someone else; ``event_guard`` (running as the owner, search_path
  pinned) refuses a non-member, an unknown type, a payload over ``MAX_PAYLOAD_BYTES`` or
  that is not a JSON object, a hash it does not recompute to, a ``prev`` that is not the
  head and a ``seq`` that is not the next, and moves the head.
* ``memories``, ``history`` and ``cited_evidence`` are written by the database alone:
  ``project_event`` derives them from each appended event, the same rules as
  ``projection.apply`` (``tests/test_pg_guard.py`` holds the two to the same rows), plus
  what only a shared database needs: an event may not touch a private memory that is not
  its author's, re-kind a memory another role recorded, or make a private memory out of
  an event that others can read. Members have no INSERT, UPDATE, DELETE or TRUNCATE on
  them, nor on ``chain_heads`` and ``events`` beyond that INSERT.
* The write lock is the head row's row lock, taken by ``write_lock()`` for members only:
  the advisory lock it replaces could be taken by any role that can log in.
* gc's purge of a payload is ``purge_payloads``: only the caller's own private events,
  and only once the memory they concern is gone.
* What only the administrator can do (a superuser's edit) ``verify`` finds, and
  ``rebuild_project`` (``jupymem team rebuild``) derives the tables again from the log.
* A private memory's id is salted with a secret of its author's (``private_salt``), so a
  teammate cannot test a guess of someone's private words against the ids they collide with.
* Sizes are bounded by the database too (``CHECK`` constraints, NOT VALID so that rows
  from before are not re-read), whatever a client skips.

Text only, like every released migration: its SQL must come out the same byte for byte.
"""

from __future__ import annotations

MAX_PAYLOAD_BYTES = 1024 * 1024  # a statement is 16 KB at most, its evidence 64 failures of a few KB
MAX_ROW_BYTES = 1024 * 1024  # a message, a summary or a staged failure
MAX_STATEMENT_BYTES = 16 * 1024  # capture.MAX_STATEMENT_BYTES, as the database holds it
MAX_LABEL_CHARS = 120  # role (63) + " (" + label + ")" fits the validator's 200 for a writer


def migration(schema: str, owner: str, users: str, member: str) -> str:
    return (f"""
    -- Who a role is, in words: the administrator's to say (``jupymem team user ROLE --label``).
    CREATE TABLE people (
        role TEXT PRIMARY KEY,
        label TEXT NOT NULL CHECK (char_length(label) BETWEEN 1 AND {MAX_LABEL_CHARS} AND label !~ '[[:cntrl:]]')
    );
    ALTER TABLE people ENABLE ROW LEVEL SECURITY;
    ALTER TABLE people FORCE ROW LEVEL SECURITY;
    CREATE POLICY own_label ON people FOR SELECT USING (role = current_user);
    GRANT SELECT ON people TO {users};

    -- Each role's secret for its private memories' ids: its own to read, made by the database (64
    -- random bits: a role name of 63 characters, ':' and these 16 fit the validator's owner field).
    CREATE TABLE private_salts (role TEXT PRIMARY KEY, salt TEXT NOT NULL);
    ALTER TABLE private_salts ENABLE ROW LEVEL SECURITY;
    ALTER TABLE private_salts FORCE ROW LEVEL SECURITY;
    CREATE POLICY own_salt ON private_salts FOR SELECT USING (role = current_user);
    CREATE POLICY owner_salts ON private_salts TO {owner} USING (true) WITH CHECK (true);
    GRANT SELECT ON private_salts TO {users};
    CREATE FUNCTION private_salt() RETURNS TEXT
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
    DECLARE
        s TEXT;
    BEGIN
        INSERT INTO private_salts (role, salt)
            VALUES (session_user, left(md5(gen_random_uuid()::text || gen_random_uuid()::text), 16))
            ON CONFLICT DO NOTHING;
        SELECT p.salt INTO s FROM private_salts p WHERE p.role = session_user;
        RETURN s;
    END $$;
    REVOKE ALL ON FUNCTION private_salt() FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION private_salt() TO {users};

    -- Members append; nothing else of the log is theirs to change.
    REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON memories, history, cited_evidence, chain_heads FROM {users};
    REVOKE UPDATE, DELETE, TRUNCATE ON events FROM {users};
    DROP POLICY own_rows ON memories;  -- restrictive for every role: it would bind the owner's derived rows
    CREATE POLICY owner_derives ON memories TO {owner} USING (true) WITH CHECK (true);
    CREATE POLICY owner_derives ON history TO {owner} USING (true) WITH CHECK (true);
    CREATE POLICY owner_derives ON cited_evidence TO {owner} USING (true) WITH CHECK (true);
    CREATE POLICY owner_moves_head ON chain_heads TO {owner} USING (true) WITH CHECK (true);
    CREATE POLICY owner_purges ON events FOR UPDATE TO {owner} USING (true) WITH CHECK (true);
    CREATE POLICY owner_counts ON meta TO {owner} USING (true) WITH CHECK (true);
    CREATE POLICY owner_derives ON memory_vectors TO {owner} USING (true) WITH CHECK (true);
    CREATE POLICY owner_derives ON memory_vectors_transformer TO {owner} USING (true) WITH CHECK (true);

    -- A stored vector is a cache of its reader's own making: each member's are theirs alone, so
    -- that no one can move a teammate's memory in anyone else's ranking by writing its vector.
    DROP TRIGGER memory_vectors_privacy ON memory_vectors;
    DROP TRIGGER memory_vectors_transformer_privacy ON memory_vectors_transformer;
    DELETE FROM memory_vectors;
    DELETE FROM memory_vectors_transformer;
    ALTER TABLE memory_vectors DROP CONSTRAINT memory_vectors_pkey;
    ALTER TABLE memory_vectors ADD PRIMARY KEY (project, author_role, rid);
    ALTER TABLE memory_vectors_transformer DROP CONSTRAINT memory_vectors_transformer_pkey;
    ALTER TABLE memory_vectors_transformer ADD PRIMARY KEY (project, author_role, rid);
    DROP POLICY in_project ON memory_vectors;
    DROP POLICY in_project ON memory_vectors_transformer;
    CREATE POLICY in_project ON memory_vectors USING ({{member}} AND author_role = current_user)
        WITH CHECK ({{member}} AND author_role = current_user);
    CREATE POLICY in_project ON memory_vectors_transformer USING ({{member}} AND author_role = current_user)
        WITH CHECK ({{member}} AND author_role = current_user);

    ALTER TABLE events ADD CONSTRAINT events_bounded CHECK (
        octet_length(payload) <= {MAX_PAYLOAD_BYTES} AND char_length(uid) <= 100 AND char_length(at) <= 64
        AND char_length(type) <= 16 AND char_length(prev) = 64 AND char_length(hash) = 64
        AND char_length(payload_hash) = 64 AND coalesce(char_length(writer), 0) <= 200
        AND coalesce(char_length(source), 0) <= 4096 AND scope IN ('local', 'private', 'shared')
    ) NOT VALID;
    ALTER TABLE conversation ADD CONSTRAINT conversation_bounded
        CHECK (octet_length(content) <= {MAX_ROW_BYTES} AND char_length(notebook) <= 4096) NOT VALID;
    ALTER TABLE conversation_summary ADD CONSTRAINT summary_bounded
        CHECK (octet_length(summary) <= {MAX_ROW_BYTES} AND char_length(notebook) <= 4096) NOT VALID;
    ALTER TABLE staged_evidence ADD CONSTRAINT staged_bounded
        CHECK (octet_length(data) <= {MAX_ROW_BYTES} AND char_length(handle) <= 100) NOT VALID;
    ALTER TABLE meta ADD CONSTRAINT meta_bounded CHECK (char_length(key) <= 200 AND char_length(value) <= 4096) NOT VALID;

    -- Python's json.dumps(obj, sort_keys=True, ensure_ascii=False), which the derived text columns hold.
    CREATE FUNCTION pyjson(j JSONB) RETURNS TEXT LANGUAGE sql IMMUTABLE SET search_path = {schema}, pg_temp AS $$
        SELECT CASE jsonb_typeof(j)
            WHEN 'object' THEN '{{' || coalesce((SELECT string_agg(to_json(k)::text || ': ' || pyjson(v), ', '
                ORDER BY k COLLATE "C") FROM jsonb_each(j) AS t (k, v)), '') || '}}'
            WHEN 'array' THEN '[' || coalesce((SELECT string_agg(pyjson(v), ', ' ORDER BY n)
                FROM jsonb_array_elements(j) WITH ORDINALITY AS t (v, n)), '') || ']'
            ELSE j::text END
    $$;

    DROP TRIGGER events_chain ON events;
    DROP FUNCTION chain_append();

    CREATE FUNCTION event_author() RETURNS trigger LANGUAGE plpgsql SET search_path = {schema}, pg_temp AS $$
    BEGIN
        NEW.author_role := current_user;
        NEW.writer := current_user || coalesce(' (' || (SELECT p.label FROM people p WHERE p.role = current_user) || ')', '');
        RETURN NEW;
    END $$;
    CREATE TRIGGER events_10_author BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION event_author();

    CREATE FUNCTION event_guard() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
    DECLARE
        head_seq BIGINT;
        head_hash TEXT;
        header TEXT;
        body JSONB;
    BEGIN
        IF NEW.project IS DISTINCT FROM current_setting('jupymem.project', true)
           OR NOT EXISTS (SELECT 1 FROM members m WHERE m.project = NEW.project AND m.role = NEW.author_role) THEN
            RAISE EXCEPTION 'jupymem: % is not a member of project %', NEW.author_role, NEW.project
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF NEW.type NOT IN ('record', 'supersede', 'retire', 'confirm', 'gc') THEN
            RAISE EXCEPTION 'jupymem: % is no kind of event', NEW.type USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.payload IS NULL OR octet_length(NEW.payload) > {MAX_PAYLOAD_BYTES} THEN
            RAISE EXCEPTION 'jupymem: an event carries a payload of at most {MAX_PAYLOAD_BYTES} bytes'
                USING ERRCODE = 'check_violation';
        END IF;
        body := NEW.payload::jsonb;
        IF jsonb_typeof(body) <> 'object' THEN
            RAISE EXCEPTION 'jupymem: an event''s payload is a JSON object' USING ERRCODE = 'check_violation';
        END IF;
        IF encode(sha256(convert_to(NEW.payload, 'UTF8')), 'hex') IS DISTINCT FROM NEW.payload_hash THEN
            RAISE EXCEPTION 'jupymem: event % does not hash to its payload_hash', NEW.uid USING ERRCODE = 'check_violation';
        END IF;
        header := '{{"at":' || to_json(NEW.at)::text || ',"payload_hash":' || to_json(NEW.payload_hash)::text
            || ',"prev":' || to_json(NEW.prev)::text || ',"type":' || to_json(NEW.type)::text
            || ',"uid":' || to_json(NEW.uid)::text || '}}';
        IF encode(sha256(convert_to(header, 'UTF8')), 'hex') IS DISTINCT FROM NEW.hash THEN
            RAISE EXCEPTION 'jupymem: event % does not hash to its hash', NEW.uid USING ERRCODE = 'check_violation';
        END IF;
        -- A time in the log's format, not ahead of the database's clock by more than an hour
        -- (writers' clocks differ; a time far ahead would sort after every teammate's next event).
        IF NEW.at !~ '^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}T[0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}[.][0-9]{{6}}Z$'
           OR NEW.at > to_char(clock_timestamp() AT TIME ZONE 'UTC' + interval '1 hour', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') THEN
            RAISE EXCEPTION 'jupymem: event % has a time (%) that is not now or before', NEW.uid, left(NEW.at, 64)
                USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.type IN ('record', 'supersede')
           AND (NEW.scope = 'private') IS DISTINCT FROM coalesce(body->'memory'->'private' = 'true'::jsonb, false) THEN
            RAISE EXCEPTION 'jupymem: a private memory is recorded by a private event, and only it'
                USING ERRCODE = 'check_violation';
        END IF;
        -- The head row's lock queues every other writer of this project behind us.
        INSERT INTO chain_heads (project, seq, hash) VALUES (NEW.project, 0, repeat('0', 64)) ON CONFLICT DO NOTHING;
        SELECT h.seq, h.hash INTO head_seq, head_hash FROM chain_heads h WHERE h.project = NEW.project FOR UPDATE;
        IF NEW.prev IS DISTINCT FROM head_hash THEN
            RAISE EXCEPTION 'jupymem: event % does not follow the head of project %''s chain', NEW.uid, NEW.project
                USING ERRCODE = 'serialization_failure';
        END IF;
        IF NEW.seq IS NULL THEN
            NEW.seq := head_seq + 1;
        ELSIF NEW.seq <> head_seq + 1 THEN
            RAISE EXCEPTION 'jupymem: event seq % is not the next after the head (%)', NEW.seq, head_seq
                USING ERRCODE = 'serialization_failure';
        END IF;
        UPDATE chain_heads SET seq = NEW.seq, hash = NEW.hash, at = NEW.at WHERE project = NEW.project;
        RETURN NEW;
    END $$;
    CREATE TRIGGER events_20_guard BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION event_guard();

    -- history's detail as projection._history_row writes it: the writer as "who", no nulls.
    CREATE FUNCTION derive_history(e events, h_memory TEXT, h_action TEXT, h_detail JSONB) RETURNS void
        LANGUAGE sql SET search_path = {schema}, pg_temp AS $$
        INSERT INTO history (project, memory_id, seq, at, action, detail)
            VALUES (e.project, h_memory, e.seq, e.at, h_action,
                    pyjson(jsonb_strip_nulls(h_detail || jsonb_build_object('who', e.writer))));
    $$;

    -- A memory an event acts on must be one its author may see (a private one is its author's alone).
    CREATE FUNCTION derive_target(e events, t_memory TEXT) RETURNS void
        LANGUAGE plpgsql SET search_path = {schema}, pg_temp AS $$
    BEGIN
        -- ... and a private event (which teammates cannot read) acts on its author's private memories only.
        IF EXISTS (SELECT 1 FROM memories m WHERE m.project = e.project AND m.id = t_memory
                   AND ((m.private = 1 AND m.author_role <> e.author_role) OR (m.private = 0 AND e.scope = 'private'))) THEN
            RAISE EXCEPTION 'jupymem: event % acts on a memory that is not its author''s to change', e.uid
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    END $$;

    -- projection._upsert: the first record of a memory makes its rows, a later one merges.
    CREATE FUNCTION derive_upsert(e events, m JSONB, sup TEXT) RETURNS void
        LANGUAGE plpgsql SET search_path = {schema}, pg_temp AS $$
    DECLARE
        v_prov JSONB := coalesce(nullif(m->'provenance', 'null'::jsonb), '{{}}'::jsonb);
        v_evidence JSONB := coalesce(nullif(m->'evidence', 'null'::jsonb), '[]'::jsonb);
        v_private INTEGER := CASE WHEN m->'private' = 'true'::jsonb THEN 1 ELSE 0 END;
        v_cur memories%ROWTYPE;
        v_merged JSONB;
        v_standing TEXT;
    BEGIN
        PERFORM derive_target(e, m->>'id');
        IF octet_length(m->>'statement') > {MAX_STATEMENT_BYTES} OR octet_length(m->>'original') > {MAX_STATEMENT_BYTES}
           OR char_length(m->>'topic') > 80 OR char_length(m->>'id') > 64 OR char_length(m->>'kind') > 32 THEN
            RAISE EXCEPTION 'jupymem: event % carries a memory over the validator''s sizes', e.uid
                USING ERRCODE = 'check_violation';
        END IF;
        SELECT * INTO v_cur FROM memories x WHERE x.project = e.project AND x.id = m->>'id';
        IF NOT FOUND THEN
            INSERT INTO memories (project, id, kind, topic, statement, original, standing, status, recorder, notebook,
                                  cell_id, execution_count, session, quote, evidence, created_at, valid_from,
                                  supersedes, seq, author, private, source, author_role)
            VALUES (e.project, m->>'id', m->>'kind', m->>'topic', m->>'statement', m->>'original', m->>'standing',
                    'active', coalesce(v_prov->>'recorder', 'person'), v_prov->>'notebook', v_prov->>'cell_id',
                    (v_prov->>'execution_count')::integer, v_prov->>'session', v_prov->>'quote',
                    CASE WHEN jsonb_array_length(v_evidence) > 0 THEN pyjson(v_evidence) ELSE '[]' END, e.at, e.at,
                    sup, e.seq, coalesce(e.writer, v_prov->>'author'), v_private, e.source, e.author_role);
            PERFORM derive_history(e, m->>'id', 'recorded', jsonb_build_object(
                'recorder', coalesce(v_prov->>'recorder', 'person'), 'supersedes', sup));
        ELSE
            IF v_private = 0 THEN
                UPDATE memories x SET private = 0 WHERE x.project = e.project AND x.id = v_cur.id AND x.private = 1;
            END IF;
            v_merged := v_cur.evidence::jsonb || coalesce((
                SELECT jsonb_agg(t.x ORDER BY t.n) FROM jsonb_array_elements(v_evidence) WITH ORDINALITY AS t (x, n)
                WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(v_cur.evidence::jsonb) AS o (y)
                                  WHERE o.y->>'handle' = t.x->>'handle')), '[]'::jsonb);
            v_standing := CASE WHEN 'supported' IN (v_cur.standing, m->>'standing') THEN 'supported' ELSE 'unconfirmed' END;
            IF v_cur.status <> 'active' THEN
                -- Saying a closed statement again brings it back, with the kind said; not someone else's.
                IF v_cur.author_role <> e.author_role AND v_cur.kind IS DISTINCT FROM m->>'kind' THEN
                    RAISE EXCEPTION 'jupymem: event % would make a memory of % another kind', e.uid, v_cur.author_role
                        USING ERRCODE = 'insufficient_privilege';
                END IF;
                UPDATE memories x SET status = 'active', valid_from = e.at, valid_to = NULL, superseded_by = NULL,
                    retire_reason = NULL, standing = v_standing, kind = m->>'kind',
                    topic = coalesce(m->>'topic', x.topic), evidence = pyjson(v_merged),
                    supersedes = coalesce(sup, x.supersedes), seq = e.seq
                    WHERE x.project = e.project AND x.id = v_cur.id;
                PERFORM derive_history(e, v_cur.id, 'reopened', jsonb_build_object('supersedes', sup));
            ELSE
                UPDATE memories x SET standing = v_standing, evidence = pyjson(v_merged), seq = e.seq
                    WHERE x.project = e.project AND x.id = v_cur.id;
                IF v_standing <> v_cur.standing THEN
                    UPDATE memories x SET confirmed_at = e.at WHERE x.project = e.project AND x.id = v_cur.id;
                    PERFORM derive_history(e, v_cur.id, 'confirmed', jsonb_build_object('by', 'restated by a person'));
                END IF;
                IF sup IS NOT NULL THEN
                    UPDATE memories x SET supersedes = sup WHERE x.project = e.project AND x.id = v_cur.id;
                    PERFORM derive_history(e, v_cur.id, 'supersedes', jsonb_build_object('old', sup));
                END IF;
            END IF;
        END IF;
        INSERT INTO cited_evidence (project, handle, memory_id, data)
            SELECT e.project, t.x->>'handle', m->>'id', pyjson(t.x) FROM jsonb_array_elements(v_evidence) AS t (x)
            ON CONFLICT DO NOTHING;
    END $$;

    -- projection.apply, in the database: the only writer of memories, history and cited_evidence.
    CREATE FUNCTION project_event(e events) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
    DECLARE
        p JSONB;
        gone TEXT[];
    BEGIN
        IF e.payload IS NULL THEN
            RETURN;  -- purged by gc: nothing left to project
        END IF;
        p := e.payload::jsonb;
        IF e.type = 'record' THEN
            PERFORM derive_upsert(e, p->'memory', NULL);
        ELSIF e.type = 'supersede' THEN
            PERFORM derive_target(e, p->>'old');
            PERFORM derive_upsert(e, p->'memory', p->>'old');
            UPDATE memories SET status = 'superseded', valid_to = e.at, superseded_by = p->'memory'->>'id', seq = e.seq
                WHERE project = e.project AND id = p->>'old' AND status = 'active';
            PERFORM derive_history(e, p->>'old', 'superseded', jsonb_build_object('by', p->'memory'->>'id'));
        ELSIF e.type = 'retire' THEN
            PERFORM derive_target(e, p->>'id');
            UPDATE memories SET status = 'retired', valid_to = e.at, retire_reason = p->>'reason', seq = e.seq
                WHERE project = e.project AND id = p->>'id' AND status = 'active';
            PERFORM derive_history(e, p->>'id', 'retired', jsonb_build_object('reason', p->>'reason'));
        ELSIF e.type = 'confirm' THEN
            PERFORM derive_target(e, p->>'id');
            UPDATE memories SET standing = 'supported', confirmed_at = e.at, seq = e.seq
                WHERE project = e.project AND id = p->>'id';
            PERFORM derive_history(e, p->>'id', 'confirmed', jsonb_build_object('by', p->>'by'));
        ELSIF e.type = 'gc' THEN
            -- A member's retention reaches their own private memories and nothing else.
            WITH forgotten AS (
                DELETE FROM memories WHERE project = e.project AND private = 1 AND author_role = e.author_role
                    AND id IN (SELECT jsonb_array_elements_text(coalesce(p->'forgotten', '[]'::jsonb)))
                RETURNING id
            ) SELECT array_agg(id) INTO gone FROM forgotten;
            DELETE FROM history WHERE project = e.project AND memory_id = ANY (coalesce(gone, '{{}}'));
            DELETE FROM cited_evidence WHERE project = e.project AND memory_id = ANY (coalesce(gone, '{{}}'));
        END IF;
    END $$;
    REVOKE ALL ON FUNCTION project_event(events) FROM PUBLIC;

    CREATE FUNCTION event_projected() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
    BEGIN
        PERFORM project_event(NEW);
        RETURN NULL;
    END $$;
    CREATE TRIGGER events_30_project AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION event_projected();

    -- The project's write lock: the head row's, for members only.
    CREATE FUNCTION write_lock() RETURNS TABLE (head_seq BIGINT, head_hash TEXT, head_at TEXT)
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
    DECLARE
        p TEXT := current_setting('jupymem.project', true);
    BEGIN
        IF NOT EXISTS (SELECT 1 FROM members m WHERE m.project = p AND m.role = session_user) THEN
            RAISE EXCEPTION 'jupymem: % is not a member of project %', session_user, p
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        INSERT INTO chain_heads (project, seq, hash) VALUES (p, 0, repeat('0', 64)) ON CONFLICT DO NOTHING;
        RETURN QUERY SELECT h.seq, h.hash, h.at FROM chain_heads h WHERE h.project = p FOR UPDATE;
    END $$;
    REVOKE ALL ON FUNCTION write_lock() FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION write_lock() TO {users};

    -- gc's purge: the caller's own private events, once the memory they are about is gone.
    CREATE FUNCTION purge_payloads(uids TEXT[]) RETURNS BIGINT
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
    DECLARE
        p TEXT := current_setting('jupymem.project', true);
        n BIGINT;
    BEGIN
        WITH purged AS (
            UPDATE events e SET payload = NULL
            WHERE e.project = p AND e.uid = ANY (uids) AND e.scope = 'private' AND e.author_role = session_user
              AND e.type IN ('record', 'retire', 'confirm') AND e.payload IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.project = p
                              AND m.id = coalesce(e.payload::jsonb->'memory'->>'id', e.payload::jsonb->>'id'))
            RETURNING 1
        ) SELECT count(*) INTO n FROM purged;
        RETURN n;
    END $$;
    REVOKE ALL ON FUNCTION purge_payloads(TEXT[]) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION purge_payloads(TEXT[]) TO {users};

    -- The administrator's repair: the derived tables made again from the log, and the head from its last event.
    CREATE FUNCTION rebuild_project(p TEXT) RETURNS BIGINT
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
    DECLARE
        r events%ROWTYPE;
        n BIGINT := 0;
    BEGIN
        PERFORM 1 FROM chain_heads h WHERE h.project = p FOR UPDATE;
        DELETE FROM cited_evidence WHERE project = p;
        DELETE FROM history WHERE project = p;
        DELETE FROM memories WHERE project = p;
        FOR r IN SELECT * FROM events WHERE project = p ORDER BY seq LOOP
            PERFORM project_event(r);
            n := n + 1;
        END LOOP;
        UPDATE chain_heads h SET seq = l.seq, hash = l.hash, at = l.at
            FROM (SELECT seq, hash, at FROM events WHERE project = p ORDER BY seq DESC LIMIT 1) l WHERE h.project = p;
        INSERT INTO meta (project, key, value) VALUES (p, 'generation', '1')
            ON CONFLICT (project, key) DO UPDATE
            SET value = CASE WHEN meta.value ~ '^[0-9]{{1,18}}$' THEN (meta.value::bigint + 1)::text ELSE '1' END;
        RETURN n;
    END $$;
    REVOKE ALL ON FUNCTION rebuild_project(TEXT) FROM PUBLIC;
        """).replace("{member}", member)
