import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { useRunning } from './helpers';

/** How the fixture app is built, started and checked (the service settings a test gives it). */
export const FIXTURE_APP = Object.freeze({
  buildCommand: 'node build.js',
  startCommand: 'node server.js',
  healthCheckPath: '/healthz',
});

/** What one commit of the fixture app holds and how that version behaves. */
export interface AppCommitOptions {
  /** The greeting `GET /` answers with when the app's `GREETING` variable is not set. */
  greeting?: string;
  /** `node build.js` prints why and exits 1. */
  failBuild?: boolean;
  /** The app listens but answers 503 on every path, `/healthz` and `/` included. */
  neverHealthy?: boolean;
  /** The app exits with 1 this many seconds after it starts (0: as soon as it listens). */
  crashAfterSeconds?: number;
  /** The app starts listening only this many seconds after it starts (a slow start). */
  listenAfterSeconds?: number;
  /** Variables the build and the app print as `NAME=value` (default `['GREETING']`): masking tests. */
  printVariables?: string[];
  /** More files (path inside the app's directory → content); they may replace the app's own. */
  files?: Record<string, string>;
  /** The commit message (default `revision <n>`). */
  message?: string;
  /** The branch the commit goes on (default the repository's branch; a new one starts from it). */
  branch?: string;
}

/** A commit made by `AppRepository.commit`. */
export interface AppCommit {
  /** The full commit hash (40 hex characters). */
  hash: string;
  /**
   * The commit's own identity, written into the commit itself: the build bakes it into
   * `build/info.json` and `GET /` answers it as `commit`, so a test knows which checkout was built.
   */
  revision: string;
  message: string;
  branch: string;
}

/** What `GET /` of the fixture app answers. */
export interface AppAnswer {
  /** The revision of the commit that was built. */
  commit: string;
  /** A random id each run of `node build.js` makes: tells a rebuild from a reused build. */
  build: string;
  greeting: string | null;
}

/** What `node build.js` writes to `build/info.json`. */
export interface AppBuildInfo {
  revision: string;
  build: string;
  greeting: string | null;
  /** `PLATFORM_COMMIT_HASH` as the build saw it (null when unset). */
  commitHash: string | null;
  /** The values of `printVariables` as the build saw them. */
  variables: Record<string, string | null>;
}

export interface AppRepositoryOptions {
  /** The branch commits go on by default (default `main`). */
  branch?: string;
  /** A directory inside the repository that holds the app (default `""`: the root). */
  rootDirectory?: string;
}

/** A bare git repository of a tiny Node web app, in a temporary directory. */
export interface AppRepository {
  /** `file:///…/app.git`: what a service's `repository` is set to. */
  readonly url: string;
  /** The bare repository's directory. */
  readonly path: string;
  readonly branch: string;
  readonly rootDirectory: string;
  /** Commits a new version of the app (a whole tree: nothing carries over from the last one). */
  commit(options?: AppCommitOptions): Promise<AppCommit>;
  /** The full hash `branch` (default the repository's) points at, or null when it does not exist. */
  head(branch?: string): Promise<string | null>;
  /**
   * Serves the repository over git's smart HTTP protocol (`git http-backend`) on 127.0.0.1:
   * `url` is `http://127.0.0.1:<port>/app.git`; `requests` counts what it answered.
   */
  serveHttp(): Promise<{ url: string; requests(): number; close(): Promise<void> }>;
  /** Removes the repository and its temporary directory (and stops its HTTP servers). */
  close(): Promise<void>;
}

// Commit dates advance one second a commit from a fixed instant, so nothing depends on the clock.
const FIRST_COMMIT_TIME = 1_700_000_000;

const BUILD_JS = `'use strict';
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const app = JSON.parse(fs.readFileSync(path.join(__dirname, 'app.json'), 'utf8'));
console.log('building revision ' + app.revision);
const variables = {};
for (const name of app.printVariables) {
  variables[name] = process.env[name] ?? null;
  console.log(name + '=' + (process.env[name] ?? ''));
}
if (app.failBuild) {
  console.error('build failed on purpose (fixture option failBuild)');
  process.exit(1);
}
const info = {
  revision: app.revision,
  build: randomBytes(8).toString('hex'),
  greeting: app.greeting,
  commitHash: process.env.PLATFORM_COMMIT_HASH ?? null,
  variables,
};
fs.mkdirSync(path.join(__dirname, 'build'), { recursive: true });
fs.writeFileSync(path.join(__dirname, 'build', 'info.json'), JSON.stringify(info, null, 2) + '\\n');
console.log('built revision ' + info.revision + ' as build ' + info.build);
`;

