import { randomBytes } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@platform/shared/testing';
import { isProcessRunning } from '../test/processes';
import {
  Sandbox,
  SandboxUnavailableError,
  type SandboxOptions,
  type SandboxRunOptions,
} from './sandbox';
import { TEST_LIMITS, testSandboxOptions } from './testing';

const OPTIONS: SandboxOptions = testSandboxOptions();
const REPOSITORY = path.resolve(__dirname, '../../../..');

let sandbox: Sandbox;
let scratch: string;

beforeAll(async () => {
  sandbox = await Sandbox.create(OPTIONS);
  scratch = await mkdtemp(path.join(os.tmpdir(), 'sandbox-test-'));
  await chmod(scratch, 0o755);
});
afterAll(async () => {
  await sandbox?.close();
  await rm(scratch, { recursive: true, force: true });
});

async function newWorkspace(): Promise<string> {
  return mkdtemp(path.join(scratch, 'workspace-'));
}

/** Runs `command` in a fresh workspace; resolves with the result and everything it printed. */
async function run(command: string, overrides: Partial<SandboxRunOptions> = {}) {
  let output = '';
  const result = await sandbox.run({
    workspace: await newWorkspace(),
    command,
    env: { PATH: sandbox.defaultPath, HOME: '/workspace' },
    limits: { ...TEST_LIMITS, timeoutMs: 20_000 },
    network: false,
    onOutput: (chunk) => (output += chunk),
    ...overrides,
  });
  return { result, output };
}

/** Host pids of the running processes whose command line is exactly `argv`. */
async function pidsRunning(argv: string[]): Promise<number[]> {
  const wanted = `${argv.join('\0')}\0`;
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline === wanted && (await isProcessRunning(Number(name)))) pids.push(Number(name));
  }
  return pids;
}

/** A `sleep` nobody else runs, to find a sandbox's processes from the host. */
const uniqueSleep = () => ['sleep', `${1000 + Math.floor(Math.random() * 1e6)}.${process.pid}`];

