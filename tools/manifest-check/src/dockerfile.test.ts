import fs from 'node:fs';
import path from 'node:path';
import {
  CHECKER_BUILD_TIMEOUT_MS,
  REPO_ROOT,
  describeProblems,
  loadDockerfile,
  type ComposeResult,
  type DockerfileResult,
} from './checker';
import { DEV_IDP, SERVICES, SERVICE_NAMES } from './kubernetes';
import { composeProject } from './test/rendered';

/** Each Node process built from the repository: its workspace and the port it listens on. */
const NODE_PROCESSES: Record<string, { workspace: string; port: number }> = {
  ...Object.fromEntries(
    SERVICE_NAMES.map((name) => [
      name,
      { workspace: `services/${name}`, port: SERVICES[name].port },
    ]),
  ),
  'dev-idp': { workspace: 'tools/dev-idp', port: DEV_IDP.port },
};

const NODE_IMAGE = 'docker.io/library/node:20-bookworm-slim';

/** Files named like a Dockerfile anywhere in the repository, outside dependencies and builds. */
function dockerfilesInRepository(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (['node_modules', '.git', 'dist'].includes(entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      // Dockerfile, dockerfile, Dockerfile.dev, service.Dockerfile, Containerfile (not dockerfile.go).
      else if (
        /^(docker|container)file$/i.test(entry.name) ||
        /^(Docker|Container)file\./.test(entry.name) ||
        /\.(docker|container)file$/i.test(entry.name)
      ) {
        found.push(path.relative(REPO_ROOT, full));
      }
    }
  };
  walk(REPO_ROOT);
  return found.sort();
}

