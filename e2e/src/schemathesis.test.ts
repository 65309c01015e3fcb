import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WebClient, baseUrl } from './support/client';

const REPO_ROOT = path.resolve(__dirname, '../..');
/** Examples per operation and phase: the run stays within a few minutes on two cores. */
const MAX_EXAMPLES = process.env.SCHEMATHESIS_MAX_EXAMPLES ?? '25';

function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/**
 * Schemathesis (scripts/infra/schemathesis.sh installs the pinned version into a cached virtual
 * environment) against the stack's own /api/openapi.json, signed in (the session is the
 * document's `sessionCookie` scheme, e2e/schemathesis.toml), with every check: the server does
 * what the document says, and the document says what the server does. Logout is left out: it
 * would end the session the run signs in with. The seed is fixed (SCHEMATHESIS_SEED chooses
 * another), so a run is repeatable.
 */
describe('schemathesis against the running stack', () => {
  it('finds no failure with every check', async () => {
    const install = await run('bash', ['scripts/infra/schemathesis.sh']);
    if (install.code !== 0) throw new Error(`installing schemathesis failed:\n${install.output}`);
    const st = install.output.trim().split('\n').pop()!;
    const client = new WebClient();
    await client.signIn();

    const session = client.cookie('platform.sid');
    if (!session) throw new Error('signing in gave no session cookie');

    // Schemathesis keeps a cache in its working directory: a temporary one, not the repository.
    const workDir = await mkdtemp(path.join(tmpdir(), 'schemathesis-'));
    const result = await run(
      st,
      [
        '--config-file',
        path.join(REPO_ROOT, 'e2e/schemathesis.toml'),
        'run',
        `${baseUrl()}/api/openapi.json`,
        '--url',
        baseUrl(),
        '--checks',
        'all',
        '--max-examples',
        MAX_EXAMPLES,
        '--exclude-path',
        '/api/accounts/logout',
        '--no-color',
        '--seed',
        process.env.SCHEMATHESIS_SEED ?? '20261123',
      ],
      { cwd: workDir, env: { PLATFORM_SESSION: session } },
    ).finally(() => rm(workDir, { recursive: true, force: true }));

    if (result.code !== 0) throw new Error(`schemathesis found failures:\n${result.output}`);
    expect(result.output).toMatch(/(\d+) generated, \1 passed/);
  }, 600_000);
});