describe('Sandbox: what the code can see', () => {
  it('shows a build nothing of the platform: its environment, processes, files or other workspaces', async () => {
    const envCanary = `env-canary-${randomBytes(8).toString('hex')}`;
    const fileCanary = `file-canary-${randomBytes(8).toString('hex')}`;
    process.env.SANDBOX_TEST_CANARY = envCanary;
    const outside = path.join(scratch, 'outside.txt');
    await writeFile(outside, fileCanary, { mode: 0o644 });
    const other = await newWorkspace();
    await writeFile(path.join(other, 'secret.txt'), fileCanary, { mode: 0o644 });
    await chmod(other, 0o755);
    const probes = [
      'cat /proc/1/environ',
      'for f in /proc/*/environ; do cat "$f"; done',
      'cat /proc/*/cmdline',
      `cat ${outside}`,
      `cat ${path.join(other, 'secret.txt')}`,
      `cat ${path.join(REPOSITORY, 'package.json')}`,
      'ls -la /root /work',
      // Built from two halves, so the command line itself (which /proc shows) does not hold it.
      `half=${fileCanary.slice(0, 10)}; grep -r "$half${fileCanary.slice(10)}" /tmp /etc /run /workspace`,
      'ls /proc | grep -c "^[0-9]" | sed "s/^/processes: /"',
      'echo probes-done',
    ];

    const { result, output } = await run(probes.join('; '), {
      env: { PATH: sandbox.defaultPath, GIVEN: 'given-value' },
    });
    delete process.env.SANDBOX_TEST_CANARY;

    expect(output).toContain('probes-done');
    expect(result.exitCode).toBe(0);
    expect(output).not.toContain(envCanary);
    expect(output).not.toContain(fileCanary);
    expect(output).not.toContain('"workspaces"'); // the repository's package.json
    expect(output).not.toContain('MONGO_URL');
    expect(output).not.toContain('INTERNAL_SECRET');
    expect(output).toMatch(/cat: \S*outside\.txt: No such file or directory/);
    expect(output).toMatch(/ls: cannot access '\/root': No such file or directory/);
    // bwrap's reaper, sh, the loop's cat or ls: a handful, not the host's hundreds.
    const processes = Number(/processes: (\d+)/.exec(output)?.[1]);
    expect(processes).toBeGreaterThan(0);
    expect(processes).toBeLessThan(8);
  });

  it('gives the process exactly the environment it was handed, and PWD', async () => {
    const env = {
      PATH: '/usr/bin:/bin',
      HOME: '/workspace',
      PLATFORM_DEPLOYMENT_ID: 'd1',
      X: 'a b=c',
    };
    // The shell's own environment as it was started. bwrap sets PWD, as a shell would.
    const { result, output } = await run(`tr '\\0' '\\n' < /proc/$$/environ`, {
      env,
      cwd: 'src/..',
    });

    expect(result).toEqual({ exitCode: 0, signal: null });
    expect(output.split('\n').filter(Boolean).sort()).toEqual(
      [...Object.entries(env), ['PWD', '/workspace']]
        .map(([name, value]) => `${name}=${value}`)
        .sort(),
    );
  });

  it('holds no descriptor but stdin, stdout and stderr (nothing the platform inherited)', async () => {
    // `ls` lists its own: 0–2 and the directory it reads.
    const { output } = await run('ls /proc/self/fd | tr "\\n" " "');
    expect(output).toBe('0 1 2 3 ');
  });

  it('runs as an unprivileged user that can write only its workspace and /tmp', async () => {
    const { result, output } = await run(
      'id -u; echo made > built.txt && cat built.txt; touch /tmp/t && echo tmp-ok; ' +
        'touch /usr/x 2>&1 | grep -o "Read-only file system"; touch /etc/x 2>&1 | grep -o "Permission denied"',
      { cwd: '.' },
    );

    expect(result.exitCode).toBe(0);
    const [uid, ...rest] = output.trim().split('\n');
    expect(Number(uid)).toBeGreaterThanOrEqual(OPTIONS.uidBase);
    expect(Number(uid)).toBeLessThan(OPTIONS.uidBase + 65_536);
    expect(rest).toEqual(['made', 'tmp-ok', 'Read-only file system', 'Permission denied']);
  });

  it('hands the workspace to its uid without following a link out of it', async () => {
    const outside = path.join(scratch, `outside-${randomBytes(4).toString('hex')}`);
    await writeFile(outside, "not the sandbox's");
    const workspace = await newWorkspace();
    await symlink(outside, path.join(workspace, 'link'));
    await mkdir(path.join(workspace, 'dir'));
    await symlink(scratch, path.join(workspace, 'dir', 'up'));

    const { result } = await run('true', { workspace });

    expect(result.exitCode).toBe(0);
    expect((await stat(outside)).uid).toBe(process.getuid?.());
    expect((await stat(scratch)).uid).toBe(process.getuid?.());
    expect((await lstat(path.join(workspace, 'dir'))).uid).toBeGreaterThanOrEqual(OPTIONS.uidBase);
  });

  it('runs node, from the directory of the one running the platform', async () => {
    const { result, output } = await run('node -e "console.log(process.version, 6 * 7)"', {
      limits: { ...TEST_LIMITS, timeoutMs: 20_000, memoryBytes: 4 * 1024 ** 3, processes: 64 },
    });
    expect(output).toBe(`${process.version} 42\n`);
    expect(result.exitCode).toBe(0);
  });

  it('refuses a working directory outside the workspace', async () => {
    await expect(run('true', { cwd: '../etc' })).rejects.toThrow('inside the workspace');
  });

  it('delivers stdout and stderr interleaved in the order they were written', async () => {
    const { result, output } = await run(
      'i=1; while [ $i -le 200 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done',
    );
    const expected = Array.from({ length: 200 }, (_, i) => `out ${i + 1}\nerr ${i + 1}\n`).join('');
    expect(result.exitCode).toBe(0);
    expect(output).toBe(expected);
  });
});

