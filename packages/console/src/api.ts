/**
 * The Management API, as the console calls it: same origin (/api/v2, whatever the audience's host), the
 * admin's access token, and errors turned into ApiError carrying the API's own message.
 */
import type { Auth0Client } from '@auth0/auth0-spa-js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface Page<T> {
  items: T[];
  total: number;
}

export class ManagementApi {
  constructor(private readonly auth: Auth0Client) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const token = await this.auth.getTokenSilently();
    const response = await fetch(`/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!response.ok) {
      const error = (json ?? {}) as { message?: string; errorCode?: string; error?: string };
      throw new ApiError(response.status, error.message ?? `The Management API answered ${response.status}`, error.errorCode ?? error.error);
    }
    return json as T;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /** A page of a list that pages with page/per_page/include_totals; `key` is the list's property. */
  async page<T>(path: string, key: string, page: number, perPage: number, query: Record<string, string> = {}): Promise<Page<T>> {
    const params = new URLSearchParams({ ...query, page: String(page), per_page: String(perPage), include_totals: 'true' });
    const body = await this.get<Record<string, unknown>>(`${path}?${params}`);
    return { items: (body[key] ?? []) as T[], total: Number(body.total ?? 0) };
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
