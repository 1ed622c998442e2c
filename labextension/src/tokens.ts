/**
 * The JSON that crosses the REST boundary, mirrored from jupymem's models
 * (`Memory.to_dict()` and friends in jupymem/models.py) and from the
 * handlers in jupymem/server.py. Plain data only: no behaviour lives here.
 */

/**
 * Kinds in block order (SPEC 2): what an assistant must not get wrong first.
 * A copy of jupymem/models.py's KINDS; tests/test_one_source.py holds them equal.
 */
export const KINDS = [
  'correction',
  'constraint',
  'preference',
  'decision',
  'procedure',
  'failure',
  'fact',
  'note'
] as const;

export type Kind = (typeof KINDS)[number];

export type Standing = 'supported' | 'unconfirmed';

export type MemoryStatus = 'active' | 'superseded' | 'retired';

export interface IProvenance {
  recorder: string; // "person" or "assistant"
  notebook: string | null; // relative to the repository root
  cell_id: string | null;
  execution_count: number | null;
  session: string | null;
  quote: string | null;
  /** The recorder's git identity, "Name <email>", when git knew it. */
  author?: string | null;
}

/** The later run that fixed a staged failure (models.Fix). */
export interface IFix {
  source: string; // the fixing cell, redacted, at most 2 KB
  diff: string; // compact unified diff, failed -> fixed ("" when it ran unchanged)
  at: string;
  execution_count: number | null;
  cell_id: string | null;
  paired_by: string; // "cell id" or "similarity 0.87"
  after: string | null; // ran unchanged: the cell that ran in between
}

export interface IEvidence {
  handle: string; // "ev-" + 8 hex
  session: string;
  ename: string;
  evalue: string;
  diagnosis: string[];
  excerpt: string;
  created_at: string;
  cell_id: string | null;
  execution_count: number | null;
  notebook: string | null;
  fix: IFix | null;
  suggestion: string | null; // a draft lesson from the pair; not a memory until kept
  suggested_by: string | null; // "pair" or the model that wrote it
  next_failure: string | null; // the same cell failed again: that failure's handle
  /** `GET evidence` only: the memory that cites it, once it was kept as a lesson. */
  kept_by?: string | null;
}

export interface IMemory {
  id: string;
  kind: string;
  statement: string;
  standing: Standing;
  status: MemoryStatus;
  created_at: string;
  valid_from: string;
  valid_to: string | null;
  topic: string | null;
  original: string | null;
  provenance: IProvenance;
  evidence: IEvidence[];
  supersedes: string | null;
  superseded_by: string | null;
  retire_reason: string | null;
  confirmed_at: string | null;
  /** Kept on that machine only: never written to the shared .jupymem/ folder. */
  private?: boolean;
  /**
   * Two people superseded the same memory differently: the active replacements, on the
   * replaced memory and on each replacement, until someone settles it. Empty otherwise.
   */
  replacements?: string[];
}

/** An active memory that a new statement nearly repeats (models.Similar). */
export interface ISimilar {
  id: string;
  kind: string;
  statement: string;
  score: number; // 0..1
}

/**
 * What recording answers (`POST memories`, `POST memories/{id}/supersede`):
 * the memory itself, plus the active memories it nearly repeats.
 */
export interface IRecorded extends IMemory {
  similar: ISimilar[];
}

export interface IHistoryEntry {
  memory_id: string;
  seq: number;
  at: string;
  action: string; // recorded, reopened, superseded, supersedes, retired, confirmed, imported
  detail: Record<string, unknown>;
}

export interface IHit {
  memory: IMemory;
  score: number;
  /** 0..1, how sure search is that this memory answers the query (absent from older servers). */
  confidence?: number;
  /** The word every face shows for that confidence, from retrieval's calibrated thresholds ("weak" under an abstention). */
  level?: 'strong' | 'likely' | 'weak';
  legs: string[];
}

