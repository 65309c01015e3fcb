import { AppError, serviceUnavailable, type ErrorBody } from './errors';
import { IDENTITY_HEADER, signIdentity, type ServiceName } from './http/identity';
import { REQUEST_ID_HEADER } from './logger';

export interface InternalClientOptions {
  /** e.g. http://projects:4002 */
  baseUrl: string;
  /** The service at `baseUrl`: the identity header is made for it (its audience) alone. */
  service: ServiceName;
  internalSecret: string;
  timeoutMs?: number;
}

export interface InternalRequest {
  accountId: string;
  requestId?: string;
}

/**
 * Calls another service over HTTP as the given account, with the identity header signed for that
 * service and this request (method, path and query as sent), and the request id. A service that
 * does not answer is 503; its own JSON errors come back as AppErrors.
 */
export function createInternalClient(options: InternalClientOptions) {
  const timeoutMs = options.timeoutMs ?? 3_000;
  return {
    async getJson<T>(path: string, request: InternalRequest): Promise<T> {
      const url = new URL(path, options.baseUrl);
      const target = { aud: options.service, method: 'GET', path: `${url.pathname}${url.search}` };
      const headers: Record<string, string> = {
        accept: 'application/json',
        [IDENTITY_HEADER]: signIdentity(request.accountId, target, options.internalSecret),
      };
      if (request.requestId) headers[REQUEST_ID_HEADER] = request.requestId;
      let response: Response;
      try {
        response = await fetch(url, {
          headers,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch {
        throw serviceUnavailable();
      }
      const body = (await response.json().catch(() => null)) as unknown;
      if (response.ok) return body as T;
      const error = body as Partial<ErrorBody> | null;
      if (response.status >= 500 || !error?.error) throw serviceUnavailable();
      throw new AppError(error.error, response.status, error.message ?? '', error.details);
    },

    /** As getJson, but null when the service answers 404 (not there, or not the account's). */
    async findJson<T>(path: string, request: InternalRequest): Promise<T | null> {
      try {
        return await this.getJson<T>(path, request);
      } catch (err) {
        if (err instanceof AppError && err.status === 404) return null;
        throw err;
      }
    },
  };
}

export type InternalClient = ReturnType<typeof createInternalClient>;

/** The projects service's client, made from the settings every caller of it has. */
export function projectsClient(config: { PROJECTS_URL: string; INTERNAL_SECRET: string }) {
  return createInternalClient({
    baseUrl: config.PROJECTS_URL,
    service: 'projects',
    internalSecret: config.INTERNAL_SECRET,
  });
}
