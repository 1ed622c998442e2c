import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import {
  RevisionPoller,
  authorName,
  blockCaption,
  blockMeter,
  citedHandles,
  clipText,
  confidenceOf,
  countChips,
  debounce,
  describeHistory,
  diffLines,
  disputeText,
  excerptSource,
  fixedIn,
  groupByKind,
  hiddenByFilter,
  historyLines,
  lessonDraft,
  localPath,
  memories,
  nextRow,
  notebookLink,
  rankHits,
  replacementMark,
  repoRelative,
  repoState,
  sharingView,
  shortTime,
  statusToken,
  meaningView,
  validStatement
} from '../src/logic';
import type { IMemory, ISharing, IStatus } from '../src/tokens';

function memory(id: string, kind: string, created_at = '2025-01-01T00:00:00Z', extra: Partial<IMemory> = {}): IMemory {
  return {
    id,
    kind,
    statement: `statement ${id}`,
    standing: 'supported',
    status: 'active',
    created_at,
    valid_from: created_at,
    valid_to: null,
    topic: null,
    original: null,
    provenance: { recorder: 'person', notebook: null, cell_id: null, execution_count: null, session: null, quote: null },
    evidence: [],
    supersedes: null,
    superseded_by: null,
    retire_reason: null,
    confirmed_at: null,
    ...extra
  };
}

function status(extra: Partial<IStatus> = {}): IStatus {
  return {
    path: 'nb/a.ipynb',
    git: true,
    root: '/srv/repo',
    name: 'repo',
    memory: true,
    project_id: 'p1',
    matches: null,
    revision: 3,
    counts: {},
    root_path: '',
    server_root_in_repo: '',
    ...extra
  };
}

describe('groupByKind', () => {
  it('orders groups by block kind order, then time, then id', () => {
    const groups = groupByKind([
      memory('b', 'note', '2025-01-02T00:00:00Z'),
      memory('z', 'fact'),
      memory('a', 'note', '2025-01-02T00:00:00Z'),
      memory('c', 'correction', '2025-01-03T00:00:00Z'),
      memory('n0', 'note', '2025-01-01T00:00:00Z')
    ]);
    expect(groups.map(g => g.kind)).toEqual(['correction', 'fact', 'note']);
    expect(groups[2].memories.map(m => m.id)).toEqual(['n0', 'a', 'b']);
  });

  it('puts unknown kinds last and cuts groups at the limit', () => {
    const many = Array.from({ length: 5 }, (_, i) => memory(`d${i}`, 'decision'));
    const groups = groupByKind([memory('x', 'mystery'), ...many], 3);
    expect(groups.map(g => g.kind)).toEqual(['decision', 'mystery']);
    expect(groups[0].memories).toHaveLength(3);
    expect(groups[0].hidden).toBe(2);
    expect(groups[1].hidden).toBe(0);
  });

  it('returns nothing for no memories', () => {
    expect(groupByKind([])).toEqual([]);
  });
});

describe('countChips', () => {
  it('drops zero counts and follows block order', () => {
    expect(countChips({ note: 2, correction: 1, fact: 0, decision: 4 })).toEqual([
      { kind: 'correction', count: 1 },
      { kind: 'decision', count: 4 },
      { kind: 'note', count: 2 }
    ]);
  });
});

