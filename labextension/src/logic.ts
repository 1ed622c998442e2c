/**
 * The sidebar's decisions, kept free of JupyterLab and React so they can be
 * unit-tested: grouping in block order, the block meter, notebook links,
 * debouncing the search box and polling the revision without hammering the
 * server.
 */
import { KINDS } from './tokens';
import type { IEvidence, IFix, IHistoryEntry, IMemory, IRetrieval, ISharing, IStatus } from './tokens';

const KIND_RANK = new Map<string, number>(KINDS.map((k, i) => [k, i]));

function kindRank(kind: string): number {
  return KIND_RANK.get(kind) ?? KINDS.length;
}

export interface IGroup {
  kind: string;
  memories: IMemory[];
  /** How many more there are than `memories` shows. */
  hidden: number;
}

/**
 * Memories grouped by kind in block order (kind, then time, then id), each
 * group cut at `limit` rows so that a large project still paints at once.
 */
export function groupByKind(memories: readonly IMemory[], limit = Infinity): IGroup[] {
  const byKind = new Map<string, IMemory[]>();
  for (const m of memories) {
    const list = byKind.get(m.kind);
    if (list) {
      list.push(m);
    } else {
      byKind.set(m.kind, [m]);
    }
  }
  const kinds = [...byKind.keys()].sort((a, b) => kindRank(a) - kindRank(b) || a.localeCompare(b));
  return kinds.map(kind => {
    const all = byKind.get(kind)!.sort(
      (a, b) =>
        (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    );
    const shown = all.length > limit ? all.slice(0, limit) : all;
    return { kind, memories: shown, hidden: all.length - shown.length };
  });
}

export interface ICountChip {
  kind: string;
  count: number;
}

/** Non-zero counts in block order. */
export function countChips(counts: Record<string, number>): ICountChip[] {
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => kindRank(a) - kindRank(b) || a.localeCompare(b))
    .map(([kind, count]) => ({ kind, count }));
}

export interface IMeter {
  fraction: number; // 0..1, for the bar
  percent: number; // rounded, for people
  level: 'ok' | 'high' | 'full';
  label: string;
}

/** "1 memory", "2 memories". */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function memories(n: number): string {
  return plural(n, 'memory', 'memories');
}

/** The block's numbers, as `GET block` gives them. */
export interface IBlockSize {
  bytes: number;
  cap: number;
  shown: number;
  omitted: number;
}

/**
 * Block bytes used against the cap. "full" once memories no longer fit. A
 * block with no memory in it is empty, even though its frame (tags and
 * preamble) takes a few hundred bytes: the meter shows nothing used.
 */
export function blockMeter(block: IBlockSize): IMeter {
  const { bytes, cap, shown, omitted } = block;
  if (shown === 0 && omitted === 0) {
    return { fraction: 0, percent: 0, level: 'ok', label: `Block empty (cap ${formatBytes(cap)})` };
  }
  const fraction = cap > 0 ? Math.min(1, Math.max(0, bytes / cap)) : 0;
  const percent = Math.round(fraction * 100);
  const level = omitted > 0 || fraction >= 0.98 ? 'full' : fraction >= 0.8 ? 'high' : 'ok';
  const more = omitted > 0 ? `, ${omitted} more searched per prompt` : '';
  return {
    fraction,
    percent,
    level,
    label: `Block ${formatBytes(bytes)} of ${formatBytes(cap)}: ${memories(shown)}${more}`
  };
}

/** The Block tab's caption: the same numbers in the same units as the meter. */
export function blockCaption(block: IBlockSize): string {
  if (block.shown === 0 && block.omitted === 0) {
    return (
      'No active memories yet, so the block is only its frame ' +
      `(${formatBytes(block.bytes)} of the ${formatBytes(block.cap)} cap). Assistants receive exactly this:`
    );
  }
  const more = block.omitted ? `; ${block.omitted} more are searched per prompt` : '';
  return (
    `${memories(block.shown)} in ${formatBytes(block.bytes)} of the ${formatBytes(block.cap)} cap${more}. ` +
    'Assistants receive exactly this:'
  );
}

export function formatBytes(n: number): string {
  return n < 1000 ? `${n} B` : `${(n / 1000).toFixed(n < 10000 ? 1 : 0)} kB`;
}