export interface ISearchResult {
  query: string;
  status: 'ok' | 'abstained';
  hits: IHit[];
  full: IMemory | null;
  reason: string | null;
  /** When it abstained: the nearest memories all the same, for a person to judge (absent from older servers). */
  closest?: IHit[];
  /** The legs and encoders after this search (its first in a process starts them loading). */
  retrieval?: IRetrieval | null;
}

export interface IBlock {
  text: string;
  revision: string;
  bytes: number;
  cap: number;
  shown: number;
  omitted: number;
}

/** `status.sharing`: memory shared through git in the repository's .jupymem/ folder. */
export interface ISharing {
  state: 'on' | 'off' | 'none';
  folder: string;
  files: { name: string; lines: number; applied: number; problems: number }[];
  /** One sentence per line that is not applied, naming file and line. */
  problems: string[];
  /** This clone's file, relative to the repository root, once it has one. */
  writer: string | null;
  /** The git identity written into this clone's lines. */
  identity: string | null;
  /** This clone's file ends in a line nobody applies: the next memory starts a new file. */
  writer_damaged?: boolean;
  /** In a read-only home: lines of .jupymem/log its cache cannot follow, not shown (said in `problems` too). */
  unseen_lines?: number;
  unseen_files?: number;
  shared_events: number;
  local_events: number;
  private_memories: number;
}

/** `POST share`: what turning sharing on or off did. */
export interface IShareResult {
  state: 'on' | 'off' | 'none';
  was: 'on' | 'off' | 'none';
  created: string[];
  written: number;
  kept_local: number;
  file: string | null;
  message: string;
  status: IStatus;
}

/** `GET status`: the core's status plus where the repository sits for the server. */
/** Which search legs answer in the server's process, and the transformer's progress. */
export interface IRetrieval {
  legs: string[];
  dense: 'on' | 'off';
  /** The dense leg's encoder when it answers: "static" or "transformer". */
  tier?: string | null;
  /** Why the dense leg is off, or why the transformer does not answer yet. */
  reason?: string | null;
  /** Each encoder's state in the server's process: "off" (not started), "loading", "ready", "failed". */
  static_encoder?: string;
  transformer?: string;
  /** What JUPYMEM_ENCODER asks the server for (jupymem/faces/server.py adds it). */
  encoders?: 'transformer' | 'static' | 'none';
  /** The transformer's background embedding, while it runs. */
  embedding?: { done: number; total: number } | null;
}

export interface IStatus {
  path: string; // the path asked about, relative to the server root
  git: boolean;
  root: string | null; // absolute, on the server's machine
  name: string | null;
  memory: boolean;
  project_id: string | null;
  matches: Record<string, unknown> | null;
  revision: number;
  counts: Record<string, number>;
  total?: number; // active memories
  staged?: number; // staged failures
  staged_revision?: number; // changes whenever a failure is staged or gains its fix
  registry?: 'ok' | 'corrupt';
  message?: string; // the core's own explanation, for people
  sharing?: ISharing | null;
  retrieval?: IRetrieval | null;
  /** The repository root relative to the server root ("" for the root itself), or null when it is above it. */
  root_path: string | null;
  /** The server root relative to the repository root, when the repository encloses the server root. */
  server_root_in_repo: string | null;
}

export interface IListResult {
  memories: IMemory[];
  total: number; // every memory that matches, across pages
  offset: number;
  revision: number;
  /** `per_kind` lists: each kind's count (the memories hold the first rows of each). */
  kinds?: Record<string, number>;
}

export interface IMemoryDetail {
  memory: IMemory;
  history: IHistoryEntry[];
}

export interface IEvidenceList {
  evidence: IEvidence[];
}

/** Body of `POST memories` and `POST evidence/{handle}/keep`. */
export interface IRecordRequest {
  statement: string;
  kind?: string;
  topic?: string | null;
  evidence?: string[];
  supersedes?: string | null;
  /** Keep it on this machine only (never written to .jupymem/). */
  private?: boolean;
}

export interface IErrorBody {
  error: string;
  message: string;
}
