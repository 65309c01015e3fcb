import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { IdentityPool, UID_CLAIM_PREFIX, type SandboxIdentity } from './identity';

// A range of its own, so that no other test's sandboxes claim these uids meanwhile.
const BASE = 3_100_000_000;
const ROUNDS = 20;

let workspace: string;

beforeAll(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'identity-'));
});
afterAll(() => rm(workspace, { recursive: true, force: true }));

/** Another process of the host holding `uid` the way a pool does, until it is killed. */
async function holdInAnotherProcess(uid: number) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `require('node:net').createServer().listen('\\0${UID_CLAIM_PREFIX}${uid}', () => console.log('held'))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [first] = (await once(child.stdout!, 'data')) as [Buffer];
  expect(first.toString()).toContain('held');
  return child;
}

describe('IdentityPool', () => {
  it('never hands one uid to two pools at once, though both start looking at the same place', async () => {
    // Two pools are what two processes of the platform are: the pipeline's and the supervisor's.
    const a = new IdentityPool(BASE, 0);
    const b = new IdentityPool(BASE, 0);
    const held: SandboxIdentity[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      held.push(...(await Promise.all([a.take(workspace), b.take(workspace)])));
    }
    const uids = held.map((identity) => identity.uid);
    expect(new Set(uids).size).toBe(uids.length);
    held.forEach((identity) => identity.release());
  });

  it('passes over a uid another process holds, and takes it once that process is gone', async () => {
    const child = await holdInAnotherProcess(BASE + 500);
    const pool = new IdentityPool(BASE, 500);
    const first = await pool.take(workspace).finally(() => child.kill('SIGKILL'));
    expect(first.uid).toBe(BASE + 501);

    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    const second = await pool.take(workspace);
    expect(second.uid).toBe(BASE + 500);
    first.release();
    second.release();
  });

  it('hands a released uid out again and gives the workspace to the uid it holds', async () => {
    const pool = new IdentityPool(BASE, 900);
    const first = await pool.take(workspace);
    first.release();
    const again = await pool.take(workspace);
    expect(again.uid).toBe(BASE + 900);
    expect((await stat(workspace)).uid).toBe(again.uid);
    again.release();
  });
});