export interface IConfidence {
  word: 'strong' | 'likely' | 'weak';
  percent: number; // 0..100, the bar's length
  title: string;
}

/**
 * How sure search is of a hit, for people: a word and a bar instead of a
 * bare score. The word is the server's `level`, the one the text and HTML
 * output print too ("strong" only where retrieval's calibration says a first
 * hit is right at least 90% of the time; "weak" for every closest memory of
 * an abstention, whatever its score, as the verdict says none answers). A
 * server that sends no level gets "likely" from 0.5 and never "strong", and
 * `answered` false makes it "weak" too. Null when the server gives no
 * confidence (older servers), so the row simply shows none.
 */
export function confidenceOf(
  confidence: number | null | undefined,
  level?: string | null,
  answered = true
): IConfidence | null {
  if (typeof confidence !== 'number' || !Number.isFinite(confidence)) {
    return null;
  }
  const c = Math.min(1, Math.max(0, confidence));
  const said = level === 'strong' || level === 'likely' || level === 'weak' ? level : c >= 0.5 ? 'likely' : 'weak';
  const word = answered ? said : 'weak';
  const percent = Math.round(c * 100);
  const why = answered ? '' : ': no memory answers this confidently';
  return { word, percent, title: `${word} match (confidence ${percent}%)${why}` };
}

export interface IRankedHit<H> {
  hit: H;
  sure: IConfidence | null;
}

/**
 * Search hits in the order of the confidence shown, each with the server's word for it:
 * the panel adds no rule of its own (an earlier one called three hits within 5% of each
 * other "alike" and told correct answers they "may only share a word with the query").
 * `answered`: whether the verdict answered; the closest memories of an abstention are
 * all "weak", so no row under "No memory answers this confidently" reads "likely". Ties
 * keep the server's order, and hits without a confidence (older servers) go last.
 */
export function rankHits<H extends { confidence?: number; level?: string }>(
  hits: readonly H[],
  answered = true
): IRankedHit<H>[] {
  return hits
    .map((hit, i) => ({ hit, i, c: typeof hit.confidence === 'number' && Number.isFinite(hit.confidence) ? hit.confidence : -1 }))
    .sort((a, b) => b.c - a.c || a.i - b.i)
    .map(o => ({ hit: o.hit, sure: confidenceOf(o.hit.confidence, o.hit.level, answered) }));
}

/**
 * What a kind filter hides from a search: the kinds (with counts) of the hits that
 * answer when every kind is searched, none of them of the filtered kind. Null when the
 * unfiltered search does not answer either.
 */
export function hiddenByFilter(
  kind: string,
  unfiltered: { status: string; hits: { memory: { kind: string } }[] }
): { total: number; kinds: ICountChip[] } | null {
  if (!kind || unfiltered.status !== 'ok') {
    return null;
  }
  const counts: Record<string, number> = {};
  for (const h of unfiltered.hits) {
    if (h.memory.kind !== kind) {
      counts[h.memory.kind] = (counts[h.memory.kind] ?? 0) + 1;
    }
  }
  const kinds = countChips(counts);
  const total = kinds.reduce((n, c) => n + c.count, 0);
  return total ? { total, kinds } : null;
}

/**
 * Where the keyboard goes in a list of `count` rows from row `index` (-1:
 * none yet) on `key`; null when the key is not a list key. Up/Down (and
 * Left/Right, for a row of chips or tabs) move one step, stopping at the ends;
 * Home/End jump.
 */
export function nextRow(index: number, count: number, key: string): number | null {
  if (count === 0) {
    return null;
  }
  switch (key) {
    case 'ArrowDown':
    case 'ArrowRight':
      return index < 0 ? 0 : Math.min(count - 1, index + 1);
    case 'ArrowUp':
    case 'ArrowLeft':
      return index < 0 ? 0 : Math.max(0, index - 1);
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return null;
  }
}

/**
 * A notebook path as the rest of the panel shows it: relative to the
 * repository root. Failures staged by older kernels carry the absolute path.
 */
export function repoRelative(status: Pick<IStatus, 'root'> | null, path: string | null): string | null {
  if (!path) {
    return null;
  }
  const root = status?.root?.replace(/\/+$/, '');
  if (root && path.startsWith(root + '/')) {
    return path.slice(root.length + 1);
  }
  return path;
}

