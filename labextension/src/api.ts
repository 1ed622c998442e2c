/**
 * The only code that knows jupymem's REST URLs.
 *
 * Requests go through an injected `send` (in JupyterLab, ServerConnection's
 * makeRequest, which adds the token and the XSRF header), so this module has
 * no JupyterLab import and can be unit-tested with a fake.
 */
import type {
  IBlock,
  IErrorBody,
  IEvidenceList,
  IListResult,
  IMemory,
  IMemoryDetail,
  IRecordRequest,
  IRecorded,
  ISearchResult,
  IShareResult,
  IStatus
} from './tokens';

export type Send = (url: string, init: RequestInit) => Promise<Response>;

/** A refusal from the server: `code` is the stable name from `{"error": code}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Params = Record<string, string | number | boolean | null | undefined>;

/** `{base}/jupymem/api/{route}?{params}`; empty and false params are left out. */
export function apiUrl(baseUrl: string, route: string, params: Params = {}): string {
  const base = baseUrl.endsWith('/') ? baseUrl : baseUrl + '/';
  const query = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '' && v !== false)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v === true ? '1' : String(v))}`)
    .join('&');
  return `${base}jupymem/api/${route}${query ? '?' + query : ''}`;
}

export class JupymemApi {
  constructor(
    private readonly baseUrl: string,
    private readonly send: Send
  ) {}

  status(path: string): Promise<IStatus> {
    return this.get('status', { path });
  }

  init(path: string): Promise<IStatus> {
    return this.post('init', { path });
  }

  /**
   * One page of memories in block order (the server's default page is 200); with
   * `perKind`, the first `perKind` of every kind and each kind's count (`kinds`).
   */
  list(
    path: string,
    opts: { kind?: string; all?: boolean; limit?: number; offset?: number; perKind?: number } = {}
  ): Promise<IListResult> {
    return this.get('memories', {
      path,
      kind: opts.kind,
      all: opts.all,
      limit: opts.limit,
      offset: opts.offset,
      per_kind: opts.perKind
    });
  }

  search(
    path: string,
    q: string,
    opts: { kind?: string; all?: boolean; limit?: number } = {}
  ): Promise<ISearchResult> {
    return this.get('memories', { path, q, kind: opts.kind, all: opts.all, limit: opts.limit });
  }

  memory(path: string, id: string): Promise<IMemoryDetail> {
    return this.get(`memories/${encodeURIComponent(id)}`, { path });
  }

  /** Records; the answer names the active memories the statement nearly repeats (`similar`). */
  record(path: string, body: IRecordRequest): Promise<IRecorded> {
    return this.post('memories', { path, ...body });
  }

  confirm(path: string, id: string): Promise<IMemory> {
    return this.post(`memories/${encodeURIComponent(id)}/confirm`, { path });
  }

  supersede(path: string, id: string, body: IRecordRequest): Promise<IRecorded> {
    return this.post(`memories/${encodeURIComponent(id)}/supersede`, { path, ...body });
  }

  retire(path: string, id: string, reason: string | null): Promise<IMemory> {
    return this.post(`memories/${encodeURIComponent(id)}/retire`, { path, reason });
  }

  evidence(path: string): Promise<IEvidenceList> {
    return this.get('evidence', { path });
  }

  keep(path: string, handle: string, body: IRecordRequest): Promise<IMemory> {
    return this.post(`evidence/${encodeURIComponent(handle)}/keep`, { path, ...body });
  }

  block(path: string): Promise<IBlock> {
    return this.get('block', { path });
  }

  /** Turn sharing through git on or off for the repository holding `path`. */
  share(path: string, on: boolean): Promise<IShareResult> {
    return this.post('share', { path, on });
  }

  private get<T>(route: string, params: Params): Promise<T> {
    return this.request<T>(apiUrl(this.baseUrl, route, params), { method: 'GET' });
  }

  private post<T>(route: string, body: Record<string, unknown>): Promise<T> {
    return this.request<T>(apiUrl(this.baseUrl, route), {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' }
    });
  }

  private async request<T>(url: string, init: RequestInit): Promise<T> {
    const response = await this.send(url, init);
    const text = await response.text();
    let data: unknown = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        throw new ApiError(response.status, 'bad_response', `Unexpected answer from ${url}: ${text.slice(0, 200)}`);
      }
    }
    if (!response.ok) {
      const body = (data ?? {}) as Partial<IErrorBody>;
      throw new ApiError(
        response.status,
        body.error ?? 'http_error',
        body.message ?? `${response.status} ${response.statusText}`
      );
    }
    return data as T;
  }
}
