/**
 * The memory panel: a ReactWidget whose path follows the document in focus
 * (index.ts calls `setPath`). Sidebar owns the data and reloads it when the
 * path changes, after each action, and when the revision poller sees memory
 * change elsewhere (another kernel, the CLI), or a kernel stage a failure or
 * pair one with its fix (`statusToken`).
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import { Signal } from '@lumino/signaling';
import type { Message } from '@lumino/messaging';
import * as React from 'react';

import { ApiError, JupymemApi } from './api';
import { SimilarOffer, StatementForm } from './forms';
import type { IChosen } from './forms';
import { RevisionPoller, citedHandles, debounce, hiddenByFilter, nextRow, repoState, statusToken } from './logic';
import type {
  IBlock,
  IEvidence,
  IMemory,
  IMemoryDetail,
  IRecordRequest,
  IRecorded,
  ISearchResult,
  IStatus
} from './tokens';
import {
  BlockPreview,
  Detail,
  Failures,
  GroupedList,
  Header,
  MORE_PER_KIND,
  MeaningLine,
  SearchResults,
  SharingBar
} from './views';

export interface ISidebarOptions {
  api: JupymemApi;
  openNotebook: (path: string, cellId: string | null) => void;
}

export class MemorySidebar extends ReactWidget {
  readonly pathChanged = new Signal<this, string>(this);
  readonly shown = new Signal<this, void>(this);
  private _path = '';

  constructor(private readonly options: ISidebarOptions) {
    super();
    this.addClass('jp-jupymem-sidebar');
  }

  get path(): string {
    return this._path;
  }

  setPath(path: string): void {
    if (path !== this._path) {
      this._path = path;
      this.pathChanged.emit(path);
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.shown.emit();
  }

  render(): JSX.Element {
    return <Sidebar host={this} api={this.options.api} openNotebook={this.options.openNotebook} />;
  }
}

type Tab = 'memories' | 'failures' | 'block';
const TABS: Tab[] = ['memories', 'failures', 'block'];

/**
 * The first memories of each kind fetched at once, so that every kind shows its count and
 * first rows whatever the project's size (a page of 1,000 in block order left the last
 * kinds out of a 2,500-memory list); more of a kind on request, and search reaches all.
 */
const PER_KIND = 200;

