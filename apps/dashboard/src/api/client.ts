import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type ErrorBody = Schemas['Error'];

/**
 * The typed client of the gateway's API (types generated from services/gateway/openapi.json at
 * build time: a changed API breaks the build). Same origin: the session cookie goes along.
 */
export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });

/** An API answer other than 2xx, or no answer at all (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody | undefined,
    /** Seconds to wait before trying again (429's and 503's Retry-After), when given. */
    readonly retryAfter: number | undefined,
  ) {
    super(body?.message ?? (status === 0 ? 'The platform did not answer.' : `HTTP ${status}`));
  }

  /** Field path (`name`, `value`) → the API's message for it (validation details). */
  fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const detail of this.body?.details ?? []) {
      const field = detail.path.split('.')[0] ?? '';
      out[field] ??= detail.message;
    }
    return out;
  }
}

function retryAfterOf(response: Response): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === 'object' && value !== null && 'error' in value && 'message' in value;
}

/** The data of a 2xx answer; anything else thrown as an ApiError (a failed fetch: status 0). */
export async function call<T>(
  request: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await request;
  } catch {
    throw new ApiError(0, undefined, undefined);
  }
  const { data, error, response } = result;
  if (!response.ok) {
    throw new ApiError(
      response.status,
      isErrorBody(error) ? error : undefined,
      retryAfterOf(response),
    );
  }
  return data as T;
}

/** A fresh key for a POST that must not happen twice (trigger, redeploy, rollback). */
export const idempotencyKey = () => crypto.randomUUID();
