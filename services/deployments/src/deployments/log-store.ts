import { insertOnce, isDuplicateKeyError } from '@platform/shared';
import type { Models } from '../models';
import type { DeploymentLogsDoc, LogChunkDoc } from './deployments.model';
import type { LogAppended } from './log-notices';
import { linesOf, trimOldest } from './log-trim';

export const TRIMMED_MARKER =
  '[... earlier output trimmed: the log keeps the most recent output ...]\n';
const MARKER_BYTES = Buffer.byteLength(TRIMMED_MARKER);
/** LOG_LIMIT_BYTES's default. */
export const DEFAULT_LOG_LIMIT_BYTES = 256 * 1024;

/** Whose a log is. */
export interface LogOwner {
  deploymentId: string;
  accountId: string;
  projectId: string;
  serviceId: string;
}

/** A line of a log and its number (from 1: the SSE event id). */
export interface LogLine {
  n: number;
  text: string;
}

/** What reading a whole log needs of its head. */
export type LogHead = Pick<DeploymentLogsDoc, '_id' | 'firstSeq' | 'trimmed'>;

/** What an append may also require of the head, and set on it, in the same update. */
export interface AppendOptions {
  /** Only while no later claim (the deployment's `attempts`) has written; then it is this one's. */
  attempt?: number;
  where?: Record<string, unknown>;
  set?: Record<string, unknown>;
  /** Whose it is, to make the head when missing; the caller removes it if the deployment is gone. */
  opening?: Omit<LogOwner, 'deploymentId'>;
}

/** A chunk's numbers: what the next chunk is numbered after. */
type ChunkEnd = Pick<LogChunkDoc, 'seq' | 'lastLine' | 'totalBytes'>;
/** Before the first chunk. */
const START: ChunkEnd = { seq: -1, lastLine: 0, totalBytes: 0 };
/** The newest chunk first: the index `{deploymentId, seq}` read backwards. */
const NEWEST_CHUNK = { seq: -1 } as const;

/** An append that lost the numbering to others `tries` times in a row. */
export class LogContention extends Error {
  constructor(deploymentId: string, tries: number) {
    super(`log ${deploymentId}: ${tries} appends at once took the next number`);
    this.name = 'LogContention';
  }
}

/** Racing appends of one log: a loser numbers again; each round one gets in (cancels may burst). */
const MAX_NUMBERING_TRIES = 32;

/**
 * Deployments' logs, append-only (deployments.model.ts). An append is two round trips: the head
 * checked (and its fields set) in one conditional update while the log's newest chunk is read,
 * then the new chunk inserted, numbered after that one. The chunks are the numbering's only
 * truth, and the unique `{deploymentId, seq}` its guard: a chunk exists only after the one it is
 * numbered after, so a crash between the two writes leaves no gap (at most the head's fields
 * set, and that write's output not in), and of two writers numbering at once one inserts and the
 * other numbers again. A follower reads only what it has not seen (`linesAfter`) and lines keep
 * their numbers for good. Beyond `limitBytes` the oldest chunks go (a chunk larger than that on
 * its own keeps its last lines), and the log then starts with TRIMMED_MARKER; the marker counts
 * toward the limit. Its writers: the pipeline's run while it holds the deployment (`attempt`),
 * LiveLogs after, and a cancel's reason (status-writes.ts) at any time, written before the status
 * changes: of appends racing, each numbers after the one that got in first. Each append that got
 * in is told to `appended` (LogNotices: the followers of every replica), with its lines.
 */
export class LogStore {
  private readonly keptBytes: number;

  constructor(
    private readonly models: Models,
    limitBytes = DEFAULT_LOG_LIMIT_BYTES,
    private readonly appended?: LogAppended,
  ) {
    if (limitBytes <= MARKER_BYTES * 2) throw new Error('the log limit is too small');
    this.keptBytes = limitBytes - MARKER_BYTES;
  }

  /** The log's head, made once (an existing one is kept). */
  async create(owner: LogOwner): Promise<void> {
    const { deploymentId, ...fields } = owner;
    await insertOnce(this.models.logs.create({ _id: deploymentId, ...fields }));
  }

  /** The log of one deployment, gone with it. */
  async remove(deploymentId: string): Promise<void> {
    await this.models.logs.deleteOne({ _id: deploymentId });
    await this.models.logChunks.deleteMany({ deploymentId });
  }