describe('Sandbox: nothing a tenant writes becomes an option', () => {
  const OPTION_LIKE = ['--ro-bind', '/', '/host'];

  it('hands values with dashes, newlines, quotes and bwrap options to the code as they are', async () => {
    const value = `x\n${OPTION_LIKE.join(' ')}\n'"$(id)\`id\`;--bind / /x`;
    const { result, output } = await run('printf "%s|" "$V"; ls /host 2>&1 | head -1', {
      env: { PATH: '/usr/bin:/bin', V: value, W: '--setenv' },
      cwd: '-dir--with--dashes/..',
    });
    expect(result.exitCode).toBe(0);
    expect(output).toBe(`${value}|ls: cannot access '/host': No such file or directory\n`);
  });

  it('runs a command with leading dashes and newlines as a shell script, never as options', async () => {
    const { result, output } = await run(
      '--version 2>/dev/null || echo not-an-option\necho second line',
    );
    expect(result.exitCode).toBe(0);
    expect(output).toBe('not-an-option\nsecond line\n');
  });

  it('refuses a NUL in a value, the command or the directory, and a name that is not a variable name', async () => {
    const nul = `x\0${OPTION_LIKE.join('\0')}`;
    await expect(run('true', { env: { V: nul } })).rejects.toThrow('NUL');
    await expect(run(`echo ${nul}`)).rejects.toThrow('NUL');
    await expect(run('true', { cwd: nul })).rejects.toThrow('NUL');
    for (const name of ['A-B', '--ro-bind', 'A B', '1A', 'A\0B', '']) {
      await expect(run('true', { env: { [name]: 'v' } })).rejects.toThrow(
        'invalid environment variable name',
      );
    }
  });

  it('a directory with dashes is a directory inside the workspace', async () => {
    const workspace = await newWorkspace();
    await mkdir(path.join(workspace, '--bind'));
    const { output } = await run('pwd', { workspace, cwd: '--bind' });
    expect(output).toBe('/workspace/--bind\n');
  });
});

describe('Sandbox: the network', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const connect = (p: number) =>
    `node -e "require('net').connect(${p}, '127.0.0.1').on('data', (d) => process.stdout.write(d)).on('error', (e) => console.log(e.code))"`;

  it("has a loopback of its own, with or without a way out: the host's 127.0.0.1 is not it", async () => {
    for (const network of [true, false]) {
      const { output } = await run(connect(port), { network });
      expect(output).toBe('ECONNREFUSED\n');
    }
  });

  it('has an address of its own, and a resolver that answers', async () => {
    const { result, output } = await run(
      'ip -4 -br addr show eth0 | tr -s " " | cut -d" " -f3; cat /etc/resolv.conf | head -1; getent hosts localhost | head -1',
      { network: true },
    );
    expect(result.exitCode).toBe(0);
    const [address, resolver] = output.trim().split('\n');
    expect(address).toMatch(/^\d+\.\d+\.\d+\.\d+\/30$/);
    expect(resolver).toMatch(/^nameserver \d+\.\d+\.\d+\.\d+$/);
  });
});

