import path from 'node:path';
import { SANDBOX_WORKSPACE } from './bwrap-args';

/** The names a sandboxed environment may hold (contracts.md's variable names, and the platform's). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Variables bash sets in what it exports by itself. */
const BASH_VARIABLES = ['_', 'SHLVL', 'OLDPWD'];

/** A POSIX shell word that is exactly `text`: single quotes, each `'` written as `'\''`. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The working directory inside the sandbox; refuses one that leaves the workspace. */
export function sandboxCwd(cwd: string): string {
  const inside = path.posix.normalize(path.posix.join(SANDBOX_WORKSPACE, cwd || '.'));
  if (inside !== SANDBOX_WORKSPACE && !inside.startsWith(`${SANDBOX_WORKSPACE}/`)) {
    throw new Error(`cwd must stay inside the workspace, got ${JSON.stringify(cwd)}`);
  }
  return inside;
}

export interface LaunchPlan {
  command: string;
  /** Absolute, where the process sees it (`/workspace/…` in a sandbox). */
  directory: string;
  env: Record<string, string>;
}

/**
 * What the sandbox's shell reads from its stdin (`/bin/bash -s`) and runs: the environment, the
 * working directory and `sh -c <command>`, each a quoted shell word. Nothing a tenant wrote is
 * on bwrap's argument list, so no value can become one of its options; a NUL (which no text of
 * the API may hold) is refused here too, since it could end a word early.
 */
export function launchScript(plan: LaunchPlan): string {
  const lines = [
    'exec 2>&1',
    // What the platform's process inherited from its own parent is not the tenant's.
    'for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done',
  ];
  for (const [name, value] of Object.entries(plan.env)) {
    if (!ENV_NAME.test(name)) {
      throw new Error(`invalid environment variable name ${JSON.stringify(name)}`);
    }
    lines.push(`export ${name}=${quotedText(value, `the value of ${name}`)}`);
  }
  lines.push(`cd -- ${quotedText(plan.directory, 'the working directory')} || exit 126`);
  // What bash itself adds to the environment is not passed on (unless the tenant set it); stdin
  // is this script: the command gets /dev/null.
  const unset = BASH_VARIABLES.filter((name) => !(name in plan.env)).flatMap((n) => ['-u', n]);
  lines.push(
    `exec /usr/bin/env ${unset.join(' ')} /bin/sh -c -- ${quotedText(plan.command, 'the command')} </dev/null`,
  );
  return `${lines.join('\n')}\n`;
}

function quotedText(text: string, what: string): string {
  if (text.includes('\0')) throw new Error(`${what} contains a NUL character`);
  return shellQuote(text);
}
