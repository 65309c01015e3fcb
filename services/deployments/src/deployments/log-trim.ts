import type { Models } from '../models';
import type { DeploymentLogsDoc, LogChunkDoc } from './deployments.model';

/** The lines of whole-line text. */
export const linesOf = (text: string) => text.split('\n').slice(0, -1);

type Sized = Pick<LogChunkDoc, '_id' | 'seq' | 'bytes'>;

/**
 * Drops `excess` bytes of a log's oldest output (LogStore's limit): whole chunks while one is no
 * more than what remains to drop, then the first lines of the next (its tail is kept, under its
 * line numbers); never the chunk `newest` just inserted, nor any after it. Reads only the oldest
 * chunks, as many as the excess takes (an append's excess is about its own size), so that
 * frequent small appends keep it cheap however many chunks the log has.
 */
export async function trimOldest(
  models: Models,
  head: DeploymentLogsDoc,
  excess: number,
  newest: number,
): Promise<void> {
  const chunks = await oldestChunks(models, head, newest, excess);
  let left = excess;
  let firstSeq = head.firstSeq;
  let cut: { chunk: Sized; bytes: number } | undefined;
  for (const chunk of chunks) {
    if (left <= 0) break;
    if (chunk.bytes <= left) {
      left -= chunk.bytes;
      firstSeq = chunk.seq + 1;
    } else {
      cut = { chunk, bytes: left };
      left = 0;
    }
  }
  if (firstSeq === head.firstSeq && !cut) return;
  let removed = excess - left;
  if (cut) {
    const { text, firstLine } = (await models.logChunks
      .findById(cut.chunk._id, { text: 1, firstLine: 1 })
      .lean<Pick<LogChunkDoc, 'text' | 'firstLine'>>())!;
    const rest = Buffer.from(text).subarray(cut.bytes).toString('utf8');
    const kept = rest.slice(rest.indexOf('\n') + 1);
    const keptOfChunk = Buffer.byteLength(kept);
    removed += cut.chunk.bytes - keptOfChunk - cut.bytes;
    await models.logChunks.updateOne(
      { _id: cut.chunk._id },
      {
        $set: {
          text: kept,
          bytes: keptOfChunk,
          firstLine: firstLine + linesOf(text).length - linesOf(kept).length,
        },
      },
    );
  }
  const updated = await models.logs.updateOne(
    { _id: head._id, firstSeq: head.firstSeq },
    { $set: { firstSeq, trimmed: true }, $inc: { droppedBytes: removed } },
  );
  if (updated.modifiedCount === 1 && firstSeq > head.firstSeq) {
    await models.logChunks.deleteMany({ deploymentId: head._id, seq: { $lt: firstSeq } });
  }
}

/** The oldest chunks kept, before `newest`, until their bytes pass `bytes` (or all of them). */
async function oldestChunks(
  models: Models,
  head: DeploymentLogsDoc,
  newest: number,
  bytes: number,
): Promise<Sized[]> {
  const found: Sized[] = [];
  let total = 0;
  const cursor = models.logChunks
    .find(
      { deploymentId: head._id, seq: { $gte: head.firstSeq, $lt: newest } },
      { seq: 1, bytes: 1 },
    )
    .sort({ seq: 1 })
    .batchSize(16)
    .lean<Sized[]>()
    .cursor();
  try {
    for await (const chunk of cursor) {
      found.push(chunk);
      total += chunk.bytes;
      if (total > bytes) break;
    }
  } finally {
    await cursor.close();
  }
  return found;
}