/**
 * A failed cell's excerpt without the error lines at its end: the card
 * already lists them (capture.excerpt appends the diagnosis to the source).
 */
export function excerptSource(excerpt: string, diagnosis: readonly string[]): string {
  const text = excerpt.replace(/\s+$/, '');
  if (diagnosis.length === 0) {
    return text;
  }
  const tail = diagnosis.join('\n');
  if (text === tail) {
    return '';
  }
  return text.endsWith('\n' + tail) ? text.slice(0, -tail.length).replace(/\s+$/, '') : text;
}

/** Strip a drive prefix ("RTC:notebooks/a.ipynb") and leading slashes. */
export function localPath(path: string): string {
  const colon = path.indexOf(':');
  const slash = path.indexOf('/');
  const local = colon >= 0 && (slash < 0 || colon < slash) ? path.slice(colon + 1) : path;
  return local.replace(/^\/+/, '');
}

function joinPath(...parts: string[]): string {
  return parts
    .flatMap(p => p.split('/'))
    .filter(p => p !== '' && p !== '.')
    .join('/');
}

/**
 * Where a memory's notebook (relative to the repository root) is for the
 * server (relative to the server root), or null when it is not reachable.
 */
export function notebookLink(status: Pick<IStatus, 'root_path' | 'server_root_in_repo'>, notebook: string | null): string | null {
  if (!notebook || notebook.startsWith('/') || notebook.split('/').includes('..')) {
    return null;
  }
  if (status.root_path !== null && status.root_path !== undefined) {
    return joinPath(status.root_path, notebook);
  }
  const prefix = status.server_root_in_repo;
  if (prefix === null || prefix === undefined) {
    return null;
  }
  const inside = joinPath(prefix);
  const target = joinPath(notebook);
  if (inside === '') {
    return target;
  }
  return target.startsWith(inside + '/') ? target.slice(inside.length + 1) : null;
}

export type RepoState =
  | { state: 'loading' }
  | { state: 'outside'; message: string }
  | { state: 'empty'; message: string; canInit: true }
  | { state: 'ready' };

/** What the panel says about the document in focus. */
export function repoState(status: IStatus | null): RepoState {
  if (!status) {
    return { state: 'loading' };
  }
  const where = status.path || 'The server root';
  if (!status.git) {
    return {
      state: 'outside',
      message: `${where} is not inside a git repository, so it has no memory. Open a notebook in a repository.`
    };
  }
  if (status.registry === 'corrupt') {
    return { state: 'outside', message: status.message ?? 'The jupymem registry is corrupt; run `jupymem doctor`.' };
  }
  if (!status.memory) {
    const adopted = status.matches ? ' Its memory from an earlier checkout will be adopted.' : '';
    return {
      state: 'empty',
      message: `${status.name ?? 'This repository'} has no memory yet.${adopted}`,
      canInit: true
    };
  }
  return { state: 'ready' };
}

/** One line of a memory's history, as the detail view lists it. */
export interface IHistoryLine {
  key: string;
  at: string;
  text: string;
}

/** What the core writes when a statement already recorded becomes a replacement (core/recording.py). */
const RESTATED = 'restated as the replacement of ';

/**
 * A memory's history for people, one line per step. "Supersede instead" (or recording a
 * statement again as the replacement of another) writes two events when the memory
 * takes the replaced one's kind or topic: it is retired, then reopened as the
 * replacement. That is one step, and reads as one: "supersedes m-…", not "retired:
 * restated as … / recorded again".
 */
export function historyLines(entries: readonly IHistoryEntry[]): IHistoryLine[] {
  const out: IHistoryLine[] = [];
  for (let i = 0; i < entries.length; i++) {
    const h = entries[i];
    const next = entries[i + 1];
    const reason = typeof h.detail?.reason === 'string' ? (h.detail.reason as string) : '';
    const replaced = next && typeof next.detail?.supersedes === 'string' ? (next.detail.supersedes as string) : null;
    if (h.action === 'retired' && reason.startsWith(RESTATED) && next?.action === 'reopened' && replaced) {
      const who = typeof next.detail.who === 'string' && next.detail.who ? ` (${next.detail.who})` : '';
      out.push({ key: `${next.seq}-supersedes`, at: next.at, text: `supersedes ${shortId(replaced)}${who}` });
      i++;
      continue;
    }
    out.push({ key: `${h.seq}-${h.action}`, at: h.at, text: describeHistory(h) });
  }
  return out;
}

