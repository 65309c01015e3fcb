import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../checker';

/**
 * A setting of docker-compose.yml's Kafka broker: the server.properties line that
 * scripts/infra/compose-kafka.sh (the kafka service's command) writes, as written there (shell
 * variables unexpanded); undefined if it writes none.
 */
export function composeKafkaProperty(name: string): string | undefined {
  const script = fs.readFileSync(path.join(REPO_ROOT, 'scripts/infra/compose-kafka.sh'), 'utf8');
  const start = script.indexOf('cat >"$RUN_DIR/server.properties" <<EOF');
  const end = script.indexOf('\nEOF', start);
  if (start < 0 || end < 0) throw new Error('compose-kafka.sh: no server.properties heredoc');
  const line = script
    .slice(start, end)
    .split('\n')
    .find((l) => l.startsWith(`${name}=`));
  return line?.slice(name.length + 1);
}
