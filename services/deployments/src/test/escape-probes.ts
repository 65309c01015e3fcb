import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import type { AppRepository } from '@platform/shared/testing';
import { hostAddresses, listeningPorts, type TestHosts } from './test-hosts';

/**
 * The escape suite's probes (issue 21), one set for every runtime (escape.test.ts: the local
 * sandbox; escape.kubernetes.test.ts: Jobs and pods): a script tenants' code runs as a build or an
 * app, the ways in it tries, and how its printed results are read and checked.
 *
 * `probe.js` connects to each `host:port` of PROBE_TARGETS (JSON), binds PROBE_BIND's address
 * when given, lists each directory of PROBE_FILES, resolves a public name, and prints one line a
 * result: `probe <target> CONNECTED|<error code>|timeout`, `bind <address> BOUND|<code>`,
 * `file <path> READ <entries>|<code>`, `dns registry.npmjs.org <address>|<code>`, then
 * `probes done`.
 */
export const PROBE = `
const net = require('net');
const dns = require('dns');
const targets = JSON.parse(process.env.PROBE_TARGETS || '[]');
const probe = (target) => new Promise((resolve) => {
  const at = target.lastIndexOf(':');
  const host = target.slice(0, at).replace(/^\\[|\\]$/g, '');
  const socket = net.connect({ host, port: Number(target.slice(at + 1)), timeout: 3000 });
  const done = (result) => { socket.destroy(); resolve('probe ' + target + ' ' + result); };
  socket.once('connect', () => done('CONNECTED'));
  socket.once('timeout', () => done('timeout'));
  socket.once('error', (e) => done(e.code || e.message));
});
const bind = (address) => new Promise((resolve) => {
  const server = net.createServer();
  server.once('error', (e) => resolve('bind ' + address + ' ' + e.code));
  server.listen(8080, address, () => { server.close(); resolve('bind ' + address + ' BOUND'); });
});
(async () => {
  for (const line of await Promise.all(targets.map(probe))) console.log(line);
  if (process.env.PROBE_BIND) console.log(await bind(process.env.PROBE_BIND));
  for (const file of JSON.parse(process.env.PROBE_FILES || '[]')) {
    let result;
    try { result = 'READ ' + require('fs').readdirSync(file).length; } catch (e) { result = e.code; }
    console.log('file ' + file + ' ' + result);
  }
  const found = await dns.promises.lookup('registry.npmjs.org').then((a) => a.address, (e) => e.code);
  console.log('dns registry.npmjs.org ' + found);
  console.log('probes done');
})();
`;

/** A commit of the fixture app with `probe.js` beside it. */
export const withProbe = (repository: AppRepository) =>
  repository.commit({ files: { 'probe.js': PROBE } });

/** The variables that tell `probe.js` what to try. */
export function probeVariables(what: { targets?: string[]; files?: string[]; bind?: string }) {
  return [
    ...(what.targets ? [{ name: 'PROBE_TARGETS', value: JSON.stringify(what.targets) }] : []),
    ...(what.files ? [{ name: 'PROBE_FILES', value: JSON.stringify(what.files) }] : []),
    ...(what.bind ? [{ name: 'PROBE_BIND', value: what.bind }] : []),
  ];
}

/** What the host itself reaches of a test host: the control that makes a refusal mean something. */
export function answerOf(address: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect({ host: address, port, timeout: 5_000 });
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.once('end', () => resolve(text.trim()));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    socket.once('timeout', () => resolve('timeout'));
  });
}

/** The host's own connection to `target` (`host:port`): CONNECTED or why not, as probe.js says. */
export function hostConnects(target: string): Promise<string> {
  const at = target.lastIndexOf(':');
  return new Promise((resolve) => {
    const socket = connect({ host: target.slice(0, at), port: Number(target.slice(at + 1)) });
    const done = (result: string) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(5_000);
    socket.once('connect', () => done('CONNECTED'));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? 'error'));
    socket.once('timeout', () => done('timeout'));
  });
}

/**
 * Every way into this machine and its neighbours a tenant must not have: each port it listens on
 * now (read at test time) at each of its IPv4 addresses and at `::1`; each test host, and its
 * IPv4-mapped IPv6 form.
 */
export function everyWayIn(hosts: TestHosts): string[] {
  const ports = listeningPorts();
  const onHost = hostAddresses().flatMap((address) => ports.map((port) => `${address}:${port}`));
  const onLoopbackV6 = ports.map((port) => `[::1]:${port}`);
  const testHosts = hosts.addresses.flatMap((address) => [
    `${address}:${hosts.port}`,
    `[::ffff:${address}]:${hosts.port}`,
  ]);
  return [...onHost, ...onLoopbackV6, ...testHosts];
}

/**
 * What a deployment's log holds of its build step: what follows (the deploy step, the app's
 * output on a runtime that copies it) may print the same kind of lines.
 */
export function buildStepOf(logs: string): string {
  const end = logs.indexOf('==> build step finished');
  return end === -1 ? logs : logs.slice(0, end);
}

/** The probe's lines of a log, by target. */
export function probesIn(logs: string): Map<string, string> {
  const results = new Map<string, string>();
  for (const match of logs.matchAll(/^probe (\S+) (\S+)$/gm)) results.set(match[1]!, match[2]!);
  return results;
}

/** The targets of `logs`' probes that connected. */
export const connectedIn = (logs: string) =>
  [...probesIn(logs)].filter(([, result]) => result === 'CONNECTED').map(([target]) => target);

/**
 * Every target was tried (the probes ran to their end), none connected but the `reachable` ones
 * (a way in the tenant must have, the control that probes get anywhere at all), and DNS answered
 * with a public name's address.
 */
export function expectNoWayIn(logs: string, targets: string[], reachable: string[] = []): void {
  expect(logs).toContain('probes done');
  expect([...probesIn(logs).keys()].sort()).toEqual([...targets, ...reachable].sort());
  expect(connectedIn(logs).sort()).toEqual([...reachable].sort());
  expect(logs).toMatch(/^dns registry\.npmjs\.org \d+\.\d+\.\d+\.\d+$/m);
}

/**
 * Each of the host's `files` exists on the host (so a refusal is the boundary's, not a missing
 * file) and `probe.js` found none of them.
 */
export function expectHostFilesHidden(logs: string, files: string[]): void {
  expect(files.filter((file) => !existsSync(file))).toEqual([]);
  const results = [...logs.matchAll(/^file (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]);
  expect(results).toEqual(files.map((file) => [file, 'ENOENT']));
}
