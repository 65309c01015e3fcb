import { Types, type Connection } from 'mongoose';
import { connectMongo, syncIndexes, writeWithoutRelay } from '@platform/shared';
import { testInfraUrls, testLogger, uniqueName } from '@platform/shared/testing';
import { createModels, type Models } from '../models';
import { createProjectsRepository } from '../projects/projects.repository';
import { isUniqueViolation } from './name-conflict';

let connection: Connection;
let models: Models;

beforeAll(async () => {
  connection = await connectMongo({
    url: testInfraUrls().mongoUrl,
    dbName: uniqueName('projects_names'),
    logger: testLogger(),
  });
  models = createModels(connection);
  await syncIndexes([models.projects]);
});

afterAll(async () => {
  await connection?.dropDatabase();
  await connection?.close();
});

// Against the real server: what it answers is exactly what this has to recognise.
describe('isUniqueViolation', () => {
  it('recognises an insert that breaks the unique name index', async () => {
    const projects = createProjectsRepository(models.projects, writeWithoutRelay);
    const accountId = uniqueName('account');
    await projects.insert({ accountId, name: 'dup', description: '' });

    const error = await projects
      .insert({ accountId, name: 'DUP', description: '' })
      .catch((e: unknown) => e);

    expect(isUniqueViolation(error)).toBe(true);
  });

  it('recognises an update that breaks the unique name index, as FerretDB reports it', async () => {
    const projects = createProjectsRepository(models.projects, writeWithoutRelay);
    const accountId = uniqueName('account');
    await projects.insert({ accountId, name: 'first', description: '' });
    const second = await projects.insert({ accountId, name: 'second', description: '' });

    // Straight to the repository: the service checks first, this is the race it guards against.
    const error = await projects
      .updateLive(accountId, new Types.ObjectId(second.id), { name: 'First' })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(Error);
    expect(isUniqueViolation(error)).toBe(true);
  });

  it('does not mistake other errors for one', () => {
    expect(isUniqueViolation(new Error('connection refused'))).toBe(false);
    expect(isUniqueViolation({ code: 121 })).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });
});