/** One line for a history entry, for people, ending with who wrote the event. */
export function describeHistory(entry: IHistoryEntry): string {
  const d = entry.detail ?? {};
  const who = typeof d.who === 'string' && d.who ? ` (${d.who})` : '';
  return describeAction(entry) + who;
}

function describeAction(entry: IHistoryEntry): string {
  const d = entry.detail ?? {};
  const other = (key: string) => (typeof d[key] === 'string' ? shortId(d[key] as string) : null);
  switch (entry.action) {
    case 'recorded':
      return 'recorded';
    case 'superseded': {
      const by = other('by') ?? other('superseded_by') ?? other('new');
      return by ? `superseded by ${by}` : 'superseded';
    }
    case 'supersedes': {
      const old = other('old') ?? other('supersedes') ?? other('replaces');
      return old ? `supersedes ${old}` : 'supersedes an older version';
    }
    case 'retired':
      return typeof d.reason === 'string' && d.reason ? `retired: ${d.reason}` : 'retired';
    case 'confirmed':
      return d.by === 'assistant' ? 'confirmed by an assistant' : 'confirmed by a person';
    case 'reopened': {
      const old = other('supersedes');
      return old ? `supersedes ${old}` : 'recorded again';
    }
    default:
      return entry.action;
  }
}

export function shortId(id: string): string {
  return id.length > 10 ? id.slice(0, 10) : id;
}