const SERVER_JS = `'use strict';
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const app = JSON.parse(fs.readFileSync(path.join(__dirname, 'app.json'), 'utf8'));
const infoFile = path.join(__dirname, 'build', 'info.json');
if (!fs.existsSync(infoFile)) {
  console.error('build/info.json is missing: run node build.js first');
  process.exit(1);
}
const info = JSON.parse(fs.readFileSync(infoFile, 'utf8'));
const port = Number(process.env.PORT);
if (!process.env.PORT || !Number.isInteger(port)) {
  console.error('PORT is not set');
  process.exit(1);
}
for (const name of app.printVariables) console.log(name + '=' + (process.env[name] ?? ''));

const send = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://app');
  if (app.neverHealthy) return send(res, 503, { error: 'never healthy (fixture option)' });
  if (req.method === 'GET' && url.pathname === '/healthz') return send(res, 200, { ok: true });
  if (req.method === 'GET' && url.pathname === '/') {
    return send(res, 200, {
      commit: info.revision,
      build: info.build,
      greeting: process.env.GREETING ?? info.greeting ?? null,
    });
  }
  send(res, 404, { error: 'not found' });
});
process.on('SIGTERM', () => {
  console.log('stopping on SIGTERM');
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
});

setTimeout(() => {
  server.listen(port, '0.0.0.0', () => {
    console.log('revision ' + info.revision + ' (build ' + info.build + ') listening on ' + port);
    if (app.crashAfterSeconds !== null) {
      setTimeout(() => {
        console.error('crashing on purpose (fixture option crashAfterSeconds)');
        process.exit(1);
      }, app.crashAfterSeconds * 1000);
    }
  });
}, app.listenAfterSeconds * 1000);
`;

/** The files of one version of the app, by path inside the app's directory. */
function appFiles(revision: string, options: AppCommitOptions): Record<string, string> {
  const app = {
    revision,
    greeting: options.greeting ?? null,
    failBuild: options.failBuild ?? false,
    neverHealthy: options.neverHealthy ?? false,
    crashAfterSeconds: options.crashAfterSeconds ?? null,
    listenAfterSeconds: options.listenAfterSeconds ?? 0,
    printVariables: options.printVariables ?? ['GREETING'],
  };
  const packageJson = {
    name: 'fixture-app',
    private: true,
    scripts: { build: FIXTURE_APP.buildCommand, start: FIXTURE_APP.startCommand },
  };
  return {
    'app.json': `${JSON.stringify(app, null, 2)}\n`,
    'package.json': `${JSON.stringify(packageJson, null, 2)}\n`,
    'build.js': BUILD_JS,
    'server.js': SERVER_JS,
    '.gitignore': 'build/\n',
    ...options.files,
  };
}

/** Runs git isolated from this machine's configuration; resolves with its trimmed stdout. */
function git(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { env }, (error, stdout, stderr) => {
      if (error)
        reject(new Error(`git ${args.join(' ')} failed: ${stderr.trim() || error.message}`));
      else resolve(stdout.trim());
    });
  });
}

const isSafeBranch = (name: string) =>
  /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(name) && !name.includes('..');

/**
 * Creates a bare repository (with the real `git`) holding no commits yet; `commit()` adds
 * versions of the fixture app: `server.js` (listens on `$PORT`, `GET /` answers `AppAnswer`,
 * `GET /healthz` 200) and `build.js` (writes `build/info.json`; no dependencies, no network).
 * Run it with `FIXTURE_APP`'s commands. `close()` removes everything (`useRunning` calls it).
 */
