import { baseImagesOf, pinBaseImages } from './dockerfile';

const REGISTRY = '127.0.0.1:5000';
const DIGEST = `sha256:${'a'.repeat(64)}`;

describe("a Dockerfile's FROM images", () => {
  test('are the platform base images it names, by tag or digest, with or without the registry', () => {
    const dockerfile = [
      '# syntax is ignored',
      'FROM platform/node:22.23.3 AS build',
      'RUN npm ci',
      `from --platform=linux/amd64 ${REGISTRY}/platform/node@${DIGEST} as final`,
      'COPY --from=build /app /app',
    ].join('\n');

    expect(baseImagesOf(dockerfile, REGISTRY)).toEqual({
      images: new Map([
        ['platform/node:22.23.3', { repository: 'platform/node', reference: '22.23.3' }],
        [`${REGISTRY}/platform/node@${DIGEST}`, { repository: 'platform/node', reference: DIGEST }],
      ]),
    });
  });

  test('leave out earlier stages and scratch', () => {
    const dockerfile = 'FROM platform/node AS Base\nFROM base AS app\nFROM scratch\n';

    expect(baseImagesOf(dockerfile, REGISTRY)).toEqual({
      images: new Map([['platform/node', { repository: 'platform/node', reference: 'latest' }]]),
    });
  });

  test.each([
    ['no FROM', 'RUN true', 'the Dockerfile has no FROM line'],
    [
      'an image of Docker Hub',
      'FROM node:22',
      "line 1: FROM node:22: only the platform's base images (platform/…, e.g. platform/node:22.23.3) can be built from here",
    ],
    [
      "a tenant's image in the platform's registry",
      `RUN true\nFROM ${REGISTRY}/apps/abc:1`,
      `line 2: FROM ${REGISTRY}/apps/abc:1: only the platform's base images (platform/…, e.g. platform/node:22.23.3) can be built from here`,
    ],
    [
      'another registry',
      'FROM ghcr.io/platform/node:1',
      "line 1: FROM ghcr.io/platform/node:1: only the platform's base images (platform/…, e.g. platform/node:22.23.3) can be built from here",
    ],
    [
      'a variable',
      'ARG V=22\nFROM platform/node:$V',
      'line 2: FROM platform/node:$V: a FROM naming its image with a variable is not supported',
    ],
    [
      'a FROM continued on the next line',
      'FROM platform/node \\\n  AS build',
      'line 1: a FROM must be one line, FROM [--platform=…] <image> [AS <stage>]',
    ],
  ])('refuse %s, saying why', (_what, dockerfile, problem) => {
    expect(baseImagesOf(dockerfile, REGISTRY)).toEqual({ problem });
  });

  test('are pinned line by line, the rest of the file as written', () => {
    const dockerfile =
      'FROM platform/node:22 AS build\r\nRUN echo FROM x\nFROM build\nFROM  platform/node:22\n';
    const pinned = `${REGISTRY}/platform/node@${DIGEST}`;

    expect(pinBaseImages(dockerfile, new Map([['platform/node:22', pinned]]))).toBe(
      `FROM ${pinned} AS build\nRUN echo FROM x\nFROM build\nFROM  ${pinned}\n`,
    );
  });
});
