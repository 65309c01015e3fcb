import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestHosts, TEST_HOST_ADDRESSES, type TestHosts } from '../../test/test-hosts';
import { Sandbox } from '../sandbox';
import { TEST_LIMITS, testSandboxOptions } from '../testing';

/**
 * The egress rules of processes with different settings on one host: each sandbox is under its
 * own process's rules, whichever process started last (a test supervisor without the
 * registries' addresses once took them away from every build on the machine).
 */
const target = TEST_HOST_ADDRESSES.private10;
let hosts: TestHosts;
let scratch: string;
beforeAll(async () => {
  hosts = await startTestHosts();
  scratch = await mkdtemp(path.join(os.tmpdir(), 'egress-policies-'));
  await chmod(scratch, 0o755);
});
afterAll(async () => {
  hosts?.close();
  await rm(scratch, { recursive: true, force: true });
});

async function reaches(sandbox: Sandbox): Promise<string> {
  const workspace = await mkdtemp(path.join(scratch, 'w-'));
  let output = '';
  await sandbox.run({
    workspace,
    command: `node -e "require('net').connect(${hosts.port}, '${target}').on('data', (d) => process.stdout.write(d)).on('error', (e) => console.log(e.code))"`,
    env: { PATH: sandbox.defaultPath },
    limits: { ...TEST_LIMITS, timeoutMs: 20_000 },
    network: true,
    onOutput: (chunk) => (output += chunk),
  });
  return output.trim();
}

describe('egress rules of different settings on one host', () => {
  it("keep each sandbox under its own process's rules, whichever was installed last", async () => {
    const allowing = await Sandbox.create(
      testSandboxOptions({
        egress: { ...testSandboxOptions().egress, allow: [`${target}/32`] },
      }),
    );
    expect(await reaches(allowing)).toBe(`target ${target}`);

    const denying = await Sandbox.create(testSandboxOptions()); // installed after
    expect(await reaches(denying)).toBe('ECONNREFUSED');
    expect(await reaches(allowing)).toBe(`target ${target}`);

    await Sandbox.create(
      testSandboxOptions({ egress: { ...testSandboxOptions().egress, allow: [`${target}/32`] } }),
    ); // and again the first settings
    expect(await reaches(denying)).toBe('ECONNREFUSED');
  });
});