describe('the Dockerfile', () => {
  let compose: ComposeResult;
  /** Each Compose service built from the repository, with the Dockerfile loaded for its build. */
  const builds: Record<string, { build: any; init: boolean; dockerfile: DockerfileResult }> = {};

  beforeAll(async () => {
    compose = await composeProject();
    for (const [name, service] of Object.entries<any>(compose.project?.services ?? {})) {
      if (!service.build) continue;
      const file = path.resolve(service.build.context, service.build.dockerfile ?? 'Dockerfile');
      builds[name] = {
        build: service.build,
        init: service.init ?? false,
        dockerfile: await loadDockerfile(file, service.build.args ?? {}, service.build.target),
      };
    }
  }, CHECKER_BUILD_TIMEOUT_MS);

  it('is the only one in the repository', () => {
    expect(dockerfilesInRepository()).toEqual(['Dockerfile']);
  });

  it('builds every Node process in docker-compose.yml, and nothing else is built there', () => {
    expect(describeProblems(compose.problems)).toBe('');
    expect(Object.keys(builds).sort()).toEqual(Object.keys(NODE_PROCESSES).sort());
    for (const [name, { build }] of Object.entries(builds)) {
      expect([name, build.context, build.dockerfile]).toEqual([name, REPO_ROOT, 'Dockerfile']);
    }
  });

  it('loads in BuildKit’s Dockerfile frontend with each service’s arguments, without a failing build check', () => {
    for (const [name, { dockerfile }] of Object.entries(builds)) {
      expect([name, describeProblems(dockerfile.problems)]).toEqual([name, '']);
      expect([name, dockerfile.warnings]).toEqual([name, []]);
      expect([name, dockerfile.image]).not.toEqual([name, null]);
    }
  });

  it('is given only build arguments it uses, and a WORKSPACE and PORT always', () => {
    for (const [name, { build, dockerfile }] of Object.entries(builds)) {
      const used = dockerfile.args.map((arg) => arg.name);
      const unused = Object.keys(build.args ?? {}).filter((arg) => !used.includes(arg));
      expect([name, unused]).toEqual([name, []]);
      const value = (arg: string) => dockerfile.args.find((a) => a.name === arg)?.value ?? '';
      expect([name, value('WORKSPACE') !== '', value('PORT') !== '']).toEqual([name, true, true]);
    }
  });

  it('names in WORKSPACE an npm workspace of the lock, with package.json and tsconfig.json', () => {
    const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8'));
    for (const [name, { build }] of Object.entries(builds)) {
      const workspace: string = build.args.WORKSPACE;
      expect([name, workspace]).toEqual([name, NODE_PROCESSES[name]!.workspace]);
      for (const file of ['package.json', 'tsconfig.json']) {
        expect([name, file, fs.existsSync(path.join(REPO_ROOT, workspace, file))]).toEqual([
          name,
          file,
          true,
        ]);
      }
      const packageName = JSON.parse(
        fs.readFileSync(path.join(REPO_ROOT, workspace, 'package.json'), 'utf8'),
      ).name;
      // npm lists a workspace as a link from node_modules/<name> to its directory.
      expect([name, lock.packages[`node_modules/${packageName}`]]).toEqual([
        name,
        expect.objectContaining({ resolved: workspace, link: true }),
      ]);
    }
  });

  it('copies the files a workspace reads at run time, which exist (RUNTIME_FILES)', () => {
    const runtimeFiles = (name: string): string[] =>
      (builds[name]!.build.args.RUNTIME_FILES ?? '').split(/\s+/).filter(Boolean);
    for (const name of Object.keys(builds)) {
      for (const file of runtimeFiles(name)) {
        const full = path.join(REPO_ROOT, builds[name]!.build.args.WORKSPACE, file);
        expect([name, file, fs.existsSync(full)]).toEqual([name, file, true]);
      }
    }
    // services/gateway/src/main.ts reads it. deployments reads nothing besides dist/ (its
    // simulated pipeline scripts are gone: it builds and runs the services' own code).
    expect(runtimeFiles('gateway')).toContain('openapi.json');
    expect(runtimeFiles('deployments')).toEqual([]);
  });

  it("builds the web dashboard into the gateway's image (BUILD_ALSO), and only there", () => {
    const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8'));
    for (const [name, { build }] of Object.entries(builds)) {
      const also = (build.args.BUILD_ALSO ?? '').split(/\s+/).filter(Boolean);
      expect([name, also]).toEqual([name, name === 'gateway' ? ['apps/dashboard'] : []]);
      for (const workspace of also) {
        const manifest = JSON.parse(
          fs.readFileSync(path.join(REPO_ROOT, workspace, 'package.json'), 'utf8'),
        );
        // `npm run build --workspace` in the image: a workspace of the lock with a build script.
        expect([workspace, typeof manifest.scripts?.build]).toEqual([workspace, 'string']);
        expect(lock.packages[`node_modules/${manifest.name}`]).toEqual(
          expect.objectContaining({ resolved: workspace, link: true }),
        );
      }
    }
  });

  it('installs git and bubblewrap for deployments, and makes its BUILDS_DIR and RUNTIME_DIR owned by node', () => {
    const words = (value: string | undefined) => (value ?? '').split(/\s+/).filter(Boolean);
    const { args } = builds.deployments!.build;
    // fetch-commit.ts runs git; the sandbox runs bwrap (and prlimit, setpriv: util-linux, in
    // every Debian image); https repositories need the CA certificates.
    expect(words(args.PACKAGES)).toEqual(
      expect.arrayContaining(['git', 'bubblewrap', 'ca-certificates']),
    );
    const environment = compose.project!.services.deployments.environment;
    expect(words(args.DATA_DIRS).sort()).toEqual(
      [environment.BUILDS_DIR, environment.RUNTIME_DIR].sort(),
    );
    // The other images install nothing and make no directory.
    for (const [name, { build }] of Object.entries(builds)) {
      if (name === 'deployments') continue;
      expect([name, build.args.PACKAGES, build.args.DATA_DIRS]).toEqual([
        name,
        undefined,
        undefined,
      ]);
    }
  });

  it('starts from node:20-bookworm-slim only', () => {
    for (const [name, { dockerfile }] of Object.entries(builds)) {
      expect([name, dockerfile.baseImages]).toEqual([name, [NODE_IMAGE]]);
    }
  });

  it('runs `node dist/main.js` in the workspace as the user node, with NODE_ENV=production, exposing its port', () => {
    for (const [name, { dockerfile }] of Object.entries(builds)) {
      const { workspace, port } = NODE_PROCESSES[name]!;
      const image = dockerfile.image!;
      expect([name, image.User]).toEqual([name, 'node']);
      expect([name, image.WorkingDir]).toEqual([name, `/app/${workspace}`]);
      expect([name, image.Cmd]).toEqual([name, ['node', 'dist/main.js']]);
      expect([name, image.Env]).toEqual([name, expect.arrayContaining(['NODE_ENV=production'])]);
      expect([name, Object.keys(image.ExposedPorts ?? {})]).toEqual([name, [`${port}/tcp`]]);
    }
  });

  it('runs deployments under tini, which reaps the orphans of the processes it starts; the others under Compose’s init', () => {
    for (const [name, { dockerfile, init }] of Object.entries(builds)) {
      const tini = JSON.stringify(dockerfile.image!.Entrypoint) === '["/usr/bin/tini","--"]';
      // Two inits would be one too many; none would leave zombies.
      expect([name, tini, init]).toEqual([name, name === 'deployments', name !== 'deployments']);
    }
  });

  it('installs with `npm install` and the committed lock, not `npm ci`, production dependencies only in the image', () => {
    const instructions = fs
      .readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('#'))
      .join('\n')
      .replace(/\\\n/g, ' ');
    expect(instructions).not.toMatch(/npm\s+(ci|clean-install|install-clean)\b/);
    expect(instructions).toMatch(/npm install [^\n]*--omit=dev/);
  });
});
