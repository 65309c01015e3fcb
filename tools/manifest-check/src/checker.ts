import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';

/** The repository's root directory. */
export const REPO_ROOT = path.resolve(__dirname, '../../..');
const GO_SOURCES = path.resolve(__dirname, '../go');

/** Give this to `beforeAll`: the first build downloads modules and compiles for minutes. */
export const CHECKER_BUILD_TIMEOUT_MS = 10 * 60_000;

/** One reason a rendering or an object is not acceptable. */
export interface Problem {
  kind?: string;
  namespace?: string;
  name?: string;
  message: string;
}

/** A rendered Kubernetes object, as kustomize emits it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface KustomizeResult {
  dir: string;
  objects: K8sObject[];
  problems: Problem[];
}

export interface ComposeVariable {
  name: string;
  hasDefault: boolean;
  default: string;
  required: boolean;
}

export interface ComposeResult {
  file: string;
  /** The loaded project as `docker compose config --format json` prints it; null if it fails. */
  project: ComposeProject | null;
  variables: ComposeVariable[];
  problems: Problem[];
}

export interface ComposeProject {
  name: string;
  services: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  volumes?: Record<string, unknown>;
  [field: string]: unknown;
}

/** A Dockerfile as BuildKit's Dockerfile frontend loads it for one target and build arguments. */
export interface DockerfileResult {
  file: string;
  /** The stage that would be built: the one asked for, else the last. */
  target: string;
  buildArgs: Record<string, string>;
  stages: { name: string; base: string; default: boolean }[];
  /** The images (not stages) the target starts from, normalised (docker.io/library/...). */
  baseImages: string[];
  /** The build arguments the target uses, with the value each gets (`--call=outline`). */
  args: { name: string; value: string; line: number }[];
  /** The configuration of the image the target would produce; null if the file does not load. */
  image: DockerImageConfig | null;
  /** Failed build checks (`docker build --check`), over every stage. */
  warnings: { rule: string; message: string; line: number }[];
  problems: Problem[];
}

/** The OCI image configuration, as BuildKit writes it. */
export interface DockerImageConfig {
  User?: string;
  Env?: string[];
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  WorkingDir?: string;
  ExposedPorts?: Record<string, object>;
}

const run = promisify(execFile);

function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'platform-dev', 'manifest-check');
}

