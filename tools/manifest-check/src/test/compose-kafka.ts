import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../checker';

const INFRA = path.join(REPO_ROOT, 'scripts/infra');

/**
 * The lines `kafka_broker_properties ARGS` (scripts/infra/kafka-broker.sh, which both brokers
 * source) writes, run by bash with its arguments as written in the caller (shell variables
 * unexpanded, `"$ADMIN_USER"` stays `$ADMIN_USER`).
 */
function sharedBrokerLines(call: string): string[] {
  const args = call
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/^"|"$/g, ''));
  const output = execFileSync(
    'bash',
    ['-c', '. "$0/kafka-broker.sh" && kafka_broker_properties "$@"', INFRA, ...args],
    { encoding: 'utf8' },
  );
  return output.split('\n');
}

/**
 * A setting of docker-compose.yml's Kafka broker: the server.properties line that
 * scripts/infra/compose-kafka.sh (the kafka service's command) writes, its own or the shared ones
 * it takes from kafka-broker.sh, as written there (shell variables unexpanded); undefined if it
 * writes none.
 */
export function composeKafkaProperty(name: string): string | undefined {
  const script = fs.readFileSync(path.join(INFRA, 'compose-kafka.sh'), 'utf8');
  const start = script.indexOf('cat >"$RUN_DIR/server.properties" <<EOF');
  const end = script.indexOf('\nEOF', start);
  if (start < 0 || end < 0) throw new Error('compose-kafka.sh: no server.properties heredoc');
  const line = script
    .slice(start, end)
    .split('\n')
    .flatMap((l) => {
      const shared = /^\$\(kafka_broker_properties (.*)\)$/.exec(l);
      return shared ? sharedBrokerLines(shared[1]!) : [l];
    })
    .find((l) => l.startsWith(`${name}=`));
  return line?.slice(name.length + 1);
}
