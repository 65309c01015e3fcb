import { readFile } from 'node:fs/promises';
import { buildDocument } from './document';
import { DOCUMENT_FILE, formatDocument } from './format';

/** The first line where two texts differ, to say where the document went stale. */
function firstDifference(a: string, b: string): string {
  const [left, right] = [a.split('\n'), b.split('\n')];
  const line = left.findIndex((text, i) => text !== right[i]);
  const at = line === -1 ? left.length : line;
  return `line ${at + 1}: committed ${JSON.stringify(left[at])}, generated ${JSON.stringify(right[at])}`;
}

describe('services/gateway/openapi.json', () => {
  it('is what the services schemas generate', async () => {
    const committed = await readFile(DOCUMENT_FILE, 'utf8');
    const generated = formatDocument(buildDocument());

    if (committed !== generated) {
      throw new Error(
        `services/gateway/openapi.json differs from the document the schemas generate: run npm run openapi (${firstDifference(committed, generated)})`,
      );
    }
    expect(JSON.parse(committed)).toMatchObject({ openapi: '3.1.0' });
  });
});
