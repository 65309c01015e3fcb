import autocannon from 'autocannon';
import { ms, say } from './log';
import { Samples, distribution, type Distribution } from './stats';

export interface LoadOptions {
  /** A label for progress lines and results. */
  label: string;
  url: string;
  connections: number;
  /** Seconds; the run always stops by itself after this. */
  durationS: number;
  headers?: Record<string, string>;
  /** Several request shapes, taken in turn per connection (e.g. one cookie per session). */
  requests?: autocannon.Request[];
  method?: 'GET' | 'POST' | 'DELETE';
  /** Stop after this many requests, if that comes before the duration. */
  amount?: number;
  /** Called once per connection: e.g. gives each connection its own session cookie. */
  setupClient?: (client: autocannon.Client) => void;
  /** Open loop: requests per second across all connections (default: as fast as answered). */
  overallRate?: number;
}

export interface LoadResult {
  label: string;
  connections: number;
  durationS: number;
  requests: number;
  /** Completed requests per second over the run. */
  throughput: number;
  /** 2xx latencies measured per response (ms, exact: autocannon's own histogram is in whole ms). */
  latencyMs: Distribution;
  /** autocannon's own summary (whole milliseconds). */
  autocannon: { p50: number; p90: number; p99: number; mean: number; max: number };
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  non2xx: number;
}

/**
 * One bounded autocannon run (the count and the duration both stop it). Latencies are taken
 * from every 2xx response's own time, so percentiles are exact to the microsecond.
 */
export async function load(
  options: LoadOptions,
): Promise<{ result: LoadResult; samples: Float64Array }> {
  const samples = new Samples();
  say(`${options.label}: ${options.connections} connections for ${options.durationS} s`);
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationS,
    ...(options.amount !== undefined && { amount: options.amount }),
    method: options.method ?? 'GET',
    headers: options.headers,
    requests: options.requests,
    ...(options.setupClient && { setupClient: options.setupClient }),
    ...(options.overallRate !== undefined && { overallRate: options.overallRate }),
    timeout: 30,
    // Without a callback autocannon returns its tracker (an EventEmitter) made thenable.
  }) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, time: number) => {
    if (statusCode >= 200 && statusCode < 300) samples.push(time);
  });
  const result = await instance;
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) {
    statusCodes[code] = stats.count ?? 0;
  }
  const seconds = result.duration;
  const out: LoadResult = {
    label: options.label,
    connections: options.connections,
    durationS: ms(seconds, 2),
    requests: result.requests.total,
    throughput: ms(result.requests.total / seconds, 1),
    latencyMs: distribution(samples.toArray()),
    autocannon: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      mean: ms(result.latency.mean),
      max: result.latency.max,
    },
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
  };
  say(
    `${options.label}: ${out.throughput} req/s, p50 ${out.latencyMs.p50} ms, p99 ` +
      `${out.latencyMs.p99} ms, ${out.requests} requests, non-2xx ${out.non2xx}, errors ${out.errors}`,
  );
  return { result: out, samples: samples.toArray() };
}