describe('Sandbox: limits', () => {
  it('stops a build past its time limit, with every process it started', async () => {
    const sleep = uniqueSleep();
    const pending = run(`${sleep.join(' ')} & ${sleep.join(' ')} & echo started; wait`, {
      limits: { ...TEST_LIMITS, timeoutMs: 3_000 },
    });
    const pids = await waitFor(async () => {
      const found = await pidsRunning(sleep);
      return found.length === 2 ? found : undefined;
    });

    const { result, output } = await pending;
    expect(result).toMatchObject({ stoppedBy: 'timeout' });
    expect(result.exitCode).not.toBe(0);
    expect(output).toBe('started\n');
    for (const pid of pids) expect(await isProcessRunning(pid)).toBe(false);
  });

  it('kills a build that ignores SIGTERM once the grace period is over', async () => {
    const started = Date.now();
    const { result, output } = await run(
      `trap 'echo ignoring SIGTERM' TERM; echo ready; while :; do sleep 0.05; done`,
      {
        limits: { ...TEST_LIMITS, timeoutMs: 500 },
      },
    );
    expect(result).toEqual({ exitCode: 137, signal: 'SIGKILL', stoppedBy: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500 + OPTIONS.killGraceMs);
    expect(output).toContain('ignoring SIGTERM');
  });

  it('stops a fork bomb at its process limit and then at its time limit', async () => {
    // The shell then waits without forking (exec): a failed fork ends a non-interactive shell.
    const { result, output } = await run('bomb() { bomb | bomb & }; bomb; exec sleep 60', {
      limits: { ...TEST_LIMITS, timeoutMs: 3_000, processes: 40 },
    });
    expect(result.stoppedBy).toBe('timeout');
    expect(result.exitCode).not.toBe(0);
    expect(output).toContain('Cannot fork');
  });

  it('counts the process limit per sandbox, not for every sandbox at once', async () => {
    const sleep = uniqueSleep();
    // One sandbox holds 15 processes; another may still start 15 of its own under a limit of 20.
    const holder = await sandbox.start({
      workspace: await newWorkspace(),
      command: `i=0; while [ $i -lt 15 ]; do ${sleep.join(' ')} & i=$((i+1)); done; wait`,
      env: { PATH: '/usr/bin:/bin' },
      limits: { ...TEST_LIMITS, processes: 20 },
      network: false,
      onOutput: () => undefined,
    });
    try {
      await waitFor(async () => (await pidsRunning(sleep)).length === 15);
      const { result, output } = await run(
        'i=0; while [ $i -lt 15 ]; do sleep 0.5 & i=$((i+1)); done; wait; echo all-forked',
        { limits: { ...TEST_LIMITS, timeoutMs: 10_000, processes: 20 } },
      );
      expect(output).toBe('all-forked\n');
      expect(result.exitCode).toBe(0);
    } finally {
      await holder.stop();
    }
  });

  it('ends a build that allocates past its memory limit, and says it was the memory', async () => {
    const { result, output } = await run(
      'node -e "const kept = []; for (let i = 0; i < 64; i++) kept.push(Buffer.alloc(64 * 1024 * 1024, 1)); console.log(\'allocated 4 GiB\')"',
      { limits: { ...TEST_LIMITS, timeoutMs: 20_000, memoryBytes: 1.5 * 1024 ** 3 } },
    );
    expect(result).toMatchObject({ signal: 'SIGKILL', stoppedBy: 'limit', limit: 'memory' });
    expect(output).not.toContain('allocated 4 GiB');
  });

  it('stops a build past its CPU time and says it was a limit', async () => {
    const { result } = await run('while :; do :; done', {
      limits: { ...TEST_LIMITS, timeoutMs: 20_000, cpuSeconds: 1 },
    });
    expect(result).toEqual({
      exitCode: 128 + os.constants.signals.SIGXCPU,
      signal: 'SIGXCPU',
      stoppedBy: 'limit',
      limit: 'cpu',
    });
  });

  it('stops the whole process tree when cancelled through the signal', async () => {
    const sleep = uniqueSleep();
    const controller = new AbortController();
    const pending = run(`(${sleep.join(' ')} & ${sleep.join(' ')}; wait) & wait`, {
      signal: controller.signal,
    });
    const pids = await waitFor(async () => {
      const found = await pidsRunning(sleep);
      return found.length === 2 ? found : undefined;
    });

    controller.abort();
    const { result } = await pending;
    expect(result.stoppedBy).toBe('cancel');
    expect(result.exitCode).not.toBe(0);
    for (const pid of pids) expect(await isProcessRunning(pid)).toBe(false);
  });
});

describe('Sandbox: a long-running app', () => {
  it('listens on its port at its own address, answers the host, and is gone after stop()', async () => {
    const workspace = await newWorkspace();
    await mkdir(path.join(workspace, 'app'));
    await writeFile(
      path.join(workspace, 'app', 'server.js'),
      `require('http').createServer((req, res) => res.end('hello ' + process.env.GREETING)).listen(process.env.PORT, () => console.log('listening'));`,
    );
    const port = 8080;
    let output = '';
    const app = await sandbox.start({
      workspace,
      cwd: 'app',
      command: 'exec node server.js',
      env: { PATH: sandbox.defaultPath, PORT: String(port), GREETING: 'from the sandbox' },
      limits: { ...TEST_LIMITS, memoryBytes: 4 * 1024 ** 3, processes: 64 },
      network: true,
      onOutput: (chunk) => (output += chunk),
    });

    expect(app.address).not.toBe('127.0.0.1');
    const answer = await waitFor(async () => {
      const response = await fetch(`http://${app.address}:${port}/`);
      return response.ok ? response.text() : undefined;
    });
    expect(answer).toBe('hello from the sandbox');
    expect(output).toBe('listening\n');

    const result = await app.stop();
    expect(result.stoppedBy).toBe('cancel');
    expect(await app.exited).toBe(result);
    expect(await isProcessRunning(app.pid)).toBe(false);
    await expect(fetch(`http://${app.address}:${port}/`)).rejects.toThrow();
  });
});

describe('Sandbox.create', () => {
  it('refuses to make a sandbox when bwrap is missing, and says what to do', async () => {
    const creating = Sandbox.create({ ...OPTIONS, bwrap: '/nonexistent/bwrap' });
    await expect(creating).rejects.toThrow(SandboxUnavailableError);
    await expect(creating).rejects.toThrow(
      /scripts\/infra\/bubblewrap\.sh.*SANDBOX=none and ALLOW_UNSANDBOXED=true/,
    );
  });

  it('refuses a bwrap that cannot make namespaces here, with its reason', async () => {
    const fake = path.join(scratch, 'bwrap-without-namespaces');
    await writeFile(
      fake,
      '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n',
      {
        mode: 0o755,
      },
    );
    await expect(Sandbox.create({ ...OPTIONS, bwrap: fake })).rejects.toThrow(
      /cannot make a sandbox here .*No permissions to create new namespace.*scripts\/infra\/bubblewrap\.sh/s,
    );
  });

  it('runs without a sandbox only when allowed, and never in production; cancel still stops the tree', async () => {
    await expect(Sandbox.create({ ...OPTIONS, mode: 'none' })).rejects.toThrow(
      'ALLOW_UNSANDBOXED=true',
    );
    await expect(
      Sandbox.create({ ...OPTIONS, mode: 'none', allowUnsandboxed: true, nodeEnv: 'production' }),
    ).rejects.toThrow('NODE_ENV=production');

    const unsandboxed = await Sandbox.create({ ...OPTIONS, mode: 'none', allowUnsandboxed: true });
    try {
      expect(unsandboxed.isolated).toBe(false);
      let output = '';
      const workspace = await newWorkspace();
      const result = await unsandboxed.run({
        workspace,
        command: `echo "[$GIVEN] [\${INTERNAL_SECRET:-}]"; pwd`,
        env: { PATH: '/usr/bin:/bin', GIVEN: 'given' },
        limits: { ...TEST_LIMITS, timeoutMs: 5_000 },
        network: true,
        onOutput: (chunk) => (output += chunk),
      });
      expect(result).toEqual({ exitCode: 0, signal: null });
      expect(output).toBe(`[given] []\n${workspace}\n`);

      const sleep = uniqueSleep();
      const controller = new AbortController();
      const cancelled = unsandboxed.run({
        workspace,
        command: `(${sleep.join(' ')} & ${sleep.join(' ')}; wait) & wait`,
        env: { PATH: '/usr/bin:/bin' },
        limits: { ...TEST_LIMITS, timeoutMs: 20_000 },
        network: true,
        onOutput: () => undefined,
        signal: controller.signal,
      });
      const pids = await waitFor(async () => {
        const found = await pidsRunning(sleep);
        return found.length === 2 ? found : undefined;
      });
      controller.abort();
      expect(await cancelled).toMatchObject({ stoppedBy: 'cancel', signal: 'SIGTERM' });
      for (const pid of pids) expect(await isProcessRunning(pid)).toBe(false);
    } finally {
      await unsandboxed.close();
    }
  });
});
