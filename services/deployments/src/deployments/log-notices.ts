import { randomUUID } from 'node:crypto';
import { createProducer, ensureTopics, type Logger } from '@platform/shared';
import type { Kafka, KafkaMessage, Producer } from 'kafkajs';
import { z } from 'zod';

/**
 * The topic of log notices: "deployment D's log now ends at line N", keyed by the deployment.
 * Deployments' own (scripts/infra/kafka-acls.sh): no other service writes or reads it.
 */
export const LOG_APPENDED_TOPIC = 'deployment.log-appended';

/**
 * A notice is worth something for milliseconds: the broker keeps an hour of them (a segment an
 * hour, so that old ones do go). The log itself is MongoDB's; a notice carries the lines it
 * announces (already masked, as stored) only when they are small, so that the other replicas'
 * followers get them without a read of the store.
 */
const TOPIC_CONFIG = { 'retention.ms': '3600000', 'segment.ms': '3600000' };
/** The most text a notice carries (a writer's batch is at most 64 KiB); more is read instead. */
export const NOTICE_TEXT_MAX_BYTES = 64 * 1024;

/** Sends not yet answered beyond which notices are dropped (a broker away): best effort. */
const MAX_IN_FLIGHT = 1_000;
/** At most one warning this often while notices cannot be sent. */
const WARN_EVERY_MS = 30_000;

const noticeSchema = z.object({
  deploymentId: z.string().min(1),
  lastLine: z.number().int().nonnegative(),
  from: z.string(),
  /** The lines appended, from `firstLine` on, when they were small enough to carry. */
  firstLine: z.number().int().positive().optional(),
  text: z.string().optional(),
});
type Notice = z.infer<typeof noticeSchema>;

/** The lines an append added: whole lines from `firstLine` on. */
export interface AppendedLines {
  firstLine: number;
  text: string;
}

/**
 * Told of every append: the deployment's log now ends at `lastLine`; `lines` are what it added,
 * when the teller has them (an append of this process, or a notice that carried them).
 */
export type LogAppended = (deploymentId: string, lastLine: number, lines?: AppendedLines) => void;

/**
 * Log appends, told to the followers of every replica (docs/architecture.md, "Live logs"): an
 * append in this process wakes its own followers at once (`appended`), and goes out on
 * LOG_APPENDED_TOPIC to the other replicas, whose single status watch (compose.ts) hands it to
 * `received`. Best effort, not through an outbox: a notice lost (the broker away, a send
 * dropped) costs its followers at most their fallback poll (LOG_FOLLOW_POLL), never a line, since
 * a tail takes a notice's lines only when they follow its last one, and otherwise reads from the
 * store whatever comes after it.
 */
export class LogNotices {
  /** This process: its own notices come back from the topic, and are already handled. */
  private readonly self = randomUUID();
  private readonly producer: Producer;
  private inFlight = 0;
  private lastWarning = 0;

  constructor(
    private readonly options: {
      kafka: Kafka;
      logger: Logger;
      /** Where a notice goes in this process (the followers). */
      wake: LogAppended;
    },
  ) {
    this.producer = createProducer(options.kafka);
  }

  /** Creates the topic if missing and connects the producer. */
  async start(): Promise<void> {
    await ensureTopics(this.options.kafka, [LOG_APPENDED_TOPIC], 3, TOPIC_CONFIG);
    await this.producer.connect();
  }

  async stop(): Promise<void> {
    await this.producer.disconnect();
  }

  /**
   * An append of this process: its followers now, with the lines (they need not read them), the
   * other replicas' through the topic (with the lines too, up to NOTICE_TEXT_MAX_BYTES; beyond,
   * they read the store).
   */
  readonly appended: LogAppended = (deploymentId, lastLine, lines) => {
    this.options.wake(deploymentId, lastLine, lines);
    if (this.inFlight >= MAX_IN_FLIGHT) return this.warn('too many log notices waiting: dropped');
    this.inFlight++;
    this.producer
      .send({
        topic: LOG_APPENDED_TOPIC,
        acks: 1,
        messages: [
          { key: deploymentId, value: noticeOf(deploymentId, lastLine, this.self, lines) },
        ],
      })
      .catch((err: unknown) => this.warn(`a log notice was lost: ${(err as Error).message}`))
      .finally(() => this.inFlight--);
  };

  /** A message of the topic (every replica's, this one's included). */
  readonly received = (message: KafkaMessage): void => {
    let notice: Notice;
    try {
      notice = noticeSchema.parse(JSON.parse(message.value?.toString('utf8') ?? ''));
    } catch {
      return this.warn('skipping a malformed log notice');
    }
    if (notice.from === this.self) return;
    const { firstLine, text } = notice;
    const lines = firstLine !== undefined && text !== undefined ? { firstLine, text } : undefined;
    this.options.wake(notice.deploymentId, notice.lastLine, lines);
  };

  private warn(message: string) {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.options.logger.warn(message);
  }
}

/** A notice as sent: the lines with it when they are small enough. */
export function noticeOf(
  deploymentId: string,
  lastLine: number,
  from: string,
  lines?: AppendedLines,
): string {
  const carried = lines && Buffer.byteLength(lines.text) <= NOTICE_TEXT_MAX_BYTES ? lines : {};
  const notice: Notice = { deploymentId, lastLine, from, ...carried };
  return JSON.stringify(notice);
}