function goVersion(): string {
  try {
    return execFileSync('go', ['env', 'GOVERSION', 'GOOS', 'GOARCH'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      'manifest-check needs Go (1.26 or later) to build its checker from tools/manifest-check/go: ' +
        'install it from https://go.dev/dl/ and make sure `go` is on PATH.',
    );
  }
}

/** A hash of everything the binary is built from: the Go sources, go.mod/go.sum, the toolchain. */
function sourceHash(): string {
  const hash = createHash('sha256');
  hash.update(goVersion());
  const walk = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((entry) => {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) return walk(full);
        return /\.go$|^go\.(mod|sum)$/.test(entry.name) ? [full] : [];
      })
      .sort();
  for (const file of walk(GO_SOURCES)) {
    hash.update(path.relative(GO_SOURCES, file)).update('\0').update(fs.readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

const say = (message: string) => process.stderr.write(`[manifest-check] ${message}\n`);

/** A lock across jest workers and concurrent runs: mkdir is atomic. Stale after 20 minutes. */
async function withLock<T>(lockDir: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = fs.statSync(lockDir, { throwIfNoEntry: false });
      if (holder && Date.now() - holder.mtimeMs > 20 * 60_000) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() - started > CHECKER_BUILD_TIMEOUT_MS) {
        throw new Error(`timed out waiting for another build of the checker (${lockDir})`);
      }
      await delay(500);
    }
  }
  try {
    return await work();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

async function goBuild(output: string): Promise<void> {
  say(
    'building the Go checker (kustomize, Kubernetes validation, compose-go); the first build ' +
      'downloads modules and compiles for a few minutes, later runs reuse it',
  );
  const started = Date.now();
  const child = spawn('go', ['build', '-trimpath', '-o', output, '.'], {
    cwd: GO_SOURCES,
    // go.sum is committed: never update it while building.
    env: {
      ...process.env,
      GOFLAGS: [process.env.GOFLAGS, '-mod=readonly'].filter(Boolean).join(' '),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    log += chunk.toString();
    for (const line of chunk.toString().split('\n')) {
      if (line.startsWith('go: downloading')) say(line);
    }
  });
  const ticker = setInterval(
    () => say(`still building (${Math.round((Date.now() - started) / 1000)} s)`),
    15_000,
  );
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0) throw new Error(`go build failed (exit ${code}):\n${log}`);
  } finally {
    clearInterval(ticker);
  }
  say(`built in ${Math.round((Date.now() - started) / 1000)} s`);
}

let checkerPath: Promise<string> | undefined;

/**
 * The path of the checker binary, built on first use into
 * `${XDG_CACHE_HOME:-~/.cache}/platform-dev/manifest-check/` and rebuilt whenever its sources
 * change. Call it in `beforeAll` with CHECKER_BUILD_TIMEOUT_MS.
 */
export function manifestChecker(): Promise<string> {
  checkerPath ??= (async () => {
    const dir = cacheDir();
    fs.mkdirSync(dir, { recursive: true });
    const binary = path.join(dir, `manifest-check-${sourceHash()}`);
    if (fs.existsSync(binary)) return binary;
    return withLock(path.join(dir, '.build.lock'), async () => {
      if (fs.existsSync(binary)) return binary; // another worker built it meanwhile
      const partial = `${binary}.${process.pid}.tmp`;
      try {
        await goBuild(partial);
        fs.renameSync(partial, binary);
      } finally {
        fs.rmSync(partial, { force: true });
      }
      for (const stale of fs.readdirSync(dir)) {
        const full = path.join(dir, stale);
        if (stale.startsWith('manifest-check-') && full !== binary)
          fs.rmSync(full, { force: true });
      }
      return binary;
    });
  })();
  checkerPath.catch(() => (checkerPath = undefined));
  return checkerPath;
}

async function runChecker<T>(args: string[]): Promise<T> {
  const binary = await manifestChecker();
  const { stdout } = await run(binary, args, { maxBuffer: 64 * 1024 * 1024, cwd: REPO_ROOT });
  return JSON.parse(stdout) as T;
}

/**
 * Renders a kustomization with kustomize's Go API, then decodes every object strictly into its
 * Kubernetes type and runs the API server's validation on it.
 */
export function renderKustomization(dir: string): Promise<KustomizeResult> {
  return runChecker<KustomizeResult>(['kustomize', path.resolve(REPO_ROOT, dir)]);
}

/**
 * Loads a Compose file with compose-go, the loader of `docker compose` (schema validation,
 * interpolation, normalisation), with only `env` as the environment.
 */
export function loadCompose(
  file: string,
  env: Record<string, string> = {},
): Promise<ComposeResult> {
  const pairs = Object.entries(env).map(([key, value]) => `${key}=${value}`);
  return runChecker<ComposeResult>(['compose', path.resolve(REPO_ROOT, file), ...pairs]);
}

/**
 * Loads a Dockerfile with BuildKit's Dockerfile frontend, the code `docker build` runs, for a
 * target (default: the last stage) and build arguments: the build checks of `docker build
 * --check`, the arguments the target uses and the image configuration it would produce. Nothing
 * is built and no registry is asked: base images resolve to an empty image.
 */
export function loadDockerfile(
  file: string,
  buildArgs: Record<string, string> = {},
  target?: string,
): Promise<DockerfileResult> {
  const args = Object.entries(buildArgs).map(([key, value]) => `${key}=${value}`);
  if (target) args.unshift(`--target=${target}`);
  return runChecker<DockerfileResult>(['dockerfile', path.resolve(REPO_ROOT, file), ...args]);
}

/** Problems as one readable block, for assertion messages. */
export function describeProblems(problems: Problem[]): string {
  return problems
    .map((p) => `${[p.kind, p.namespace, p.name].filter(Boolean).join('/')}: ${p.message}`)
    .join('\n');
}
