/**
 * Presentational pieces of the sidebar: header, list, search results, the
 * detail of one memory, recent failures and the block preview. They hold
 * no state of their own beyond open/closed forms; Sidebar owns the data.
 */
import * as React from 'react';

import { RetireForm, StatementForm } from './forms';
import {
  authorName,
  blockCaption,
  blockMeter,
  countChips,
  diffLines,
  disputeText,
  excerptSource,
  fixedIn,
  groupByKind,
  historyLines,
  lessonDraft,
  meaningView,
  nextRow,
  notebookLink,
  rankHits,
  replacementMark,
  repoRelative,
  sharingView,
  shortId,
  shortTime
} from './logic';
import type { IConfidence } from './logic';
import type { IBlock, IEvidence, IMemory, IMemoryDetail, IRecordRequest, ISearchResult, IStatus } from './tokens';

/** Rows shown per kind before "Show more": keeps a large project's first paint quick. */
export const ROWS_PER_KIND = 200;

/**
 * Rows per kind in the very first render; the rest follow one frame later.
 * A screenful is up on its own, so a large project paints at once.
 */
export const FIRST_ROWS_PER_KIND = 25;

/** Rows of one kind fetched per "Show more" once the list holds none of it left to show. */
export const MORE_PER_KIND = 500;

function afterPaint(fn: () => void): void {
  requestAnimationFrame(() => setTimeout(fn, 0));
}

export function Header(props: {
  status: IStatus;
  block: IBlock | null;
  kind: string;
  onKind: (kind: string) => void;
}): JSX.Element {
  const { status, block } = props;
  const chips = countChips(status.counts ?? {});
  const meter = block ? blockMeter(block) : null;
  const roving = useRovingGroup(chips.length, chips.findIndex(c => c.kind === props.kind));
  return (
    <div className="jp-jupymem-header">
      <div className="jp-jupymem-repo" title={status.root ?? ''}>
        {status.name}
      </div>
      {/* One Tab stop for all the chips (a toolbar): the arrows move between them, Enter picks. */}
      <div
        className="jp-jupymem-chips"
        role="toolbar"
        aria-label="Show only one kind (active memories by kind)"
        ref={roving.container}
        onKeyDown={roving.onKeyDown}
      >
        {chips.length === 0 && <span className="jp-jupymem-muted">no active memories</span>}
        {chips.map((c, i) => (
          <button
            key={c.kind}
            data-roving=""
            tabIndex={i === roving.current ? 0 : -1}
            onFocus={() => roving.setAt(i)}
            className={`jp-jupymem-chip jp-jupymem-kind-${c.kind}${props.kind === c.kind ? ' jp-mod-active' : ''}`}
            aria-pressed={props.kind === c.kind}
            title={props.kind === c.kind ? 'Show every kind' : `Show only ${c.kind}`}
            onClick={() => props.onKind(props.kind === c.kind ? '' : c.kind)}
          >
            {c.kind} <b>{c.count}</b>
          </button>
        ))}
      </div>
      {meter && (
        <div className="jp-jupymem-meter-wrap" title={meter.label}>
          <div
            className={`jp-jupymem-meter jp-jupymem-meter-${meter.level}`}
            role="meter"
            aria-label="Block bytes used"
            aria-valuemin={0}
            aria-valuemax={block!.cap}
            aria-valuenow={block!.bytes}
          >
            <div className="jp-jupymem-meter-fill" style={{ width: `${meter.percent}%` }} />
          </div>
          <span className="jp-jupymem-meter-label">{meter.label}</span>
        </div>
      )}
    </div>
  );
}

/**
 * Arrow keys across a group of buttons that takes one Tab stop (WAI-ARIA roving
 * tabindex): the selected item, or the last one focused, is the one Tab reaches.
 * The items carry `data-roving`.
 */
