import { describe, expect, it } from 'vitest';

import { ApiError, JupymemApi, apiUrl } from '../src/api';

interface ICall {
  url: string;
  init: RequestInit;
}

function fake(status: number, body: unknown): { api: JupymemApi; calls: ICall[] } {
  const calls: ICall[] = [];
  const api = new JupymemApi('http://h/base/', async (url, init) => {
    calls.push({ url, init });
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return new Response(text, { status, headers: { 'Content-Type': 'application/json' } });
  });
  return { api, calls };
}

describe('apiUrl', () => {
  it('joins the base url and encodes parameters, leaving empty ones out', () => {
    expect(apiUrl('http://h/base', 'status', { path: 'a b/c.ipynb' })).toBe(
      'http://h/base/jupymem/api/status?path=a%20b%2Fc.ipynb'
    );
    expect(apiUrl('http://h/', 'memories', { path: '', q: 'x&y', kind: undefined, all: false })).toBe(
      'http://h/jupymem/api/memories?q=x%26y'
    );
    expect(apiUrl('/', 'memories', { all: true, limit: 5 })).toBe('/jupymem/api/memories?all=1&limit=5');
  });
});

describe('JupymemApi', () => {
  it('reads with GET and query parameters', async () => {
    const { api, calls } = fake(200, { query: 'q', status: 'abstained', hits: [], full: null, reason: 'no match' });
    const r = await api.search('nb/a.ipynb', 'cats', { all: true });
    expect(r.status).toBe('abstained');
    expect(calls[0].url).toBe('http://h/base/jupymem/api/memories?path=nb%2Fa.ipynb&q=cats&all=1');
    expect(calls[0].init.method).toBe('GET');
  });

  it('asks for the first rows of every kind with per_kind', async () => {
    const { api, calls } = fake(200, { memories: [], total: 0, offset: 0, revision: 1, kinds: {} });
    await api.list('nb/a.ipynb', { perKind: 200 });
    expect(calls[0].url).toBe('http://h/base/jupymem/api/memories?path=nb%2Fa.ipynb&per_kind=200');
  });

  it('writes with POST and a JSON body that carries the path', async () => {
    const { api, calls } = fake(201, { id: 'm1' });
    await api.keep('a.ipynb', 'ev-0123abcd', { statement: 'Parse dates first', kind: 'procedure' });
    expect(calls[0].url).toBe('http://h/base/jupymem/api/evidence/ev-0123abcd/keep');
    expect(calls[0].init.method).toBe('POST');
    expect(JSON.parse(calls[0].init.body as string)).toEqual({
      path: 'a.ipynb',
      statement: 'Parse dates first',
      kind: 'procedure'
    });
  });

  it('pages the list', async () => {
    const { api, calls } = fake(200, { memories: [], total: 0, offset: 1000, revision: 1 });
    await api.list('r', { limit: 1000, offset: 1000, kind: 'fact' });
    expect(calls[0].url).toBe('http://h/base/jupymem/api/memories?path=r&kind=fact&limit=1000&offset=1000');
  });

  it('escapes ids in routes', async () => {
    const { api, calls } = fake(200, {});
    await api.retire('', 'a/b', 'gone');
    expect(calls[0].url).toBe('http://h/base/jupymem/api/memories/a%2Fb/retire');
    expect(JSON.parse(calls[0].init.body as string)).toEqual({ path: '', reason: 'gone' });
  });

  it('turns {"error", "message"} into an ApiError', async () => {
    const { api } = fake(400, { error: 'secret_refused', message: 'found an API key' });
    const err = await api.record('a.ipynb', { statement: 'key sk-...' }).catch(e => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(err.code).toBe('secret_refused');
    expect(err.message).toBe('found an API key');
  });

  it('reports a non-JSON answer plainly', async () => {
    const { api } = fake(502, '<html>bad gateway</html>');
    const err = await api.status('').catch(e => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe('bad_response');
  });
});
