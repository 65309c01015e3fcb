import type { Server } from 'node:http';
import type { Logger } from 'pino';

/**
 * Graceful shutdown. Closers run in reverse order of registration, so the HTTP server (registered
 * last) stops accepting first and finishes its in-flight requests before consumers, relays and
 * connections close. A second signal, or the time limit, ends the process at once.
 */
export class Lifecycle {
  private readonly closers: { name: string; close: () => Promise<unknown> | unknown }[] = [];
  private readonly stop = new AbortController();

  /**
   * Aborted as shutdown begins, before any closer runs: what holds a response open for long (a
   * log stream) ends it at once, so the HTTP server's close does not wait for it.
   */
  get stopping(): AbortSignal {
    return this.stop.signal;
  }
  private shuttingDown?: Promise<void>;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs = 15_000,
  ) {}

  onShutdown(name: string, close: () => Promise<unknown> | unknown): void {
    this.closers.push({ name, close });
  }

  shutdown(reason: string): Promise<void> {
    this.stop.abort();
    this.shuttingDown ??= (async () => {
      this.logger.info({ reason }, 'shutting down');
      for (const { name, close } of [...this.closers].reverse()) {
        try {
          await close();
        } catch (err) {
          this.logger.error({ err, name }, 'error while closing');
        }
      }
      this.logger.info('shut down');
    })();
    return this.shuttingDown;
  }

  /** SIGTERM/SIGINT: shut down and exit 0; exit 1 if it takes longer than the time limit. */
  handleSignals(): void {
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.shuttingDown) {
        this.logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      const timer = setTimeout(() => {
        this.logger.error('shutdown took too long: exiting');
        process.exit(1);
      }, this.timeoutMs);
      timer.unref();
      void this.shutdown(signal).then(() => process.exit(0));
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
}

/**
 * Stops accepting connections and resolves once in-flight requests have finished. Idle
 * keep-alive connections are closed at once; busy ones after their response. After
 * `timeoutMs`, remaining connections are cut.
 */
export function closeHttpServer(server: Server, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!server.listening) {
      resolve();
      return;
    }
    const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
    const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
    server.close((err) => {
      clearInterval(idleSweep);
      clearTimeout(force);
      if (err) reject(err);
      else resolve();
    });
    server.closeIdleConnections();
  });
}
