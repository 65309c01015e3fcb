import { DEPLOYMENT_STAGE as STAGE, type Logger } from '@platform/shared';
import type { AppendedLines } from './log-notices';
import type { LogLine, LogStore } from './log-store';
import { linesOf } from './log-trim';
import { isFinal, type DeploymentStatus } from './status';

/** What a follower is sent, in order. */
export interface FollowerSink {
  line(line: LogLine): void;
  status(status: DeploymentStatus): void;
  /** After the final status: nothing more will come. */
  end(): void;
  /** Runs `send`, whose items go out together (one write to the connection, not one each). */
  together?(send: () => void): void;
}

type Item = { line: LogLine } | { status: DeploymentStatus } | { end: true };

interface Follower {
  sink: FollowerSink;
  /** The last line number sent. */
  sent: number;
  /** What came from the tail while the follower's backlog was being read, in order. */
  waiting?: Item[];
}

/** What makes a tail read: a notice of new lines (lines only), or a status event or the fallback poll (the status too). */
type Wake = 'lines' | 'full';

/**
 * One deployment's log as followed in this replica, whatever the number of followers, each of
 * whom gets the new lines. It reads the store for the lines after the last it has when woken: by
 * a notice of an append (`appended`, lines only), by a status event (`announce`), or, should a
 * notice be lost, by its fallback poll `pollMs` after its last read (the deployment's status
 * too). One read at a time: a wake during a read makes one more read after it. It stops when its
 * last follower leaves or after the final status (read after it, the lines written before it
 * have been read too).
 */
class Tail {
  readonly followers = new Set<Follower>();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private reading = false;
  /** A wake that came during a read: another read follows it. */
  private again?: Wake;
  /** Status changes announced by events since the last read began (a short DEPLOYING included). */
  private readonly announced: DeploymentStatus[] = [];
  /**
   * Lines that notices brought, sent together once this turn of the event loop is over: the
   * notices of one Kafka batch (or of a burst of appends) cost each follower one write, not one
   * each. Anything else the tail sends goes after them.
   */
  private pending: Item[] = [];
  private flushing?: NodeJS.Immediate;

  constructor(
    private readonly deploymentId: string,
    private lastLine: number,
    private status: DeploymentStatus,
    private readonly deps: TailDeps,
    private readonly onDone: () => void,
  ) {
    this.schedule();
  }

  get position(): { lastLine: number; status: DeploymentStatus } {
    return { lastLine: this.lastLine, status: this.status };
  }

  /** A status event of the deployment: its status goes out at once, after the lines before it. */
  announce(status: DeploymentStatus): void {
    this.announced.push(status);
    this.wake('full');
  }

  /**
   * The log now ends at `lastLine` (a notice): the lines after this tail's last are read now, or,
   * when the notice has them (an append of this replica) and they come right after this tail's
   * last, sent as they are, with no read, unless a read or a status is under way (the order of
   * lines and statuses is the reads').
   */
  appended(lastLine: number, lines?: AppendedLines): void {
    if (lastLine <= this.lastLine || this.stopped) return;
    if (!lines || lines.firstLine !== this.lastLine + 1 || this.reading || this.announced.length) {
      this.wake('lines');
      return;
    }
    const items: Item[] = linesOf(lines.text).map((text, i) => ({
      line: { n: lines.firstLine + i, text },
    }));
    this.lastLine = lastLine;
    this.pending.push(...items);
    this.flushing ??= setImmediate(() => this.send([]));
    clearTimeout(this.timer);
    this.schedule();
  }

  /** Sends what notices brought, then `items`, to every follower. */
  send(items: Item[]): void {
    clearImmediate(this.flushing);
    this.flushing = undefined;
    const all = this.pending.length > 0 ? [...this.pending, ...items] : items;
    this.pending = [];
    if (all.length === 0) return;
    for (const follower of this.followers) deliver(follower, all);
  }

  stop(): void {
    clearImmediate(this.flushing);
    clearTimeout(this.timer);
    this.stopped = true;
    this.onDone();
  }

  private schedule() {
    this.timer = setTimeout(() => void this.read('full'), this.deps.pollMs);
  }

  private wake(kind: Wake) {
    if (this.stopped) return;
    if (this.reading) {
      if (this.again !== 'full') this.again = kind;
      return;
    }
    clearTimeout(this.timer);
    void this.read(kind);
  }