  /**
   * Appends `text` (whole lines: a missing last newline is added), if the head exists (or is
   * made, `opening`) and matches `options`. False when it does not (the deployment is gone, or a
   * later claim wrote).
   */
  async append(deploymentId: string, text: string, options: AppendOptions = {}): Promise<boolean> {
    let body = text && !text.endsWith('\n') ? `${text}\n` : text;
    let dropped = 0;
    if (Buffer.byteLength(body) > this.keptBytes) {
      const tail = Buffer.from(body).subarray(-this.keptBytes).toString('utf8');
      const kept = tail.slice(tail.indexOf('\n') + 1);
      dropped = linesOf(body).length - linesOf(kept).length;
      body = kept;
    }
    const filter = {
      _id: deploymentId,
      ...(options.attempt !== undefined && { attempt: { $lte: options.attempt } }),
      ...options.where,
    };
    const set = {
      ...(options.attempt !== undefined && { attempt: options.attempt }),
      ...(dropped > 0 && { trimmed: true }),
      ...options.set,
    };
    for (let tries = 1; ; tries++) {
      const [head, last] = await Promise.all([
        this.checkHead(filter, set, options.opening),
        body ? this.newestChunk(deploymentId) : null,
      ]);
      if (!head) {
        // Gone (a cascade), not merely fenced off: a chunk an earlier append inserted as the
        // cascade ran goes with it.
        if (!(await this.models.logs.exists({ _id: deploymentId }))) {
          await this.models.logChunks.deleteMany({ deploymentId });
        }
        return false;
      }
      if (!body) return true;
      const chunk = chunkAfter(last ?? START, body, dropped);
      const inserted = await insertOnce(
        this.models.logChunks.create({
          deploymentId,
          accountId: head.accountId,
          projectId: head.projectId,
          serviceId: head.serviceId,
          ...chunk,
        }),
      );
      if (inserted) {
        this.appended?.(deploymentId, chunk.lastLine, { firstLine: chunk.firstLine, text: body });
        const kept = chunk.totalBytes - head.droppedBytes;
        if (kept > this.keptBytes) {
          await trimOldest(this.models, head, kept - this.keptBytes, chunk.seq);
        }
        return true;
      }
      // Another append took the number: the head decides again whether this one may write.
      if (tries >= MAX_NUMBERING_TRIES) throw new LogContention(deploymentId, tries);
    }
  }

  /** The head as an append finds it: checked, its fields set, made first when `opening`. */
  private async checkHead(
    filter: Record<string, unknown>,
    set: Record<string, unknown>,
    opening?: AppendOptions['opening'],
  ): Promise<DeploymentLogsDoc | null> {
    const update = {
      ...(Object.keys(set).length > 0 && { $set: set }),
      ...(opening && { $setOnInsert: opening }),
    };
    if (Object.keys(update).length === 0) {
      return this.models.logs.findOne(filter).lean<DeploymentLogsDoc>();
    }
    const write = (upsert: boolean) =>
      this.models.logs
        .findOneAndUpdate(filter, update, { new: true, upsert })
        .lean<DeploymentLogsDoc>();
    // A racing upsert that lost (11000 where the server does not retry it) finds the head made.
    return write(opening !== undefined).catch((err: unknown) => {
      if (isDuplicateKeyError(err)) return write(false);
      throw err;
    });
  }

  /** The whole log as kept ('' when there is none); of the account only, when given. */
  async read(deploymentId: string, accountId?: string): Promise<string> {
    return this.textOf(await this.head(deploymentId, accountId));
  }

  /** What `textOf` needs of the log's head (null without one); of the account only, when given. */
  head(deploymentId: string, accountId?: string): Promise<LogHead | null> {
    return this.models.logs
      .findOne({ _id: deploymentId, ...(accountId && { accountId }) }, { firstSeq: 1, trimmed: 1 })
      .lean<LogHead>();
  }

  /**
   * The whole log as kept, its chunks read now: whatever was appended before the caller's earlier
   * reads is in it ('' without a head).
   */
  async textOf(head: LogHead | null): Promise<string> {
    if (!head) return '';
    const chunks = await this.models.logChunks
      .find({ deploymentId: head._id, seq: { $gte: head.firstSeq } }, { text: 1 })
      .sort({ seq: 1 })
      .lean<Pick<LogChunkDoc, 'text'>[]>();
    return (head.trimmed ? TRIMMED_MARKER : '') + chunks.map((c) => c.text).join('');
  }

  /** The last line's number (0 for an empty or missing log). */
  async lastLine(deploymentId: string): Promise<number> {
    return (await this.newestChunk(deploymentId))?.lastLine ?? 0;
  }

  /** The log's newest chunk, which the next one is numbered after (null before the first). */
  private newestChunk(deploymentId: string): Promise<ChunkEnd | null> {
    return this.models.logChunks
      .findOne({ deploymentId }, { seq: 1, lastLine: 1, totalBytes: 1 })
      .sort(NEWEST_CHUNK)
      .lean<ChunkEnd>();
  }

  /** The lines after line `after` that are still kept, in order, numbered. */
  async linesAfter(deploymentId: string, after: number): Promise<LogLine[]> {
    const chunks = await this.models.logChunks
      .find({ deploymentId, lastLine: { $gt: after } }, { firstLine: 1, text: 1 })
      .sort({ seq: 1 })
      .lean<Pick<LogChunkDoc, 'firstLine' | 'text'>[]>();
    const lines: LogLine[] = [];
    for (const chunk of chunks) {
      linesOf(chunk.text).forEach((text, i) => {
        const n = chunk.firstLine + i;
        if (n > after) lines.push({ n, text });
      });
    }
    return lines;
  }

  async deleteOf(filter: { accountId: string; projectId: string; serviceId?: string }) {
    await this.models.logs.deleteMany(filter);
    await this.models.logChunks.deleteMany(filter);
  }
}

/** The chunk of `body` after `last`: the next number, its lines after the ones `dropped`. */
function chunkAfter(last: ChunkEnd, body: string, dropped: number) {
  const bytes = Buffer.byteLength(body);
  const firstLine = last.lastLine + dropped + 1;
  return {
    seq: last.seq + 1,
    firstLine,
    lastLine: firstLine + linesOf(body).length - 1,
    text: body,
    bytes,
    totalBytes: last.totalBytes + bytes,
  };
}
