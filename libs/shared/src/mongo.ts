import mongoose, { type Connection } from 'mongoose';
import type { Logger } from 'pino';
import { notFound } from './errors';

export interface MongoOptions {
  url: string;
  /** Each service owns its database (contracts.md, Topology); tests use one per file. */
  dbName: string;
  logger: Logger;
  /** How long an operation waits for a server before failing (and the request answering 503). */
  serverSelectionTimeoutMS?: number;
}

/**
 * Opens a dedicated connection (not mongoose's global one), so a process or a test can hold
 * several. Commands are not buffered: with the server gone, a request fails fast with 503.
 */
export async function connectMongo(options: MongoOptions): Promise<Connection> {
  const connection = mongoose.createConnection(options.url, {
    dbName: options.dbName,
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 3_000,
    bufferCommands: false,
    autoIndex: false,
  });
  connection.on('disconnected', () => options.logger.warn('mongo disconnected'));
  connection.on('reconnected', () => options.logger.info('mongo reconnected'));
  await connection.asPromise();
  options.logger.info({ db: options.dbName }, 'mongo connected');
  return connection;
}

/** Readiness: the server answers a ping. */
export async function pingMongo(connection: Connection): Promise<void> {
  if (!connection.db) throw new Error('mongo is not connected');
  await connection.db.admin().ping();
}

/**
 * Declares a model once, beside its schema: `export const projectModel =
 * defineModel<ProjectDocument>('Project', projectSchema, 'projects')`. The result registers it on
 * a connection (the first call; later calls on that connection return the same model), so each
 * process or test connection gets its own.
 */
export function defineModel<T>(name: string, schema: mongoose.Schema, collection: string) {
  return (connection: Connection): mongoose.Model<T> =>
    (connection.models[name] as mongoose.Model<T> | undefined) ??
    // Typed by the caller: inferring it through model()'s generic overloads exhausts tsc's memory.
    (connection.model(name, schema, collection) as unknown as mongoose.Model<T>);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any model, whatever its document type
type AnyModel = mongoose.Model<any>;

/**
 * Creates each model's indexes (autoIndex is off so start-up decides when): a service's models
 * as its `models.ts` returns them, or a list.
 */
export async function syncIndexes(models: Record<string, AnyModel> | AnyModel[]): Promise<void> {
  for (const model of Object.values(models)) await model.createIndexes();
}

export const isDuplicateKeyError = (err: unknown): boolean =>
  (err as { code?: number })?.code === 11000;

const OBJECT_ID = /^[0-9a-f]{24}$/i;

/** Ids are opaque to clients; a malformed one is simply not found (404), never 400 or 500. */
export function parseObjectId(id: string, what = 'Resource'): mongoose.Types.ObjectId {
  if (!OBJECT_ID.test(id)) throw notFound(what);
  return new mongoose.Types.ObjectId(id);
}