  private async read(kind: Wake) {
    this.reading = true;
    this.again = undefined;
    // Only what was announced before the lines are read: a status announced while they are being
    // read may have come with lines this read missed, and goes out after the next read.
    const announced = this.announced.splice(0);
    try {
      // A notice's read needs no status: status changes come by their events (or the poll).
      const status = kind === 'full' ? await this.deps.statusOf(this.deploymentId) : undefined;
      const lines = await this.deps.logs.linesAfter(this.deploymentId, this.lastLine);
      if (lines.length > 0) this.lastLine = lines[lines.length - 1]!.n;
      const items: Item[] = lines.map((line) => ({ line }));
      // What events announced, then what the document says now; never back to an earlier stage.
      for (const next of [...announced, ...(status ? [status] : [])]) {
        if (next === this.status || STAGE[next] < STAGE[this.status]) continue;
        this.status = next;
        items.push({ status: next });
      }
      const done = status === null || isFinal(this.status);
      if (done) items.push({ end: true });
      this.send(items);
      if (done) this.followers.clear();
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, 'could not read a followed log');
    } finally {
      this.reading = false;
    }
    if (this.followers.size === 0) this.stop();
    else if (!this.stopped) {
      const again = this.announced.length > 0 ? 'full' : this.again;
      if (again) void this.read(again);
      else this.schedule();
    }
  }
}

/**
 * Sends the follower what it has not had, in order: lines past its last, status changes, the
 * end (or keeps them while it reads its backlog).
 */
function deliver(follower: Follower, items: Item[]) {
  if (follower.waiting) {
    follower.waiting.push(...items);
    return;
  }
  if (follower.sink.together) follower.sink.together(() => send(follower, items));
  else send(follower, items);
}

function send(follower: Follower, items: Item[]) {
  for (const item of items) {
    if ('line' in item) {
      if (item.line.n <= follower.sent) continue;
      follower.sink.line(item.line);
      follower.sent = item.line.n;
    } else if ('status' in item) {
      follower.sink.status(item.status);
    } else {
      follower.sink.end();
    }
  }
}

interface TailDeps {
  logs: Pick<LogStore, 'linesAfter' | 'lastLine'>;
  /** The deployment's status now, or null when it is gone. */
  statusOf(deploymentId: string): Promise<DeploymentStatus | null>;
  /** LOG_FOLLOW_POLL: how long after its last read a tail reads again unwoken (a notice lost). */
  pollMs: number;
  logger: Logger;
}

/**
 * The live logs of the SSE endpoint (contracts.md "Following a deployment"): followers of one
 * deployment share one Tail, so a hundred followers cost one read per append, not a hundred. A follower
 * that joins (or comes back with Last-Event-ID) first reads the lines after its last one from
 * the store, then takes the tail's.
 */
export class LogFollowers {
  private readonly tails = new Map<string, Tail>();

  constructor(private readonly deps: TailDeps & { stopping: AbortSignal }) {
    deps.stopping.addEventListener('abort', () => this.closeAll(), { once: true });
  }

  /** Tails running now (one per followed deployment). */
  get size(): number {
    return this.tails.size;
  }

  /**
   * Follows the deployment's log after line `after`, its status first. Resolves with `close`
   * (the client left). The deployment must exist (the route checked it).
   */
  async follow(deploymentId: string, after: number, sink: FollowerSink): Promise<() => void> {
    const follower: Follower = { sink, sent: after, waiting: [] };
    const tail = await this.tailOf(deploymentId);
    tail.followers.add(follower);
    const close = () => {
      tail.followers.delete(follower);
      if (tail.followers.size === 0) tail.stop();
    };
    try {
      // The lines so far, then the status now; then whatever the tail brought meanwhile.
      const { status } = tail.position;
      const backlog = await this.deps.logs.linesAfter(deploymentId, after);
      const waiting = follower.waiting!;
      follower.waiting = undefined;
      const final = isFinal(status);
      deliver(follower, [
        ...backlog.map((line) => ({ line })),
        { status },
        // Final already: everything was written before it, and is in the backlog.
        ...(final ? [{ end: true as const }] : waiting),
      ]);
      if (final) close();
    } catch (err) {
      close();
      throw err;
    }
    return close;
  }

  /** A status event (every replica sees every one): the deployment's followers here get it. */
  statusChanged(deploymentId: string, status: DeploymentStatus): void {
    this.tails.get(deploymentId)?.announce(status);
  }

  /** A notice of an append (LogNotices, from any replica): the log now ends at `lastLine`. */
  appended(deploymentId: string, lastLine: number, lines?: AppendedLines): void {
    this.tails.get(deploymentId)?.appended(lastLine, lines);
  }

  /** Ends every stream (the service is shutting down). */
  closeAll(): void {
    for (const tail of [...this.tails.values()]) {
      tail.send([{ end: true }]);
      tail.followers.clear();
      tail.stop();
    }
  }

  private async tailOf(deploymentId: string): Promise<Tail> {
    const running = this.tails.get(deploymentId);
    if (running) return running;
    const status = await this.deps.statusOf(deploymentId);
    const lastLine = await this.deps.logs.lastLine(deploymentId);
    // Another follower's tail may have started meanwhile.
    const raced = this.tails.get(deploymentId);
    if (raced) return raced;
    const tail: Tail = new Tail(deploymentId, lastLine, status ?? 'CANCELLED', this.deps, () => {
      if (this.tails.get(deploymentId) === tail) this.tails.delete(deploymentId);
    });
    this.tails.set(deploymentId, tail);
    return tail;
  }
}