export function useRovingGroup(count: number, selected: number) {
  const container = React.useRef<HTMLDivElement | null>(null);
  const [at, setAt] = React.useState<number | null>(null);
  const current = at !== null && at < count ? at : Math.max(0, selected);
  const onKeyDown = (e: React.KeyboardEvent) => {
    const items = Array.from(container.current?.querySelectorAll<HTMLElement>('[data-roving]') ?? []);
    const from = items.indexOf(document.activeElement as HTMLElement);
    const next = from < 0 ? null : nextRow(from, items.length, e.key);
    if (next === null) {
      return;
    }
    e.preventDefault();
    setAt(next);
    items[next].focus();
  };
  return { container, current, setAt, onKeyDown };
}

function Badges(props: { memory: IMemory }): JSX.Element {
  const m = props.memory;
  const disputed = replacementMark(m);
  return (
    <>
      {m.standing === 'unconfirmed' && <span className="jp-jupymem-unconfirmed">(unconfirmed)</span>}
      {m.private && (
        <span className="jp-jupymem-private" title="Kept on this machine only; never written to .jupymem/">
          private
        </span>
      )}
      {disputed && <span className="jp-jupymem-disputed-mark">{disputed}</span>}
      {m.status !== 'active' && <span className="jp-jupymem-inactive">{m.status}</span>}
    </>
  );
}

/**
 * Sharing through git: a switch, what it means here, and any shared line that is not
 * applied (each names its file and line).
 */
