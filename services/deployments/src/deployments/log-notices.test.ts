import { testLogger } from '@platform/shared/testing';
import { Kafka, type KafkaMessage } from 'kafkajs';
import { LogNotices, NOTICE_TEXT_MAX_BYTES, noticeOf, type AppendedLines } from './log-notices';

/** What a replica's followers were told, notice by notice. */
function replica() {
  const told: [string, number, AppendedLines | undefined][] = [];
  // A client that is never started: `received` only reads what the topic handed over.
  const notices = new LogNotices({
    kafka: new Kafka({ brokers: ['127.0.0.1:9'], clientId: 'log-notices-test' }),
    logger: testLogger(),
    wake: (id, lastLine, lines) => told.push([id, lastLine, lines]),
  });
  return { notices, told };
}

const message = (value: string) => ({ value: Buffer.from(value) }) as KafkaMessage;

describe('log notices between replicas', () => {
  it('hand another replica the lines an append added, so its followers need not read them', () => {
    const { notices, told } = replica();
    const lines = { firstLine: 4, text: 'four\nfive\n' };

    notices.received(message(noticeOf('d1', 5, 'another replica', lines)));

    expect(told).toEqual([['d1', 5, lines]]);
  });

  it('carry no text past NOTICE_TEXT_MAX_BYTES: the other replica reads the store instead', () => {
    const { notices, told } = replica();
    const big = { firstLine: 1, text: `${'x'.repeat(NOTICE_TEXT_MAX_BYTES)}\n` };

    notices.received(message(noticeOf('d1', 1, 'another replica', big)));

    expect(told).toEqual([['d1', 1, undefined]]);
  });
});