describe('blockMeter', () => {
  const size = (bytes: number, cap: number, shown: number, omitted = 0) => ({ bytes, cap, shown, omitted });

  it('reports the share of the cap in one unit, with how many memories', () => {
    const m = blockMeter(size(1000, 4000, 3));
    expect(m.percent).toBe(25);
    expect(m.level).toBe('ok');
    expect(m.label).toBe('Block 1.0 kB of 4.0 kB: 3 memories');
    expect(blockMeter(size(512, 4000, 1)).label).toBe('Block 512 B of 4.0 kB: 1 memory');
  });

  it('warns when nearly full and says full when memories were left out', () => {
    expect(blockMeter(size(3300, 4000, 20)).level).toBe('high');
    const full = blockMeter(size(3000, 4000, 20, 7));
    expect(full.level).toBe('full');
    expect(full.label).toContain('7 more searched per prompt');
  });

  it('shows an empty block as empty, not as the bytes of its frame', () => {
    const empty = blockMeter(size(237, 4000, 0));
    expect(empty.percent).toBe(0);
    expect(empty.label).toBe('Block empty (cap 4.0 kB)');
    expect(empty.label).not.toContain('237');
  });

  it('clamps and survives a zero cap', () => {
    expect(blockMeter(size(5000, 4000, 9)).fraction).toBe(1);
    expect(blockMeter(size(10, 0, 1)).fraction).toBe(0);
  });

  it('captions the Block tab in the same units as the meter', () => {
    expect(blockCaption(size(714, 4000, 1))).toBe('1 memory in 714 B of the 4.0 kB cap. Assistants receive exactly this:');
    expect(blockCaption(size(3990, 4000, 30, 4))).toContain('30 memories in 4.0 kB of the 4.0 kB cap; 4 more are searched');
    expect(blockCaption(size(237, 4000, 0))).toMatch(/^No active memories yet, so the block is only its frame \(237 B/);
  });
});

describe('words and numbers', () => {
  it('counts memories in English', () => {
    expect(memories(0)).toBe('0 memories');
    expect(memories(1)).toBe('1 memory');
    expect(memories(2)).toBe('2 memories');
  });

  it('says how sure a hit is in words, and nothing when the server gives no confidence', () => {
    expect(confidenceOf(0.9999, 'strong')).toEqual({ word: 'strong', percent: 100, title: 'strong match (confidence 100%)' });
    expect(confidenceOf(0.9, 'likely')?.word).toBe('likely');
    // Without the server's calibrated word, never "strong".
    expect(confidenceOf(0.9)?.word).toBe('likely');
    expect(confidenceOf(0.3)?.word).toBe('weak');
    expect(confidenceOf(1.7)?.percent).toBe(100);
    expect(confidenceOf(undefined)).toBeNull();
    expect(confidenceOf(Number.NaN)).toBeNull();
  });

  it('shows a notebook path relative to the repository, as everywhere else', () => {
    const status = { root: '/home/ana/proj' };
    expect(repoRelative(status, '/home/ana/proj/nb/a.ipynb')).toBe('nb/a.ipynb');
    expect(repoRelative(status, 'nb/a.ipynb')).toBe('nb/a.ipynb');
    expect(repoRelative(status, '/home/ana/projects/x.ipynb')).toBe('/home/ana/projects/x.ipynb');
    expect(repoRelative({ root: null }, '/abs/x.ipynb')).toBe('/abs/x.ipynb');
    expect(repoRelative(status, null)).toBeNull();
  });

  it('does not repeat the error lines at the end of an excerpt', () => {
    const diagnosis = ["KeyError: 'customer_id'"];
    expect(excerptSource("df['customer_id']\n\nKeyError: 'customer_id'\n", diagnosis)).toBe("df['customer_id']");
    expect(excerptSource("KeyError: 'customer_id'", diagnosis)).toBe('');
    expect(excerptSource("df['customer_id']", diagnosis)).toBe("df['customer_id']");
    expect(excerptSource('x = 1', [])).toBe('x = 1');
  });
});

describe('nextRow', () => {
  it('moves one row with the arrows and stops at the ends', () => {
    expect(nextRow(0, 3, 'ArrowDown')).toBe(1);
    expect(nextRow(2, 3, 'ArrowDown')).toBe(2);
    expect(nextRow(1, 3, 'ArrowUp')).toBe(0);
    expect(nextRow(0, 3, 'ArrowUp')).toBe(0);
    expect(nextRow(-1, 3, 'ArrowDown')).toBe(0);
  });

  it('moves with Left and Right too (a row of chips or tabs)', () => {
    expect(nextRow(0, 3, 'ArrowRight')).toBe(1);
    expect(nextRow(0, 3, 'ArrowLeft')).toBe(0);
  });

  it('jumps with Home and End and ignores other keys and empty lists', () => {
    expect(nextRow(1, 5, 'Home')).toBe(0);
    expect(nextRow(1, 5, 'End')).toBe(4);
    expect(nextRow(1, 5, 'Enter')).toBeNull();
    expect(nextRow(-1, 0, 'ArrowDown')).toBeNull();
  });
});

describe('paths', () => {
  it('strips drives and leading slashes', () => {
    expect(localPath('RTC:nb/a.ipynb')).toBe('nb/a.ipynb');
    expect(localPath('/nb/a.ipynb')).toBe('nb/a.ipynb');
    expect(localPath('nb/a:b.ipynb')).toBe('nb/a:b.ipynb');
  });

  it('links a notebook in a repository inside the server root', () => {
    expect(notebookLink(status({ root_path: 'projects/repo' }), 'nb/a.ipynb')).toBe('projects/repo/nb/a.ipynb');
    expect(notebookLink(status({ root_path: '' }), 'a.ipynb')).toBe('a.ipynb');
  });

  it('links a notebook when the repository encloses the server root', () => {
    const s = status({ root_path: null, server_root_in_repo: 'work' });
    expect(notebookLink(s, 'work/nb/a.ipynb')).toBe('nb/a.ipynb');
    expect(notebookLink(s, 'elsewhere/a.ipynb')).toBeNull();
  });

  it('refuses escapes and missing notebooks', () => {
    expect(notebookLink(status(), '../x.ipynb')).toBeNull();
    expect(notebookLink(status(), '/etc/passwd')).toBeNull();
    expect(notebookLink(status(), null)).toBeNull();
    expect(notebookLink(status({ root_path: null, server_root_in_repo: null }), 'a.ipynb')).toBeNull();
  });
});

describe('repoState', () => {
  it('explains outside git, no memory and ready', () => {
    expect(repoState(null).state).toBe('loading');
    const outside = repoState(status({ git: false, memory: false, name: null }));
    expect(outside.state).toBe('outside');
    expect(outside.state === 'outside' && outside.message).toContain('not inside a git repository');
    const empty = repoState(status({ memory: false }));
    expect(empty).toMatchObject({ state: 'empty', canInit: true });
    expect(empty.state === 'empty' && empty.message).toContain('repo has no memory yet');
    const adopt = repoState(status({ memory: false, matches: { project_id: 'p' } }));
    expect(adopt.state === 'empty' && adopt.message).toContain('adopted');
    expect(repoState(status()).state).toBe('ready');
    const corrupt = repoState(status({ registry: 'corrupt', message: 'run jupymem doctor' }));
    expect(corrupt).toEqual({ state: 'outside', message: 'run jupymem doctor' });
  });
});

describe('describeHistory', () => {
  it('says what happened', () => {
    const e = (action: string, detail: Record<string, unknown> = {}) => ({ memory_id: 'm', seq: 1, at: '', action, detail });
    expect(describeHistory(e('retired', { reason: 'schema changed' }))).toBe('retired: schema changed');
    expect(describeHistory(e('retired'))).toBe('retired');
    expect(describeHistory(e('superseded', { by: 'abcdef0123456789' }))).toBe('superseded by abcdef0123');
    expect(describeHistory(e('confirmed'))).toBe('confirmed by a person');
    expect(describeHistory(e('imported'))).toBe('imported');
    // Who wrote the event: a teammate retiring someone else's memory is named.
    expect(describeHistory(e('retired', { reason: 'stale', who: 'Ben <ben@example.com>' }))).toBe(
      'retired: stale (Ben <ben@example.com>)'
    );
    expect(describeHistory(e('confirmed', { by: 'person', who: 'Ana' }))).toBe('confirmed by a person (Ana)');
    expect(describeHistory(e('reopened'))).toBe('recorded again');
  });

  it('reads a record that became a replacement ("Supersede instead") as one step', () => {
    const e = (seq: number, action: string, detail: Record<string, unknown> = {}) => ({
      memory_id: 'm-new',
      seq,
      at: `2025-01-0${seq}T00:00:00Z`,
      action,
      detail
    });
    const lines = historyLines([
      e(1, 'recorded', { recorder: 'person' }),
      e(2, 'retired', { reason: 'restated as the replacement of m-0123456789ab', who: 'Ana' }),
      e(3, 'reopened', { supersedes: 'm-0123456789ab', who: 'Ana' })
    ]);
    expect(lines.map(l => l.text)).toEqual(['recorded', 'supersedes m-01234567 (Ana)']);
    expect(lines[1].at).toBe('2025-01-03T00:00:00Z');
    // A real retirement, and a statement recorded again later, keep their own lines.
    const other = historyLines([e(1, 'recorded'), e(2, 'retired', { reason: 'stale' }), e(3, 'reopened')]);
    expect(other.map(l => l.text)).toEqual(['recorded', 'retired: stale', 'recorded again']);
  });
});

describe('small helpers', () => {
  it('shortens times and validates statements', () => {
    expect(shortTime('2025-03-04T05:06:07.123+00:00')).toBe('2025-03-04 05:06');
    expect(shortTime(null)).toBe('');
    expect(validStatement('  \n ')).toBe(false);
    expect(validStatement(' x ')).toBe(true);
  });

  it('clips a statement on one line', () => {
    expect(clipText('  Join\n on   customer_id ', 40)).toBe('Join on customer_id');
    expect(clipText('abcdefghij', 5)).toBe('abcd…');
    expect(clipText('abc de', 5)).toBe('abc…');
  });
});

describe('debounce', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('calls once with the last arguments after the calls stop', () => {
    const fn = vi.fn();
    const d = debounce(fn, 200);
    d('c');
    vi.advanceTimersByTime(150);
    d('ca');
    vi.advanceTimersByTime(150);
    d('cat');
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(200);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(fn).toHaveBeenCalledWith('cat');
  });

  it('flushes at once and cancels', () => {
    const fn = vi.fn();
    const d = debounce(fn, 200);
    d('now');
    d.flush();
    expect(fn).toHaveBeenCalledWith('now');
    d('never');
    d.cancel();
    vi.advanceTimersByTime(1000);
    expect(fn).toHaveBeenCalledTimes(1);
    d.flush();
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

describe('RevisionPoller', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('reports a change only when the revision moves', async () => {
    let revision = 5;
    const changed = vi.fn();
    const read = vi.fn(async () => revision);
    const p = new RevisionPoller({ read, changed, visible: () => true, interval: 1000 });
    p.revision = 5;
    p.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(read).toHaveBeenCalledTimes(1);
    expect(changed).not.toHaveBeenCalled();
    revision = 6;
    await vi.advanceTimersByTimeAsync(1000);
    expect(changed).toHaveBeenCalledWith(6);
    await vi.advanceTimersByTimeAsync(1000);
    expect(changed).toHaveBeenCalledTimes(1);
    p.stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(read).toHaveBeenCalledTimes(3);
  });

  it('sends nothing while hidden and polls at once on wake', async () => {
    let visible = false;
    const read = vi.fn(async () => 1);
    const p = new RevisionPoller({ read, changed: () => undefined, visible: () => visible, interval: 1000 });
    p.start();
    await vi.advanceTimersByTimeAsync(10000);
    expect(read).not.toHaveBeenCalled();
    visible = true;
    p.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(read).toHaveBeenCalledTimes(1);
    p.stop();
  });

  it('backs off after errors and recovers', async () => {
    let fail = true;
    const read = vi.fn(async () => {
      if (fail) {
        throw new Error('down');
      }
      return 1;
    });
    const p = new RevisionPoller({ read, changed: () => undefined, visible: () => true, interval: 1000, maxInterval: 4000 });
    p.start();
    await vi.advanceTimersByTimeAsync(1000); // first poll fails
    expect(p.nextDelay()).toBe(2000);
    await vi.advanceTimersByTimeAsync(2000); // second fails
    expect(p.nextDelay()).toBe(4000);
    await vi.advanceTimersByTimeAsync(4000); // third fails, capped
    expect(p.nextDelay()).toBe(4000);
    expect(read).toHaveBeenCalledTimes(3);
    fail = false;
    await vi.advanceTimersByTimeAsync(4000);
    expect(p.nextDelay()).toBe(1000);
    p.stop();
  });

  it('never has two requests in flight', async () => {
    let release: (n: number) => void = () => undefined;
    const read = vi.fn(() => new Promise<number>(resolve => (release = resolve)));
    const p = new RevisionPoller({ read, changed: () => undefined, visible: () => true, interval: 100 });
    p.start();
    await vi.advanceTimersByTimeAsync(100);
    p.wake();
    p.wake();
    await vi.advanceTimersByTimeAsync(1000);
    expect(read).toHaveBeenCalledTimes(1);
    release(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(read).toHaveBeenCalledTimes(2);
    p.stop();
  });
});

describe('citedHandles', () => {
  it('collects the evidence handles memories cite', () => {
    const ev = (handle: string) => ({
      handle, session: 's', ename: 'E', evalue: '', diagnosis: [], excerpt: '', created_at: '',
      cell_id: null, execution_count: null, notebook: null
    });
    const kept = citedHandles([memory('a', 'failure', undefined, { evidence: [ev('ev-1'), ev('ev-2')] }), memory('b', 'note')]);
    expect([...kept].sort()).toEqual(['ev-1', 'ev-2']);
    expect(citedHandles(null).size).toBe(0);
  });

  it('counts the failures the server says were kept, whatever the memories loaded', () => {
    const staged = [
      { handle: 'ev-1', kept_by: 'm1' },
      { handle: 'ev-2', kept_by: null },
      { handle: 'ev-3' }
    ] as unknown as Parameters<typeof citedHandles>[1];
    expect([...citedHandles([], staged)]).toEqual(['ev-1']);
  });
});

describe('rankHits', () => {
  const hit = (id: string, confidence?: number, level?: string) => ({ id, confidence, level });

  it('orders hits by the confidence shown, ties and missing ones in the order given', () => {
    const ranked = rankHits([hit('a', 0.3), hit('b', 0.9999, 'strong'), hit('c'), hit('d', 0.3), hit('e', 0.6)]);
    expect(ranked.map(r => r.hit.id)).toEqual(['b', 'e', 'a', 'd', 'c']);
    expect(ranked.map(r => r.sure?.word ?? null)).toEqual(['strong', 'likely', 'weak', 'weak', null]);
  });

  it("wears the server's word, with no rule of its own for hits that match about equally", () => {
    // Three correct join decisions at 99/99/95%: the verdict's words, never "may only share a word".
    const ranked = rankHits([hit('a', 0.99, 'strong'), hit('b', 0.99, 'likely'), hit('c', 0.95, 'likely'), hit('d', 0.94, 'likely')]);
    expect(ranked.map(r => r.sure!.word)).toEqual(['strong', 'likely', 'likely', 'likely']);
    expect(ranked.map(r => r.sure!.title).join(' ')).not.toContain('share a word');
  });

  it('calls every closest memory of an abstention weak, whatever its score or level', () => {
    const ranked = rankHits([hit('a', 0.84, 'likely'), hit('b', 0.3, 'weak')], false);
    expect(ranked.map(r => r.sure!.word)).toEqual(['weak', 'weak']);
    expect(ranked[0].sure!.percent).toBe(84);
    expect(ranked[0].sure!.title).toContain('no memory answers this confidently');
  });
});

describe('hiddenByFilter', () => {
  const answer = (...kinds: string[]) => ({ status: 'ok', hits: kinds.map(kind => ({ memory: { kind } })) });

  it('names the kinds that answer when the filter is lifted', () => {
    expect(hiddenByFilter('decision', answer('preference', 'fact', 'preference'))).toEqual({
      total: 3,
      kinds: [
        { kind: 'preference', count: 2 },
        { kind: 'fact', count: 1 }
      ]
    });
  });

  it('says nothing without a filter, without an answer, or when the answer is of the kind', () => {
    expect(hiddenByFilter('', answer('fact'))).toBeNull();
    expect(hiddenByFilter('fact', { status: 'abstained', hits: [] })).toBeNull();
    expect(hiddenByFilter('fact', answer('fact'))).toBeNull();
  });
});

describe('a failure and its fix', () => {
  const fix = {
    source: 'sales["customer_id"]',
    diff: '-sales["custid"]\n+sales["customer_id"]',
    at: '2025-01-01T00:00:00Z',
    execution_count: 7,
    cell_id: 'c1',
    paired_by: 'cell id',
    after: null
  };

  it('tints diff lines by what they are', () => {
    expect(diffLines(fix.diff)).toEqual([
      { sign: 'del', text: '-sales["custid"]' },
      { sign: 'add', text: '+sales["customer_id"]' }
    ]);
    expect(diffLines('@@ -1 +1 @@\n x = 1\n-y\n+z').map(l => l.sign)).toEqual(['hunk', 'same', 'del', 'add']);
    expect(diffLines('')).toEqual([]);
  });

  it('says where it was fixed as the kernel numbered it', () => {
    expect(fixedIn(fix)).toBe('Fixed in [7]');
    expect(fixedIn({ ...fix, execution_count: null })).toBe('Fixed in cell c1');
    expect(fixedIn({ ...fix, execution_count: null, cell_id: null })).toBe('Fixed');
  });

  it('takes the failed source out of an excerpt that ends with the diagnosis', () => {
    const diagnosis = ["KeyError: 'custid'"];
    expect(excerptSource('sales["custid"]\n\nKeyError: \'custid\'', diagnosis)).toBe('sales["custid"]');
    expect(excerptSource('no diagnosis here', diagnosis)).toBe('no diagnosis here');
  });

  it('prefills a lesson with the suggestion, kind failure', () => {
    expect(lessonDraft({ suggestion: 'The key is customer_id.' })).toEqual({
      statement: 'The key is customer_id.',
      kind: 'failure'
    });
    expect(lessonDraft({ suggestion: null })).toEqual({ statement: '', kind: 'failure' });
  });
});

describe('statusToken', () => {
  it('changes with memory and with staged failures, which are not in the log', () => {
    expect(statusToken({ revision: 3, staged_revision: 7 })).toBe('3/7');
    expect(statusToken({ revision: 3, staged_revision: 8 })).not.toBe(statusToken({ revision: 3, staged_revision: 7 }));
    expect(statusToken({ revision: 3 })).toBe('3/0');
  });
  it('changes as the encoders load, the transformer embeds and takes over, so the panel says so', () => {
    const embedding = { legs: ['lexical', 'fuzzy', 'dense'], dense: 'on' as const, tier: 'static' };
    const a = statusToken({ revision: 3, retrieval: { ...embedding, embedding: { done: 512, total: 9000 } } });
    const b = statusToken({ revision: 3, retrieval: { ...embedding, embedding: { done: 1024, total: 9000 } } });
    const c = statusToken({ revision: 3, retrieval: { ...embedding, tier: 'transformer', embedding: null } });
    const d = statusToken({ revision: 3, retrieval: { ...embedding, transformer: 'loading' } });
    const e = statusToken({ revision: 3, retrieval: { ...embedding, transformer: 'ready' } });
    expect(new Set([a, b, c, d, e]).size).toBe(5);
  });
  it('says which legs answer and how far the transformer is', () => {
    expect(meaningView(null).label).toBe('');
    const on = meaningView({ legs: ['lexical', 'fuzzy', 'dense'], dense: 'on', tier: 'transformer' });
    expect(on.label).toBe('Search: words and meaning (transformer encoder)');
    expect(on.busy).toBeFalsy();
    const busy = meaningView({ legs: [], dense: 'on', tier: 'static', embedding: { done: 1000, total: 4000 } });
    expect([busy.busy, busy.total]).toEqual([true, 4000]);
    expect(busy.label).toContain('1,000 of 4,000');
    expect(meaningView({ legs: ['lexical'], dense: 'off', reason: 'turned off' }).label).toBe('Search: words only (turned off)');
  });
  it('shows a bar while an encoder loads, whatever the number of memories', () => {
    const loading = meaningView({ legs: ['lexical'], dense: 'off', static_encoder: 'loading', transformer: 'off', reason: 'loading the bundled model' });
    expect([loading.busy, loading.total]).toEqual([true, undefined]);
    const tx = meaningView({ legs: [], dense: 'on', tier: 'static', static_encoder: 'ready', transformer: 'loading' });
    expect(tx.busy).toBe(true);
    expect(tx.label).toContain('the transformer is loading');
  });
  it("never words an encoder's own note as why search uses words only", () => {
    const before = meaningView({ legs: ['lexical'], dense: 'off', static_encoder: 'off', transformer: 'off', reason: 'not started yet', encoders: 'transformer' });
    expect(before.label).toBe('Search: words; the meaning models load at the first search');
    const loaded = meaningView({ legs: ['lexical'], dense: 'off', static_encoder: 'ready', transformer: 'ready', reason: null });
    expect(loaded.label).not.toContain('loaded in');
    const off = meaningView({ legs: ['lexical'], dense: 'off', static_encoder: 'off', transformer: 'off', reason: 'not started yet', encoders: 'none' });
    expect(off.label).toContain('JUPYMEM_ENCODER=none');
  });
});

describe('sharing and disputes', () => {
  it('marks a memory two people replaced, and each replacement', () => {
    const old = memory('m-old', 'decision', undefined, { status: 'superseded', replacements: ['m-a', 'm-b'] });
    const a = memory('m-a', 'decision', undefined, { supersedes: 'm-old', replacements: ['m-a', 'm-b'] });
    expect(replacementMark(old)).toBe('replaced 2 ways');
    expect(replacementMark(a)).toBe('1 of 2 replacements');
    expect(replacementMark(memory('m-c', 'fact'))).toBeNull();
    expect(disputeText(a)?.others).toEqual(['m-b']);
    expect(disputeText(old)?.others).toEqual(['m-a', 'm-b']);
    expect(disputeText(old)?.text).toContain('Retire one');
  });

  it('names the recorder briefly', () => {
    expect(authorName('Ana López <ana@example.com>')).toBe('Ana López');
    expect(authorName('<ana@example.com>')).toBe('<ana@example.com>');
    expect(authorName(null)).toBeNull();
  });

  it('describes the switch', () => {
    const base: ISharing = {
      state: 'on',
      folder: '.jupymem',
      files: [{ name: 'ana-0123456789.jsonl', lines: 3, applied: 3, problems: 0 }],
      problems: [],
      writer: '.jupymem/log/ana-0123456789.jsonl',
      identity: 'Ana <ana@example.com>',
      shared_events: 3,
      local_events: 0,
      private_memories: 0
    };
    expect(sharingView(base)).toMatchObject({ on: true, present: true });
    expect(sharingView(base).label).toContain('Ana <ana@example.com>');
    expect(sharingView({ ...base, state: 'off' })).toMatchObject({ on: false, present: true });
    expect(sharingView(null)).toMatchObject({ on: false, present: false });
    expect(sharingView({ ...base, problems: ['x line 2: bad'] }).problems).toEqual(['x line 2: bad']);
  });
});
