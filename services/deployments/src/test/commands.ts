import mongoose from 'mongoose';
import { createModels, type Models } from '../models';

/** A command the driver sent, and when it started and succeeded (ms, performance.now()). */
export interface SentCommand {
  name: string;
  collection: string | null;
  start: number;
  end: number;
}

/**
 * The service's models on a connection of their own to `dbName` that records every command the
 * driver sends (its command monitoring), their indexes made before anything is recorded. `sent`
 * holds what succeeded since the last `reset()`.
 */
export async function monitoredModels(url: string, dbName: string) {
  const connection = await mongoose
    .createConnection(url, { dbName, monitorCommands: true })
    .asPromise();
  const models: Models = createModels(connection);
  await Promise.all(Object.values(models).map((model) => model.init()));
  let sent: SentCommand[] = [];
  const started = new Map<number, Omit<SentCommand, 'end'>>();
  const client = connection.getClient();
  client.on('commandStarted', (e) => {
    const target = (e.command as Record<string, unknown>)[e.commandName];
    started.set(e.requestId, {
      name: e.commandName,
      collection: typeof target === 'string' ? target : null,
      start: performance.now(),
    });
  });
  client.on('commandSucceeded', (e) => {
    const command = started.get(e.requestId);
    started.delete(e.requestId);
    if (command) sent.push({ ...command, end: performance.now() });
  });
  return {
    models,
    get sent(): readonly SentCommand[] {
      return sent;
    },
    reset: () => {
      sent = [];
    },
    close: () => connection.close(),
  };
}

/**
 * The longest chain of commands each started after the one before it ended: the round trips
 * waited for one after another (overlapping ones count once), as bench/round-trips counts them.
 */
export function sequentialRoundTrips(commands: readonly { start: number; end: number }[]): number {
  let count = 0;
  let lastEnd = -Infinity;
  for (const c of [...commands].sort((a, b) => a.end - b.end)) {
    if (c.start >= lastEnd) {
      count++;
      lastEnd = c.end;
    }
  }
  return count;
}
