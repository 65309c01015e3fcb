import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CHECKER_BUILD_TIMEOUT_MS, REPO_ROOT } from './checker';
import { objectsOfKind, readEnvFile, secretValues } from './kubernetes';
import { realLookingSecretValue, secretsInText } from './secrets';
import { composeProject, rendered } from './test/rendered';

/** Every file of ours that a deployment reads: the compose file and everything under k8s/. */
function deploymentFiles(): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      return entry.isDirectory() ? walk(full) : [full];
    });
  return [path.join(REPO_ROOT, 'docker-compose.yml'), ...walk(path.join(REPO_ROOT, 'k8s'))];
}

describe('secrets in the committed manifests', () => {
  it('contain no credential-looking string in docker-compose.yml or k8s/', () => {
    const findings = deploymentFiles().flatMap((file) =>
      secretsInText(fs.readFileSync(file, 'utf8')).map(
        (finding) => `${path.relative(REPO_ROOT, file)}: ${finding}`,
      ),
    );
    expect(findings).toEqual([]);
  });

  it(
    'give the development Secret only obviously fake values',
    async () => {
      const { objects } = await rendered('development');
      const findings = objectsOfKind(objects, 'Secret').flatMap((secret) =>
        Object.entries(secretValues(secret)).flatMap(([key, value]) =>
          realLookingSecretValue(key, value),
        ),
      );
      expect(findings).toEqual([]);
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );

  it(
    'give compose only obviously fake development defaults for secrets',
    async () => {
      const { variables } = await composeProject();
      const findings = variables.flatMap((v) => realLookingSecretValue(v.name, v.default));
      expect(findings).toEqual([]);
    },
    CHECKER_BUILD_TIMEOUT_MS,
  );

  it('keep production’s Secret out of git: its example holds placeholders only', () => {
    const example = readEnvFile(
      path.join(REPO_ROOT, 'k8s/overlays/production/platform-secrets.example.env'),
    );
    for (const [key, value] of Object.entries(example)) {
      expect([key, value]).toEqual([key, expect.stringMatching(/<[^>]+>/)]);
    }
  });
});

describe('the secret detector', () => {
  it('flags a random 48-character secret, a password in a URL and well-known token formats', () => {
    const random = randomBytes(36).toString('base64');
    expect(realLookingSecretValue('SESSION_SECRET', random)).not.toEqual([]);
    expect(secretsInText(`SESSION_SECRET=dev-${random}`)).not.toEqual([]);
    expect(secretsInText('MONGO_URL=mongodb://admin:Tr0ub4dor3@db.internal:27017')).not.toEqual([]);
    expect(secretsInText('key: AKIAIOSFODNN7EXAMPLE')).not.toEqual([]);
    expect(secretsInText('-----BEGIN RSA PRIVATE KEY-----')).not.toEqual([]);
  });

  it('flags a secret-named value that does not say it is fake', () => {
    expect(realLookingSecretValue('INTERNAL_SECRET', 'correct horse battery staple')).not.toEqual(
      [],
    );
  });

  it('accepts development stand-ins and placeholders', () => {
    expect(
      realLookingSecretValue('INTERNAL_SECRET', 'local-development-internal-secret-0123456789'),
    ).toEqual([]);
    expect(realLookingSecretValue('SESSION_SECRET', '<placeholder: 32 random characters>')).toEqual(
      [],
    );
    expect(secretsInText('mongodb://<user>:<password>@mongodb.example.internal:27017')).toEqual([]);
  });
});