/** "2025-01-02T03:04:05.678Z" -> "2025-01-02 03:04". */
export function shortTime(iso: string | null | undefined): string {
  if (!iso) {
    return '';
  }
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]}` : iso;
}

export interface IDebounced<A extends unknown[]> {
  (...args: A): void;
  cancel(): void;
  flush(): void;
}

/** Calls `fn` once the calls stop for `wait` ms, with the last arguments. */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, wait: number): IDebounced<A> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let last: A | null = null;
  const run = () => {
    timer = null;
    const args = last;
    last = null;
    if (args) {
      fn(...args);
    }
  };
  const debounced = ((...args: A) => {
    last = args;
    if (timer !== null) {
      clearTimeout(timer);
    }
    timer = setTimeout(run, wait);
  }) as IDebounced<A>;
  debounced.cancel = () => {
    if (timer !== null) {
      clearTimeout(timer);
    }
    timer = null;
    last = null;
  };
  debounced.flush = () => {
    if (timer !== null) {
      clearTimeout(timer);
      run();
    }
  };
  return debounced;
}

/**
 * What the sidebar watches in `GET status`: memory's revision, and the staged
 * failures' own counter (a failure or its fix is not an event in memory's log).
 */
export function statusToken(s: Pick<IStatus, 'revision' | 'staged_revision' | 'retrieval'>): string {
  // The encoders' load, the transformer's progress and take-over change what the panel says, not memory.
  const r = s.retrieval;
  const base = `${s.revision}/${s.staged_revision ?? 0}`;
  return r ? `${base}/${r.tier ?? ''}:${r.static_encoder ?? ''}:${r.transformer ?? ''}:${r.embedding?.done ?? ''}` : base;
}

/**
 * What the panel says about search: which legs answer, and what is still loading.
 * `busy` asks for a bar: `done`/`total` while the transformer embeds memories (a
 * measured bar), none while an encoder loads (a bar that only says it is working).
 * Worded from the legs' states, never from an encoder's own note ("… loaded in 0.12 s"
 * read as if it were why search used words only).
 */
export function meaningView(r: IRetrieval | null | undefined): {
  label: string;
  busy?: boolean;
  done?: number;
  total?: number;
} {
  if (!r) {
    return { label: '' };
  }
  if (r.encoders === 'none') {
    return { label: 'Search: words only (meaning is turned off: JUPYMEM_ENCODER=none)' };
  }
  const static_ = r.static_encoder ?? '';
  const tx = r.transformer ?? '';
  const loading = (state: string) => state === 'loading';
  if (r.embedding && r.embedding.total > 0) {
    const { done, total } = r.embedding;
    const meanwhile = r.tier === 'static' ? 'the static model answers meanwhile' : 'words answer meanwhile';
    return {
      label: `Search: the transformer is embedding memories, ${done.toLocaleString()} of ${total.toLocaleString()}; ${meanwhile}`,
      busy: true,
      done,
      total
    };
  }
  if (r.dense === 'on' && r.tier === 'transformer') {
    return { label: 'Search: words and meaning (transformer encoder)' };
  }
  if (r.dense === 'on') {
    if (loading(tx) || (tx === 'off' && loading(static_))) {
      return { label: 'Search: words and meaning (static encoder); the transformer is loading', busy: true };
    }
    if (tx === 'ready' || (tx === 'off' && static_ === 'ready' && r.reason)) {
      return { label: 'Search: words and meaning (static encoder); the transformer takes over at the next search' };
    }
    return { label: `Search: words and meaning (${r.tier ?? 'static'} encoder)` };
  }
  if (loading(static_) || loading(tx)) {
    return { label: 'Search: words for now; the meaning models are loading', busy: true };
  }
  if (static_ === 'off' && tx === 'off' && (!r.reason || r.reason === 'not started yet')) {
    return { label: 'Search: words; the meaning models load at the first search' };
  }
  const ready = static_ === 'ready' || tx === 'ready';
  if (ready && !r.reason) {
    return { label: 'Search: words; meaning answers from the next search' };
  }
  return { label: `Search: words only${r.reason ? ` (${r.reason})` : ''}` };
}

export interface IPollerOptions {
  /** Reads the current revision (or a token of several); cheap (GET status). */
  read: () => Promise<number | string>;
  /** Called when the revision differs from the last one seen. */
  changed: (revision: number | string) => void;
  /** Whether anyone can see the panel; polling pauses while false. */
  visible: () => boolean;
  interval?: number; // ms between polls while visible
  maxInterval?: number; // ceiling of the back-off after errors
}

/**
 * Polls the revision while the panel is visible, one request at a time,
 * backing off after errors. Hidden: no request at all; `wake()` on showing
 * polls at once so the panel is never stale when it appears.
 */
export class RevisionPoller {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inFlight = false;
  private failures = 0;
  private stopped = true;
  private seen: number | string | null = null;
  readonly interval: number;
  readonly maxInterval: number;

  constructor(private readonly opts: IPollerOptions) {
    this.interval = opts.interval ?? 3000;
    this.maxInterval = opts.maxInterval ?? 60000;
  }

  /** The revision the caller has already loaded, so it does not count as a change. */
  set revision(value: number | string | null) {
    this.seen = value;
  }

  get revision(): number | string | null {
    return this.seen;
  }

  start(): void {
    this.stopped = false;
    this.schedule(this.interval);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  /** Poll now (e.g. the panel was shown or the window regained focus). */
  wake(): void {
    if (this.stopped) {
      return;
    }
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    void this.tick();
  }

  /** The delay before the next poll: the interval, doubled per consecutive failure. */
  nextDelay(): number {
    return Math.min(this.maxInterval, this.interval * 2 ** this.failures);
  }

  private schedule(delay: number): void {
    if (this.stopped) {
      return;
    }
    if (this.timer !== null) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick();
    }, delay);
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.inFlight) {
      return;
    }
    if (!this.opts.visible()) {
      // Hidden: no request; look again later (wake() shortens the wait).
      this.schedule(this.interval);
      return;
    }
    this.inFlight = true;
    try {
      const revision = await this.opts.read();
      this.failures = 0;
      if (this.seen !== null && revision !== this.seen) {
        this.seen = revision;
        this.opts.changed(revision);
      } else {
        this.seen = revision;
      }
    } catch {
      this.failures += 1;
    } finally {
      this.inFlight = false;
    }
    this.schedule(this.nextDelay());
  }
}

/** Whether a statement is worth sending (the server refuses blank ones too). */
/** Whitespace folded, cut to `limit` characters with an ellipsis (the full text lives in the detail). */
export function clipText(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= limit ? flat : flat.slice(0, limit - 1).trimEnd() + '…';
}

export function validStatement(text: string): boolean {
  return text.trim().length > 0;
}

/**
 * Handles of staged failures kept as lessons: the server says which (`kept_by`), as the
 * memories loaded may leave the lesson out (a kind filter, a page); the loaded memories'
 * citations count too, for servers that do not say.
 */
export function citedHandles(memories: readonly IMemory[] | null, evidence: readonly IEvidence[] = []): Set<string> {
  const out = new Set<string>(evidence.filter(e => e.kept_by).map(e => e.handle));
  for (const m of memories ?? []) {
    for (const e of m.evidence) {
      out.add(e.handle);
    }
  }
  return out;
}

/** One line of a fix's diff, with what it is, so the view can tint it. */
export interface IDiffLine {
  sign: 'add' | 'del' | 'hunk' | 'same';
  text: string;
}

/** A compact unified diff (as the kernel stores it) split into tinted lines. */
export function diffLines(diff: string): IDiffLine[] {
  if (!diff) {
    return [];
  }
  return diff.split('\n').map(text => ({
    sign: text.startsWith('+') ? 'add' : text.startsWith('-') ? 'del' : text.startsWith('@@') ? 'hunk' : 'same',
    text
  }));
}

/** "Fixed in [7]", as the kernel numbered it (or by cell id, or just "Fixed"). */
export function fixedIn(fix: IFix): string {
  if (fix.execution_count !== null) {
    return `Fixed in [${fix.execution_count}]`;
  }
  return fix.cell_id ? `Fixed in cell ${fix.cell_id}` : 'Fixed';
}

/** What "Keep as lesson" starts from: the pair's suggested lesson (if any), kind failure. */
export function lessonDraft(e: Pick<IEvidence, 'suggestion'>): { statement: string; kind: string } {
  return { statement: e.suggestion ?? '', kind: 'failure' };
}

/**
 * The mark of a memory two people superseded differently: "replaced 2 ways" on the
 * replaced one, "1 of 2 replacements" on each replacement; null when nothing is disputed.
 */
export function replacementMark(m: IMemory): string | null {
  const r = m.replacements ?? [];
  if (r.length < 2) {
    return null;
  }
  return r.includes(m.id) ? `1 of ${r.length} replacements` : `replaced ${r.length} ways`;
}

/** What the detail view says about a disputed memory, and which other memories to offer. */
export function disputeText(m: IMemory): { text: string; others: string[] } | null {
  const r = m.replacements ?? [];
  if (r.length < 2) {
    return null;
  }
  const settle = 'Retire one, or supersede it again, to settle it.';
  if (r.includes(m.id)) {
    const others = r.filter(id => id !== m.id);
    return {
      text: `Two people replaced ${shortId(m.supersedes ?? '')} differently; this is one of ${r.length} active replacements. ${settle}`,
      others
    };
  }
  return { text: `Two people replaced this memory differently: ${r.length} replacements are active. ${settle}`, others: r };
}

/** "Ana López <ana@example.com>" -> "Ana López" (the name is enough in a list). */
export function authorName(author: string | null | undefined): string | null {
  if (!author) {
    return null;
  }
  return author.startsWith('<') ? author : author.split(' <')[0];
}

export interface ISharingView {
  /** Whether the switch shows "on". */
  on: boolean;
  /** Whether the repository has a .jupymem/ folder at all. */
  present: boolean;
  /** One line under the switch. */
  label: string;
  problems: string[];
}

/** The sidebar's sharing switch and its line, from `status.sharing`. */
export function sharingView(sharing: ISharing | null | undefined): ISharingView {
  if (!sharing || sharing.state === 'none') {
    return { on: false, present: false, label: 'Memory stays on this machine.', problems: [] };
  }
  const files = sharing.files.length;
  const where = `${files} file${files === 1 ? '' : 's'} in ${sharing.folder}/`;
  if (sharing.state === 'off') {
    return { on: false, present: true, label: `Off: new memories stay here; ${where} kept as history.`, problems: sharing.problems };
  }
  const who = sharing.identity ? `as ${sharing.identity}` : 'as nobody (set git user.name)';
  return { on: true, present: true, label: `Shared through git (${where}), writing ${who}.`, problems: sharing.problems };
}
