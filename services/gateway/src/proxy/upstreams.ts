import type { ServiceName } from '@platform/shared';

/** The service a path goes to: the audience its identity header is signed for. */
export type Upstream = ServiceName;

// docs/architecture.md, "Routing at the gateway": the first match wins, so the deeper project
// paths come before /api/projects. Paths are forwarded unchanged.
const ROUTES: [RegExp, Upstream][] = [
  [/^\/api\/accounts(\/|$)/, 'auth'],
  [/^\/api\/projects\/[^/]+\/services\/[^/]+\/deployments(\/|$)/, 'deployments'],
  [/^\/api\/projects\/[^/]+\/webhooks(\/|$)/, 'webhooks'],
  [/^\/api\/projects(\/|$)/, 'projects'],
];

// `.` and `..` segments (also percent-encoded) could walk a forwarded path out of the prefix
// that chose its service; clients send normalised paths, so such a path is simply not routed.
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

/** The service that serves `path`, or undefined when the gateway routes it nowhere. */
export function upstreamFor(path: string): Upstream | undefined {
  if (DOT_SEGMENT.test(path) || /%2f|%5c|\\/i.test(path)) return undefined;
  return ROUTES.find(([pattern]) => pattern.test(path))?.[1];
}