export async function createAppRepository(
  options: AppRepositoryOptions = {},
): Promise<AppRepository> {
  const branch = options.branch ?? 'main';
  const rootDirectory = options.rootDirectory ?? '';
  if (!isSafeBranch(branch)) throw new Error(`not a branch name: ${branch}`);
  if (path.isAbsolute(rootDirectory) || rootDirectory.split('/').includes('..')) {
    throw new Error(`rootDirectory must be relative and stay inside: ${rootDirectory}`);
  }

  const base = await mkdtemp(path.join(tmpdir(), 'platform-git-fixture-'));
  const bare = path.join(base, 'app.git');
  const home = path.join(base, 'home');
  await mkdir(home);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Fixture Author',
    GIT_AUTHOR_EMAIL: 'author@fixture.test',
    GIT_COMMITTER_NAME: 'Fixture Author',
    GIT_COMMITTER_EMAIL: 'author@fixture.test',
  };
  await git(['init', '--quiet', '--bare', `--initial-branch=${branch}`, bare], env);
  const token = randomBytes(4).toString('hex');
  let commits = 0;
  // One commit at a time: each reads the branch head the previous one wrote.
  let queue: Promise<unknown> = Promise.resolve();

  const head = async (name = branch): Promise<string | null> =>
    git(
      ['--git-dir', bare, 'rev-parse', '--verify', '--quiet', `refs/heads/${name}^{commit}`],
      env,
    ).catch(() => null);

  const commitNow = async (commitOptions: AppCommitOptions): Promise<AppCommit> => {
    const target = commitOptions.branch ?? branch;
    if (!isSafeBranch(target)) throw new Error(`not a branch name: ${target}`);
    commits += 1;
    const revision = `${token}-${commits}`;
    const message = commitOptions.message ?? `revision ${commits}`;
    const tree = path.join(base, `tree-${commits}`);
    const appDir = path.join(tree, rootDirectory);
    for (const [file, content] of Object.entries(appFiles(revision, commitOptions))) {
      const target = path.join(appDir, file);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    const time = `@${FIRST_COMMIT_TIME + commits} +0000`;
    const commitEnv = {
      ...env,
      GIT_INDEX_FILE: path.join(base, `index-${commits}`),
      GIT_AUTHOR_DATE: time,
      GIT_COMMITTER_DATE: time,
    };
    try {
      const inTree = ['--git-dir', bare, '--work-tree', tree];
      await git([...inTree, 'add', '--all', '--force', '.'], commitEnv);
      const treeHash = await git([...inTree, 'write-tree'], commitEnv);
      const parent = (await head(target)) ?? (await head(branch));
      const hash = await git(
        [
          '--git-dir',
          bare,
          'commit-tree',
          treeHash,
          ...(parent ? ['-p', parent] : []),
          '-m',
          message,
        ],
        commitEnv,
      );
      await git(['--git-dir', bare, 'update-ref', `refs/heads/${target}`, hash], env);
      return { hash, revision, message, branch: target };
    } finally {
      await rm(tree, { recursive: true, force: true });
      await rm(commitEnv.GIT_INDEX_FILE, { force: true });
    }
  };

  const servers: (() => Promise<void>)[] = [];
  const serveHttp = async () => {
    const served = await serveOverHttp(bare, env);
    servers.push(served.close);
    return served;
  };

  return {
    url: pathToFileURL(bare).href,
    path: bare,
    branch,
    rootDirectory,
    commit(commitOptions = {}) {
      const result = queue.then(() => commitNow(commitOptions));
      queue = result.catch(() => undefined);
      return result;
    },
    head,
    serveHttp,
    close: async () => {
      await Promise.all(servers.splice(0).map((close) => close()));
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** `git http-backend` as a CGI behind a node HTTP server: the smart HTTP protocol, no auth. */
async function serveOverHttp(bare: string, env: Record<string, string>) {
  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    const url = new URL(req.url ?? '/', 'http://fixture');
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    };
    const child = spawn('git', ['http-backend'], {
      env: {
        ...env,
        GIT_PROJECT_ROOT: path.dirname(bare),
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: header('content-type'),
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: header('content-length') } : {}),
        HTTP_CONTENT_ENCODING: header('content-encoding'),
        GIT_PROTOCOL: header('git-protocol'),
        REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headersSent = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersSent) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = head.subarray(0, end).toString().split('\r\n');
      let status = 200;
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      headersSent = true;
      res.write(head.subarray(end + 4));
    });
    child.on('close', () => {
      if (!headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/${path.basename(bare)}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The fixture app's repository (`createAppRepository`) for the tests of the enclosing `describe`
 * block, or of the file: made before them, removed after. Returns a getter, as `useRunning` does.
 */
export const useAppRepository = () => useRunning(() => createAppRepository());