export function SharingBar(props: { status: IStatus; busy: boolean; onShare: (on: boolean) => void }): JSX.Element {
  const view = sharingView(props.status.sharing);
  return (
    <div className="jp-jupymem-sharing">
      <label className="jp-jupymem-switch" title="Keep this repository's memory in a committed .jupymem/ folder">
        <input
          type="checkbox"
          role="switch"
          aria-checked={view.on}
          checked={view.on}
          disabled={props.busy}
          onChange={e => props.onShare(e.target.checked)}
        />{' '}
        Share through git
      </label>
      <div className="jp-jupymem-muted jp-jupymem-sharing-label">{view.label}</div>
      {view.problems.length > 0 && (
        <ul className="jp-jupymem-error jp-jupymem-share-problems" role="alert" aria-label="Shared lines not applied">
          {view.problems.map(p => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Which search legs answer, and a bar while the transformer embeds memories. */
export function MeaningLine(props: { status: IStatus }): JSX.Element | null {
  const view = meaningView(props.status.retrieval);
  if (!view.label) {
    return null;
  }
  return (
    <div className="jp-jupymem-muted jp-jupymem-meaning" role="status">
      {view.busy &&
        (view.total !== undefined ? (
          <progress max={view.total} value={view.done} aria-label="Memories embedded by the transformer" />
        ) : (
          <progress aria-label="Loading the meaning models" />
        ))}{' '}
      {view.label}
    </div>
  );
}

export interface IRowProps {
  memory: IMemory;
  onOpen: (id: string) => void;
  /** 0 for the one row the Tab key reaches (roving tabindex), else -1. */
  tabIndex: number;
  onFocusRow: (id: string) => void;
  /** How sure search is of this hit, as the list ranks it (`rankHits`). */
  sure?: IConfidence | null;
  showKind?: boolean;
}

export function MemoryRow(props: IRowProps): JSX.Element {
  const m = props.memory;
  const sure = props.sure;
  return (
    <li>
      <button
        className={`jp-jupymem-row${m.status !== 'active' ? ' jp-mod-inactive' : ''}`}
        data-memory-id={m.id}
        tabIndex={props.tabIndex}
        onFocus={() => props.onFocusRow(m.id)}
        onClick={() => props.onOpen(m.id)}
      >
        <span className="jp-jupymem-row-meta">
          {props.showKind && <span className={`jp-jupymem-kind jp-jupymem-kind-${m.kind}`}>{m.kind}</span>}
          <Badges memory={m} />
          {sure && (
            <span className="jp-jupymem-confidence" title={sure.title}>
              {sure.word}
              <span className="jp-jupymem-confidence-bar" aria-hidden="true">
                <span className="jp-jupymem-confidence-fill" style={{ width: `${sure.percent}%` }} />
              </span>
            </span>
          )}
        </span>
        <span className="jp-jupymem-statement">{m.statement}</span>
        {authorName(m.provenance.author) && (
          <span className="jp-jupymem-author jp-jupymem-muted">{authorName(m.provenance.author)}</span>
        )}
      </button>
    </li>
  );
}

/**
 * Arrow keys for a list of rows (WAI-ARIA roving tabindex): Tab reaches one
 * row, Up/Down/Home/End move between rows, Enter opens (the row is a button).
 * `focusId` puts the focus back on a row, e.g. after "Back" from its detail.
 */
function useRovingRows(ids: readonly string[], focusId?: string | null, onFocused?: () => void) {
  const container = React.useRef<HTMLElement | null>(null);
  const [active, setActive] = React.useState<string | null>(null);
  const current = active !== null && ids.includes(active) ? active : ids[0] ?? null;
  const rowButton = (id: string) =>
    container.current?.querySelector<HTMLButtonElement>(`button[data-memory-id="${CSS.escape(id)}"]`) ?? null;
  // Once only: the row takes the focus back, and the panel forgets it (`onFocused`), so a
  // list drawn later (search results, the list again after clearing the box) never takes
  // the focus from the search box mid-word.
  React.useEffect(() => {
    if (focusId && ids.includes(focusId)) {
      setActive(focusId);
      rowButton(focusId)?.focus();
      onFocused?.();
    }
  }, [focusId]);
  const onKeyDown = (e: React.KeyboardEvent) => {
    const rows = Array.from(container.current?.querySelectorAll<HTMLButtonElement>('button[data-memory-id]') ?? []);
    const at = rows.indexOf(document.activeElement as HTMLButtonElement);
    if (at < 0) {
      return; // a key pressed on something else in the list ("Show more")
    }
    const next = nextRow(at, rows.length, e.key);
    if (next === null) {
      return;
    }
    e.preventDefault();
    const row = rows[next];
    setActive(row.dataset.memoryId ?? null);
    row.focus();
    row.scrollIntoView({ block: 'nearest' });
  };
  return { container, current, setActive, onKeyDown };
}

export function GroupedList(props: {
  memories: IMemory[];
  /** Each kind's count, when the list holds only the first rows of each (`per_kind`). */
  totals?: Record<string, number> | null;
  onOpen: (id: string) => void;
  /** Fetch the next rows of a kind the list holds only the first of. */
  onMore?: (kind: string) => void;
  busy?: boolean;
  focusId?: string | null;
  onFocused?: () => void;
  empty: React.ReactNode;
}): JSX.Element {
  const [expanded, setExpanded] = React.useState<Record<string, boolean>>({});
  const [complete, setComplete] = React.useState(false);
  const groups = React.useMemo(() => groupByKind(props.memories), [props.memories]);
  const cap = complete ? ROWS_PER_KIND : FIRST_ROWS_PER_KIND;
  const shownGroups = groups.map(g => ({ ...g, rows: expanded[g.kind] ? g.memories : g.memories.slice(0, cap) }));
  const ids = shownGroups.flatMap(g => g.rows.map(m => m.id));
  const roving = useRovingRows(ids, props.focusId, props.onFocused);
  React.useEffect(() => {
    if (!complete) {
      afterPaint(() => setComplete(true));
    } else if (performance.getEntriesByName('jupymem:list-received').length) {
      afterPaint(() => {
        performance.mark('jupymem:list-complete');
        performance.measure('jupymem:all-rows', 'jupymem:list-received', 'jupymem:list-complete');
      });
    }
  }, [complete]);
  if (props.memories.length === 0) {
    return <div className="jp-jupymem-empty">{props.empty}</div>;
  }
  return (
    <div
      className="jp-jupymem-groups"
      ref={el => {
        roving.container.current = el;
      }}
      onKeyDown={roving.onKeyDown}
    >
      {shownGroups.map(g => {
        const rows = g.rows;
        const total = Math.max(props.totals?.[g.kind] ?? g.memories.length, g.memories.length);
        const loadedMore = g.memories.length - rows.length; // here, not shown yet
        const more = total - rows.length;
        return (
          <section key={g.kind} className="jp-jupymem-group" aria-label={g.kind}>
            <h3 className={`jp-jupymem-group-title jp-jupymem-kind-${g.kind}`}>
              {g.kind} <span className="jp-jupymem-muted">{total}</span>
            </h3>
            <ul className="jp-jupymem-rows">
              {rows.map(m => (
                <MemoryRow
                  key={m.id}
                  memory={m}
                  onOpen={props.onOpen}
                  tabIndex={m.id === roving.current ? 0 : -1}
                  onFocusRow={roving.setActive}
                />
              ))}
            </ul>
            {more > 0 && complete && (
              <button
                className="jp-mod-styled jp-jupymem-more"
                disabled={props.busy}
                onClick={() => {
                  setExpanded({ ...expanded, [g.kind]: true });
                  if (loadedMore <= 0) {
                    props.onMore?.(g.kind);
                  }
                }}
              >
                {loadedMore > 0 || more <= MORE_PER_KIND
                  ? `Show ${loadedMore > 0 ? loadedMore : more} more`
                  : `Show ${MORE_PER_KIND} more (${more} not shown)`}
              </button>
            )}
          </section>
        );
      })}
    </div>
  );
}

export function SearchResults(props: {
  result: ISearchResult;
  onOpen: (id: string) => void;
  focusId?: string | null;
  onFocused?: () => void;
}): JSX.Element {
  const r = props.result;
  const abstained = r.status === 'abstained';
  // A verdict never hides memory from a person: an abstention still lists the nearest ones,
  // each worded as the verdict says ("weak": none answers), under a heading that says so.
  const ranked = React.useMemo(() => rankHits(abstained ? r.closest ?? [] : r.hits, !abstained), [r]);
  const roving = useRovingRows(
    ranked.map(h => h.hit.memory.id),
    props.focusId,
    props.onFocused
  );
  if (abstained && ranked.length === 0) {
    return (
      <div className="jp-jupymem-abstained" role="status">
        <b>Abstained:</b> nothing in memory really matches “{r.query}”.
        {r.reason && <div className="jp-jupymem-muted">{r.reason}</div>}
      </div>
    );
  }
  const list = (
    <ul
      className="jp-jupymem-rows jp-jupymem-results"
      aria-label={abstained ? 'Closest memories' : 'Search results'}
      ref={el => {
        roving.container.current = el;
      }}
      onKeyDown={roving.onKeyDown}
    >
      {ranked.map(({ hit: h, sure }) => (
        <MemoryRow
          key={h.memory.id}
          memory={h.memory}
          sure={sure}
          showKind
          onOpen={props.onOpen}
          tabIndex={h.memory.id === roving.current ? 0 : -1}
          onFocusRow={roving.setActive}
        />
      ))}
    </ul>
  );
  if (!abstained) {
    return list;
  }
  return (
    <div>
      <div className="jp-jupymem-abstained" role="status">
        <b>No memory answers this confidently.</b> Closest memories:
      </div>
      {list}
    </div>
  );
}

function EvidenceCard(props: { evidence: IEvidence; status: IStatus; children?: React.ReactNode }): JSX.Element {
  const e = props.evidence;
  const notebook = repoRelative(props.status, e.notebook);
  // The error lines say what failed (they start with the exception's name), so the head only says where and when.
  return (
    <div className="jp-jupymem-evidence" data-handle={e.handle} tabIndex={-1}>
      <div className="jp-jupymem-evidence-head">
        <code>{e.handle}</code>
        <span className="jp-jupymem-muted">
          {notebook ? ` ${notebook}` : ''}
          {e.execution_count !== null ? ` [${e.execution_count}]` : ''} {shortTime(e.created_at)}
        </span>
      </div>
      <ul className="jp-jupymem-diagnosis">
        {(e.diagnosis.length ? e.diagnosis : [`${e.ename}: ${e.evalue}`]).map((line, i) => (
          <li key={i}>
            <code>{line}</code>
          </li>
        ))}
      </ul>
      {props.children}
    </div>
  );
}

/**
 * What fixed a failure: the failed cell and the fixing cell side by side, the
 * edit between them as a tinted diff, and (in the Failures tab) the suggested lesson.
 */
export function FixView(props: { evidence: IEvidence; showSuggestion?: boolean }): JSX.Element | null {
  const e = props.evidence;
  const fix = e.fix;
  if (!fix) {
    return null;
  }
  const lines = diffLines(fix.diff);
  return (
    <div className="jp-jupymem-fix">
      <div className="jp-jupymem-pair">
        <figure className="jp-jupymem-pair-side jp-jupymem-pair-failed">
          <figcaption>Failed{e.execution_count !== null ? ` [${e.execution_count}]` : ''}</figcaption>
          <pre className="jp-jupymem-excerpt">{excerptSource(e.excerpt, e.diagnosis)}</pre>
        </figure>
        <figure className="jp-jupymem-pair-side jp-jupymem-pair-fixed">
          <figcaption>
            {fixedIn(fix)}
            {fix.paired_by !== 'cell id' && (
              <span className="jp-jupymem-muted" title="No cell id was sent; paired by how closely the cell edits the failed one">
                {' '}
                ({fix.paired_by})
              </span>
            )}
          </figcaption>
          <pre className="jp-jupymem-excerpt">{fix.source}</pre>
        </figure>
      </div>
      {lines.length > 0 ? (
        <pre className="jp-jupymem-diff" aria-label="The edit that fixed it">
          {lines.map((line, i) => (
            <div key={i} className={`jp-jupymem-diff-${line.sign}`}>
              {line.text || ' '}
            </div>
          ))}
        </pre>
      ) : (
        <p className="jp-jupymem-muted">
          It ran unchanged{fix.after ? ` after ${fix.after} ran` : ''}: the fix was outside the cell.
        </p>
      )}
      {props.showSuggestion && e.suggestion && (
        <p className="jp-jupymem-suggestion">
          <span className="jp-jupymem-muted">Suggested lesson{e.suggested_by && e.suggested_by !== 'pair' ? ` (${e.suggested_by})` : ''}: </span>
          {e.suggestion}
        </p>
      )}
    </div>
  );
}

export interface IDetailProps {
  detail: IMemoryDetail;
  status: IStatus;
  busy: boolean;
  onBack: () => void;
  onOpenId: (id: string) => void;
  onOpenNotebook: (path: string, cellId: string | null) => void;
  onConfirm: (id: string) => void;
  onSupersede: (id: string, body: IRecordRequest) => void;
  onRetire: (id: string, reason: string | null) => void;
}

export function Detail(props: IDetailProps): JSX.Element {
  const { memory: m, history } = props.detail;
  const [form, setForm] = React.useState<'none' | 'supersede' | 'retire'>('none');
  const root = React.useRef<HTMLDivElement | null>(null);
  const back = React.useRef<HTMLButtonElement | null>(null);
  const openers = { supersede: React.useRef<HTMLButtonElement | null>(null), retire: React.useRef<HTMLButtonElement | null>(null) };
  // A form belongs to one state of one memory: once it is retired or superseded (here or elsewhere), it closes.
  // The control that had the focus may be gone with it (the form, "Retire…"): the focus goes to Back, not the page.
  React.useEffect(() => {
    setForm('none');
    if (root.current && !root.current.contains(document.activeElement)) {
      back.current?.focus();
    }
  }, [m.id, m.status, m.standing]);
  // Cancelling a form (Escape, Cancel) gives the focus back to the button that opened it.
  const closeForm = () => {
    const opener = form === 'none' ? null : openers[form].current;
    setForm('none');
    opener?.focus();
  };
  const p = m.provenance;
  const link = notebookLink(props.status, p.notebook);
  const dispute = disputeText(m);
  return (
    <div
      className="jp-jupymem-detail"
      ref={root}
      onKeyDown={e => {
        if (e.key === 'Escape' && form === 'none') {
          props.onBack();
        }
      }}
    >
      <button className="jp-mod-styled jp-jupymem-back" ref={back} onClick={props.onBack} autoFocus>
        ← Back
      </button>
      <div className="jp-jupymem-row-meta">
        <span className={`jp-jupymem-kind jp-jupymem-kind-${m.kind}`}>{m.kind}</span>
        <Badges memory={m} />
        {m.topic && <span className="jp-jupymem-topic-badge">{m.topic}</span>}
        <code className="jp-jupymem-muted" title={m.id}>
          {shortId(m.id)}
        </code>
      </div>
      <p className="jp-jupymem-full-statement">{m.statement}</p>
      {m.original && m.original !== m.statement && (
        <p className="jp-jupymem-muted">Original words: “{m.original}”</p>
      )}
      {dispute && (
        <div className="jp-jupymem-disputed" role="note">
          <div>{dispute.text}</div>
          {dispute.others.map(id => (
            <button key={id} className="jp-mod-styled" onClick={() => props.onOpenId(id)}>
              Open {shortId(id)}
            </button>
          ))}
        </div>
      )}
      <div className="jp-jupymem-actions">
        {m.status === 'active' && m.standing === 'unconfirmed' && (
          <button className="jp-mod-styled jp-mod-accept" disabled={props.busy} onClick={() => props.onConfirm(m.id)}>
            Confirm
          </button>
        )}
        {m.status === 'active' && (
          <>
            <button
              className="jp-mod-styled"
              ref={openers.supersede}
              disabled={props.busy}
              aria-expanded={form === 'supersede'}
              onClick={() => setForm('supersede')}
            >
              Supersede…
            </button>
            <button
              className="jp-mod-styled"
              ref={openers.retire}
              disabled={props.busy}
              aria-expanded={form === 'retire'}
              onClick={() => setForm('retire')}
            >
              Retire…
            </button>
          </>
        )}
      </div>
      {form === 'supersede' && m.status === 'active' && (
        <StatementForm
          title="New version (the old one stays in history)"
          submitLabel="Supersede"
          initial={{ statement: m.statement, kind: m.kind, topic: m.topic }}
          busy={props.busy}
          onCancel={closeForm}
          onSubmit={body => props.onSupersede(m.id, body)}
        />
      )}
      {form === 'retire' && m.status === 'active' && (
        <RetireForm busy={props.busy} onCancel={closeForm} onSubmit={reason => props.onRetire(m.id, reason)} />
      )}

      <h3>Provenance</h3>
      <dl className="jp-jupymem-dl">
        <dt>Recorded by</dt>
        <dd className="jp-jupymem-recorder">
          {p.recorder}
          {p.author ? ` (${p.author})` : ''}
        </dd>
        <dt>When</dt>
        <dd>{shortTime(m.created_at)}</dd>
        {p.notebook && (
          <>
            <dt>Notebook</dt>
            <dd>
              {link ? (
                <a
                  href="#"
                  className="jp-jupymem-link"
                  onClick={e => {
                    e.preventDefault();
                    props.onOpenNotebook(link, p.cell_id);
                  }}
                >
                  {p.notebook}
                  {p.cell_id ? ' (go to cell)' : ''}
                </a>
              ) : (
                p.notebook
              )}
            </dd>
          </>
        )}
        {p.execution_count !== null && (
          <>
            <dt>Execution</dt>
            <dd>[{p.execution_count}]</dd>
          </>
        )}
        {p.quote && (
          <>
            <dt>Quote</dt>
            <dd>“{p.quote}”</dd>
          </>
        )}
        <dt>Valid</dt>
        <dd>
          {shortTime(m.valid_from)} – {m.valid_to ? shortTime(m.valid_to) : 'now'}
        </dd>
        {m.retire_reason && (
          <>
            <dt>Retired</dt>
            <dd>{m.retire_reason}</dd>
          </>
        )}
      </dl>
      {(m.supersedes || m.superseded_by) && (
        <div className="jp-jupymem-versions">
          {m.supersedes && (
            <button className="jp-mod-styled" title={m.supersedes} onClick={() => props.onOpenId(m.supersedes!)}>
              ← Previous version <code>{shortId(m.supersedes)}</code>
            </button>
          )}
          {m.superseded_by && (
            <button className="jp-mod-styled" title={m.superseded_by} onClick={() => props.onOpenId(m.superseded_by!)}>
              Newer version <code>{shortId(m.superseded_by)}</code> →
            </button>
          )}
        </div>
      )}

      {m.evidence.length > 0 && (
        <>
          <h3>Evidence</h3>
          {m.evidence.map(e => {
            const source = excerptSource(e.excerpt ?? '', e.diagnosis);
            return (
              <EvidenceCard key={e.handle} evidence={e} status={props.status}>
                {e.fix ? <FixView evidence={e} /> : source && <pre className="jp-jupymem-excerpt">{source}</pre>}
              </EvidenceCard>
            );
          })}
        </>
      )}

      <h3>History</h3>
      <ol className="jp-jupymem-history">
        {historyLines(history).map(h => (
          <li key={h.key}>
            <span className="jp-jupymem-muted">{shortTime(h.at)}</span> {h.text}
          </li>
        ))}
      </ol>
    </div>
  );
}

export function Failures(props: {
  evidence: IEvidence[];
  status: IStatus;
  kept: Set<string>;
  busy: boolean;
  onKeep: (handle: string, body: IRecordRequest) => void;
}): JSX.Element {
  const [keeping, setKeeping] = React.useState<string | null>(null);
  const list = React.useRef<HTMLDivElement | null>(null);
  // Once the form closes, the focus goes back to "Keep as lesson…" (cancelled) or to the card
  // (kept: the button goes once the lesson is saved), never to the page.
  const closeForm = (handle: string, kept: boolean) => {
    setKeeping(null);
    requestAnimationFrame(() => {
      const card = list.current?.querySelector<HTMLElement>(`[data-handle="${CSS.escape(handle)}"]`);
      (kept ? card : card?.querySelector<HTMLElement>('.jp-jupymem-keep') ?? card)?.focus();
    });
  };
  const intro = (
    <p className="jp-jupymem-muted">
      Recent failures: cells that failed in kernels with jupymem loaded. A fixed one shows the edit that made it run and a
      suggested lesson. Keep one as a lesson to remember what it taught.
    </p>
  );
  if (props.evidence.length === 0) {
    return (
      <>
        {intro}
        <p>No failed cells are staged.</p>
      </>
    );
  }
  return (
    <div className="jp-jupymem-failures" ref={list}>
      {intro}
      {props.evidence.map(e => (
        <EvidenceCard key={e.handle} evidence={e} status={props.status}>
          {e.next_failure && <div className="jp-jupymem-muted">Failed again as {e.next_failure}</div>}
          <FixView evidence={e} showSuggestion />
          {props.kept.has(e.handle) && <div className="jp-jupymem-kept">✓ Kept as a lesson</div>}
          {keeping === e.handle ? (
            <StatementForm
              title={`Lesson citing ${e.handle}`}
              submitLabel="Keep"
              initial={lessonDraft(e)}
              busy={props.busy}
              onCancel={() => closeForm(e.handle, false)}
              onSubmit={body => {
                props.onKeep(e.handle, body);
                closeForm(e.handle, true);
              }}
            />
          ) : props.kept.has(e.handle) ? null : (
            <button className="jp-mod-styled jp-jupymem-keep" onClick={() => setKeeping(e.handle)}>
              Keep as lesson…
            </button>
          )}
        </EvidenceCard>
      ))}
    </div>
  );
}

export function BlockPreview(props: { block: IBlock | null }): JSX.Element {
  const b = props.block;
  if (!b) {
    return <p className="jp-jupymem-muted">Loading the block…</p>;
  }
  return (
    <div className="jp-jupymem-block">
      <div className="jp-jupymem-muted">{blockCaption(b)}</div>
      <pre className="jp-jupymem-block-text" tabIndex={0} aria-label="Memory block">
        {b.text}
      </pre>
    </div>
  );
}