function message(err: unknown): string {
  if (err instanceof ApiError) {
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Performance marks for the benchmark: list received -> list painted. */
function markPainted(): void {
  requestAnimationFrame(() =>
    setTimeout(() => {
      performance.mark('jupymem:list-painted');
      performance.measure('jupymem:first-paint', 'jupymem:list-received', 'jupymem:list-painted');
    }, 0)
  );
}

function Sidebar(props: { host: MemorySidebar; api: JupymemApi; openNotebook: ISidebarOptions['openNotebook'] }): JSX.Element {
  const { host, api } = props;
  const [path, setPath] = React.useState(host.path);
  const [status, setStatus] = React.useState<IStatus | null>(null);
  const [memories, setMemories] = React.useState<IMemory[] | null>(null);
  // Each kind's count, for the list's headings (it holds the first PER_KIND rows of each).
  const [totals, setTotals] = React.useState<Record<string, number> | null>(null);
  const [evidence, setEvidence] = React.useState<IEvidence[]>([]);
  const [block, setBlock] = React.useState<IBlock | null>(null);
  // What an action (or a search) was refused with: it stays until the next action, so a
  // background reload that succeeds must not wipe it before anyone has read it.
  const [error, setError] = React.useState<string | null>(null);
  // Why the list could not be loaded: the next reload that succeeds clears it.
  const [loadError, setLoadError] = React.useState<string | null>(null);
  const [notice, setNotice] = React.useState<string | null>(null);
  const [busy, setBusy] = React.useState(false);
  const [tab, setTab] = React.useState<Tab>('memories');
  const [query, setQuery] = React.useState('');
  const [kind, setKind] = React.useState('');
  const [showAll, setShowAll] = React.useState(false);
  const [result, setResult] = React.useState<ISearchResult | null>(null);
  const [detail, setDetail] = React.useState<IMemoryDetail | null>(null);
  const [recording, setRecording] = React.useState(false);
  // A record that nearly repeats active memories: the offer to supersede one of them instead.
  const [nearly, setNearly] = React.useState<{ recorded: IRecorded; chosen: IChosen } | null>(null);
  // A filtered search that finds nothing: what the kind filter hides that would answer.
  const [hidden, setHidden] = React.useState<{ query: string; kind: string; total: number; kinds: string } | null>(null);
  const recordButton = React.useRef<HTMLButtonElement | null>(null);
  // The search bar stays in view while the list scrolls, and the group headings stick
  // just under it: they need its height, which wraps with the panel's width.
  const stuck = React.useRef<ResizeObserver | null>(null);
  const searchBar = React.useCallback((el: HTMLDivElement | null) => {
    stuck.current?.disconnect();
    stuck.current = null;
    if (!el || typeof ResizeObserver === 'undefined') {
      return;
    }
    const measure = () => el.parentElement?.style.setProperty('--jp-jupymem-sticky-top', `${el.offsetHeight}px`);
    stuck.current = new ResizeObserver(measure);
    stuck.current.observe(el);
    measure();
  }, []);
  const [painted, setPainted] = React.useState(0);
  // The row to focus again after "Back" from its detail (keyboard users land where they were).
  const [returnTo, setReturnTo] = React.useState<string | null>(null);

  // Answers to an older path or query must not overwrite newer ones.
  const generation = React.useRef(0);
  const pathRef = React.useRef(path);
  pathRef.current = path;
  const queryRef = React.useRef(query);
  queryRef.current = query;
  const filters = React.useRef({ kind, showAll });
  filters.current = { kind, showAll };
  // Rows of each kind loaded with "Show more" past its first page, for the filters they
  // were loaded under (``key``): a reload reads them again instead of folding them away.
  const shownMore = React.useRef<{ key: string; kinds: Record<string, number> }>({ key: '', kinds: {} });
  const detailId = React.useRef<string | null>(null);
  detailId.current = detail?.memory.id ?? null;
  // The memory a person last asked to see (null after Back), and a count of each ask: an
  // answer that arrives after a later ask (a reload's, or a slower click's) is dropped, or
  // a reload read before Back reopened the memory a person had just left.
  const wanted = React.useRef<string | null>(null);
  const asks = React.useRef(0);
  const leaveDetail = () => {
    wanted.current = null;
    asks.current++;
    setDetail(null);
  };

  const runSearch = React.useCallback(
    async (q: string) => {
      const p = pathRef.current;
      if (!q.trim()) {
        setResult(null);
        setHidden(null);
        return;
      }
      try {
        const { kind: k, showAll: all } = filters.current;
        const r = await api.search(p, q, { kind: k, all });
        // Nothing of this kind answers: ask every kind, so the panel can say the filter hides one that does.
        const unfiltered = k && (r.status !== 'ok' || r.hits.length === 0) ? await api.search(p, q, { all }) : null;
        if (pathRef.current === p && queryRef.current === q) {
          setResult(r);
          // The first search of a process starts the encoders: say so now, not at the next poll.
          const retrieval = r.retrieval;
          if (retrieval) {
            setStatus(s => (s && pathRef.current === p ? { ...s, retrieval } : s));
          }
          const h = unfiltered ? hiddenByFilter(k, unfiltered) : null;
          setHidden(h && { query: q, kind: k, total: h.total, kinds: h.kinds.map(c => `${c.count} ${c.kind}`).join(', ') });
        }
      } catch (err) {
        setError(message(err));
      }
    },
    [api]
  );

  const reload = React.useCallback(async () => {
    const gen = ++generation.current;
    const p = pathRef.current;
    try {
      const s = await api.status(p);
      if (gen !== generation.current) {
        return;
      }
      setStatus(s);
      poller.current!.revision = statusToken(s);
      if (repoState(s).state !== 'ready') {
        setMemories(null);
        setEvidence([]);
        setBlock(null);
        setLoadError(null);
        return;
      }
      const { kind: k, showAll: all } = filters.current;
      const [list, ev, b] = await Promise.all([
        api.list(p, { kind: k, all, perKind: PER_KIND }),
        api.evidence(p),
        api.block(p)
      ]);
      if (gen !== generation.current) {
        return;
      }
      // A reload (the poller's, after a pull or another process's write) keeps the rows a
      // person asked for with "Show more": read again, past each kind's first page. Read
      // after the list arrived, so that a "Show more" answered meanwhile is counted too.
      let rows = list.memories;
      const more = shownMore.current.key === `${k}|${all}` ? shownMore.current.kinds : {};
      for (const [kk, n] of Object.entries(more)) {
        const page = await api.list(p, {
          kind: kk,
          all,
          limit: n,
          offset: rows.filter(m => m.kind === kk).length
        });
        if (gen !== generation.current) {
          return;
        }
        const have = new Set(rows.map(m => m.id));
        rows = [...rows, ...page.memories.filter(m => !have.has(m.id))];
      }
      performance.mark('jupymem:list-received');
      setMemories(rows);
      setTotals(list.kinds ?? null);
      setEvidence(ev.evidence);
      setBlock(b);
      setLoadError(null);
      setPainted(n => n + 1);
      if (queryRef.current.trim()) {
        void runSearch(queryRef.current);
      }
      const id = wanted.current;
      const ask = asks.current;
      if (id) {
        try {
          const d = await api.memory(p, id);
          if (gen === generation.current && ask === asks.current) {
            setDetail(d);
          }
        } catch {
          if (ask === asks.current) {
            leaveDetail();
          }
        }
      }
    } catch (err) {
      if (gen === generation.current) {
        setLoadError(message(err));
      }
    }
  }, [api, runSearch]);

  const reloadRef = React.useRef(reload);
  reloadRef.current = reload;
  const poller = React.useRef<RevisionPoller | null>(null);
  if (poller.current === null) {
    poller.current = new RevisionPoller({
      read: () => api.status(pathRef.current).then(statusToken),
      changed: () => void reloadRef.current(),
      visible: () => host.isVisible && document.visibilityState === 'visible'
    });
  }

  // A notice confirms an action; it need not stay.
  React.useEffect(() => {
    if (!notice) {
      return;
    }
    const timer = setTimeout(() => setNotice(null), 6000);
    return () => clearTimeout(timer);
  }, [notice]);

  React.useEffect(() => {
    if (painted > 0) {
      markPainted();
    }
  }, [painted]);

  React.useEffect(() => {
    const onPath = (_: MemorySidebar, p: string) => {
      setPath(p);
    };
    const onShown = () => poller.current!.wake();
    const onVisibility = () => poller.current!.wake();
    host.pathChanged.connect(onPath);
    host.shown.connect(onShown);
    document.addEventListener('visibilitychange', onVisibility);
    poller.current!.start();
    return () => {
      host.pathChanged.disconnect(onPath);
      host.shown.disconnect(onShown);
      document.removeEventListener('visibilitychange', onVisibility);
      poller.current!.stop();
    };
  }, [host]);

  // A new path (or filter) means a different list.
  React.useEffect(() => {
    leaveDetail();
    setError(null);
    void reload();
  }, [path, kind, showAll, reload]);

  // An offer to supersede belongs to the repository it was made in.
  React.useEffect(() => setNearly(null), [path]);

  const debouncedSearch = React.useMemo(() => debounce((q: string) => void runSearch(q), 200), [runSearch]);
  React.useEffect(() => () => debouncedSearch.cancel(), [debouncedSearch]);

  const act = async <T,>(what: () => Promise<T>, done?: (value: T) => void | Promise<void>, thenReload = true) => {
    setBusy(true);
    setNotice(null);
    setError(null); // an old refusal must not linger over the next action
    try {
      const value = await what();
      setError(null);
      if (done) {
        await done(value);
      }
      if (thenReload) {
        await reload();
      }
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };

  const open = async (id: string) => {
    setError(null);
    wanted.current = id;
    const ask = ++asks.current;
    try {
      const d = await api.memory(pathRef.current, id);
      if (ask === asks.current) {
        setDetail(d);
        setError(null);
      }
    } catch (err) {
      if (ask === asks.current) {
        wanted.current = detailId.current; // what stays shown is what a reload reads again
        setError(message(err));
      }
    }
  };

  const state = repoState(status);
  const kept = React.useMemo(() => citedHandles(memories, evidence), [memories, evidence]);
  const openFailures = evidence.filter(e => !kept.has(e.handle)).length;
  return (
    <div className="jp-jupymem-root">
      <div className="jp-jupymem-title">
        <span>Project memory</span>
        <button
          className="jp-mod-styled jp-jupymem-refresh"
          title="Reload memory"
          aria-label="Reload memory"
          onClick={() => void reload()}
        >
          ⟳
        </button>
      </div>
      {(error ?? loadError) && (
        <div className="jp-jupymem-error" role="alert">
          {error ?? loadError}
        </div>
      )}
      {notice && (
        <div className="jp-jupymem-notice" role="status">
          {notice}
        </div>
      )}
      {state.state === 'loading' && <p className="jp-jupymem-muted">Looking for the repository…</p>}
      {state.state === 'outside' && <p className="jp-jupymem-explain">{state.message}</p>}
      {state.state === 'empty' && (
        <div className="jp-jupymem-explain">
          <p>{state.message}</p>
          <p className="jp-jupymem-muted">
            Looking never creates memory. Start it here, or record a first memory with <code>%%remember</code> in a
            notebook (<code>jupymem remember</code> in a terminal) and it starts by itself.
          </p>
          <button
            className="jp-mod-styled jp-mod-accept"
            disabled={busy}
            onClick={() => void act(() => api.init(pathRef.current))}
          >
            Start memory here
          </button>
        </div>
      )}
      {state.state === 'ready' && status && (
        <>
          <Header status={status} block={block} kind={kind} onKind={setKind} />
          <SharingBar
            status={status}
            busy={busy}
            onShare={on => void act(() => api.share(pathRef.current, on), r => setNotice(r.message))}
          />
          <MeaningLine status={status} />
          {detail ? (
            <Detail
              detail={detail}
              status={status}
              busy={busy}
              onBack={() => {
                setError(null);
                setReturnTo(detail.memory.id); // the list gives its row the focus once, then forgets it
                leaveDetail();
              }}
              onOpenId={id => void open(id)}
              onOpenNotebook={props.openNotebook}
              onConfirm={id => void act(() => api.confirm(pathRef.current, id), () => setNotice('Confirmed.'))}
              onRetire={(id, reason) => void act(() => api.retire(pathRef.current, id, reason), () => setNotice('Retired.'))}
              onSupersede={(id, body) =>
                void act(
                  () => api.supersede(pathRef.current, id, body),
                  async m => {
                    setNotice('Superseded: this is the new version.');
                    await open(m.id);
                  }
                )
              }
            />
          ) : (
            <>
              {/* One Tab stop for the tabs: the arrows move between them and show each one. */}
              <div
                className="jp-jupymem-tabs"
                role="tablist"
                aria-label="Memory views"
                onKeyDown={e => {
                  const next = nextRow(TABS.indexOf(tab), TABS.length, e.key);
                  if (next !== null) {
                    e.preventDefault();
                    setError(null);
                    setTab(TABS[next]);
                    e.currentTarget.querySelectorAll<HTMLElement>('[role="tab"]')[next]?.focus();
                  }
                }}
              >
                {(
                  [
                    ['memories', 'Memories'],
                    ['failures', `Failures${openFailures ? ` (${openFailures})` : ''}`],
                    ['block', 'Block']
                  ] as [Tab, string][]
                ).map(([t, label]) => (
                  <button
                    key={t}
                    role="tab"
                    tabIndex={tab === t ? 0 : -1}
                    aria-selected={tab === t}
                    className={`jp-jupymem-tab${tab === t ? ' jp-mod-active' : ''}`}
                    onClick={() => {
                      setError(null);
                      setTab(t);
                    }}
                  >
                    {label}
                  </button>
                ))}
              </div>
              {tab === 'memories' && (
                <div role="tabpanel" className="jp-jupymem-panel">
                  <div className="jp-jupymem-search" ref={searchBar}>
                    <input
                      type="search"
                      className="jp-mod-styled jp-jupymem-search-input"
                      placeholder="Search memory"
                      aria-label="Search memory"
                      value={query}
                      onChange={e => {
                        setReturnTo(null); // typing: the focus stays here, whatever list comes next
                        setQuery(e.target.value);
                        if (!e.target.value.trim()) {
                          debouncedSearch.cancel();
                          setResult(null);
                        } else {
                          debouncedSearch(e.target.value);
                        }
                      }}
                      onKeyDown={e => {
                        if (e.key === 'Enter') {
                          debouncedSearch.flush();
                        }
                      }}
                    />
                    <label className="jp-jupymem-check" title="Also show superseded and retired memories">
                      <input type="checkbox" checked={showAll} onChange={e => setShowAll(e.target.checked)} /> Past
                      versions
                    </label>
                    <button
                      className="jp-mod-styled jp-jupymem-record"
                      ref={recordButton}
                      onClick={() => {
                        setError(null);
                        setRecording(r => !r);
                      }}
                      aria-expanded={recording}
                    >
                      + Record
                    </button>
                  </div>
                  {recording && (
                    <StatementForm
                      title="Record a memory"
                      submitLabel="Record"
                      allowPrivate={status.sharing?.state === 'on'}
                      busy={busy}
                      onCancel={() => {
                        setRecording(false);
                        recordButton.current?.focus(); // never the page
                      }}
                      onSubmit={(body, chosen) =>
                        void act(
                          () => api.record(pathRef.current, body),
                          recorded => {
                            setRecording(false);
                            recordButton.current?.focus();
                            if (recorded.similar?.length) {
                              setNearly({ recorded, chosen });
                            } else {
                              setNotice('Recorded.');
                            }
                          }
                        )
                      }
                    />
                  )}
                  {nearly && (
                    <SimilarOffer
                      recorded={nearly.recorded}
                      chosen={nearly.chosen}
                      busy={busy}
                      onDismiss={() => {
                        setNearly(null);
                        recordButton.current?.focus(); // the offer and its buttons are gone
                      }}
                      onSupersede={oldId =>
                        // The same as recording with --supersedes: the old memory closes, the new
                        // one (already recorded) stays and names the one it replaces. Like the CLI, it
                        // keeps the old kind and topic unless the person set them (the server fills them in).
                        void act(
                          () =>
                            api.supersede(pathRef.current, oldId, {
                              statement: nearly.recorded.statement,
                              ...(nearly.chosen.kind ? { kind: nearly.chosen.kind } : {}),
                              ...(nearly.chosen.topic ? { topic: nearly.chosen.topic } : {})
                            }),
                          () => {
                            setNearly(null);
                            recordButton.current?.focus();
                            setNotice(`Superseded ${oldId}: the new statement replaces it.`);
                          }
                        )
                      }
                    />
                  )}
                  {query.trim() && hidden && hidden.query === query && hidden.kind === kind && (
                    <div className="jp-jupymem-filter-hides" role="status">
                      No {kind} memory answers “{query}”; the kind filter hides {hidden.kinds} that{' '}
                      {hidden.total === 1 ? 'does' : 'do'}.{' '}
                      <button className="jp-mod-styled" onClick={() => setKind('')}>
                        Search every kind
                      </button>
                    </div>
                  )}
                  {query.trim() && result ? (
                    <SearchResults
                      result={result}
                      onOpen={id => void open(id)}
                      focusId={returnTo}
                      onFocused={() => setReturnTo(null)}
                    />
                  ) : memories ? (
                    <GroupedList
                      memories={memories}
                      totals={totals}
                      busy={busy}
                      onOpen={id => void open(id)}
                      onMore={k =>
                        void act(
                          () =>
                            api.list(pathRef.current, {
                              kind: k,
                              all: showAll,
                              limit: MORE_PER_KIND,
                              offset: memories.filter(m => m.kind === k).length
                            }),
                          page => {
                            // Onto the rows shown now: a reload may have replaced them meanwhile.
                            setMemories(cur => {
                              const base = cur ?? memories;
                              const have = new Set(base.map(m => m.id));
                              return [...base, ...page.memories.filter(m => !have.has(m.id))];
                            });
                            const key = `${filters.current.kind}|${filters.current.showAll}`;
                            const kinds = shownMore.current.key === key ? shownMore.current.kinds : {};
                            shownMore.current = {
                              key,
                              kinds: { ...kinds, [k]: (kinds[k] ?? 0) + page.memories.length }
                            };
                          },
                          false
                        )
                      }
                      focusId={returnTo}
                      onFocused={() => setReturnTo(null)}
                      empty={
                        kind || showAll ? (
                          <p className="jp-jupymem-muted">No {kind || ''} memories match these filters.</p>
                        ) : (
                          <p>
                            Nothing recorded yet. Record the first memory with <b>+ Record</b> above, with{' '}
                            <code>%%remember</code> in a notebook, or keep a failed cell as a lesson from the{' '}
                            <b>Failures</b> tab.
                          </p>
                        )
                      }
                    />
                  ) : (
                    <p className="jp-jupymem-muted">Loading…</p>
                  )}
                </div>
              )}
              {tab === 'failures' && (
                <div role="tabpanel" className="jp-jupymem-panel">
                  <Failures
                    evidence={evidence}
                    status={status}
                    kept={kept}
                    busy={busy}
                    onKeep={(handle, body: IRecordRequest) =>
                      void act(() => api.keep(pathRef.current, handle, body), () => setNotice(`Kept as a lesson citing ${handle}.`))
                    }
                  />
                </div>
              )}
              {tab === 'block' && (
                <div role="tabpanel" className="jp-jupymem-panel">
                  <BlockPreview block={block} />
                </div>
              )}
            </>
          )}
        </>
      )}
    </div>
  );
}
