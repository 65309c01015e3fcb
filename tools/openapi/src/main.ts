import { writeFile } from 'node:fs/promises';
import { DOCUMENT_FILE, formatDocument } from './format';
import { buildDocument } from './document';

/** `npm run openapi`: writes services/gateway/openapi.json from the services' schemas. */
async function main() {
  await writeFile(DOCUMENT_FILE, formatDocument(buildDocument()));
  console.log(`wrote ${DOCUMENT_FILE}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
