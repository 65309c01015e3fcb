import { spawn } from 'node:child_process';
import { allowsLocalFiles, allowsLocalNetwork, type LocalSourcePolicy } from '@platform/shared';

export interface GitResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs git in `cwd` with nothing of this machine's or this process's configuration: the
 * environment is only PATH, a throwaway HOME and git's isolation switches; the allowed
 * protocols and the pinned addresses go in as `-c` settings, which git hands down to the
 * helpers it starts. Each git runs in its own process group, killed whole when `signal` aborts.
 */
export function gitRunner({
  cwd,
  home,
  sources,
  pinned,
  signal,
}: {
  cwd: string;
  home: string;
  sources: LocalSourcePolicy;
  pinned: string[];
  signal: AbortSignal;
}) {
  const settings = [
    'protocol.allow=never',
    'protocol.https.allow=always',
    ...(allowsLocalNetwork(sources.setting) ? ['protocol.http.allow=always'] : []),
    ...(allowsLocalFiles(sources.setting) ? ['protocol.file.allow=always'] : []),
    'credential.helper=',
    'http.followRedirects=false',
    'core.hooksPath=/dev/null',
    'core.askPass=',
    'submodule.recurse=false',
    'init.defaultBranch=main',
    ...pinned.map((entry) => `http.curloptResolve=${entry}`),
  ].flatMap((setting) => ['-c', setting]);
  const env = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'false',
    SSH_ASKPASS: 'false',
    GIT_PROTOCOL_FROM_USER: '0',
  };
  return (args: string[]) =>
    new Promise<GitResult>((resolve, reject) => {
      if (signal.aborted) {
        resolve({ code: null, stdout: '', stderr: '' });
        return;
      }
      const child = spawn('git', [...settings, ...args], {
        cwd,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on(
        'data',
        (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-16_384)),
      );
      const kill = () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      signal.addEventListener('abort', kill, { once: true });
      child.once('error', (err) => {
        signal.removeEventListener('abort', kill);
        reject(err);
      });
      child.once('close', (code) => {
        signal.removeEventListener('abort', kill);
        resolve({ code, stdout, stderr });
      });
    });
}

export type RunGit = (args: string[]) => Promise<GitResult>;

/** What git said went wrong, in one line: its `fatal:` and `error:` lines, else its last. */
export const lastGitLine = (stderr: string) =>
  stderr
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .filter((line) => /^(fatal|error):/.test(line))
    .map((line) => line.replace(/^(fatal|error):\s*/, ''))
    .join('; ') ||
  stderr.trim().split('\n').pop() ||
  'git failed';
