import {
  sourceProblem,
  variableSecretContext,
  variableValueProblem,
  type SecretBox,
} from '@platform/shared';
import type { Deployment } from '../deployments/deployments.repository';
import type { SourceSnapshot, SourceSnapshots } from '../source/snapshot';

/** A variable as a step uses it: a secret one opened. */
export interface OpenedVariable {
  name: string;
  value: string;
  secret: boolean;
}

/** A deployment's source snapshot with its variables opened (once): what its steps run with. */
export type OpenedSource = Omit<SourceSnapshot, 'variables'> & { variables: OpenedVariable[] };

/**
 * The deployment's snapshot, its secret variables opened, checked again with the rules the
 * projects service applies (libs/shared source-rules: the snapshot may predate them, or come
 * from a projects service that did not apply them), secret values included. A field that
 * breaks them is the line the deployment fails with, naming it (a string); nothing of it has
 * reached a command line. null: no snapshot.
 */
export async function openSource(
  d: Deployment,
  snapshots: SourceSnapshots,
  secretBox: SecretBox,
): Promise<OpenedSource | string | null> {
  const source = await snapshots.find(d.id);
  if (!source) return null;
  const problem = sourceProblem(source);
  if (problem) return `The service's source is refused: ${problem}`;
  const variables: OpenedVariable[] = [];
  for (const [index, variable] of source.variables.entries()) {
    if (!variable.secret) {
      variables.push({ name: variable.name, value: variable.value, secret: false });
      continue;
    }
    const value = secretBox.open(
      variable.sealed,
      variableSecretContext(d.serviceId, variable.name),
    );
    const refused = variableValueProblem(value);
    if (refused) {
      return `The service's source is refused: variable ${index + 1} ${variable.name} (value): ${refused}`;
    }
    variables.push({ name: variable.name, value, secret: true });
  }
  return { ...source, variables };
}

/** The deployment's environment: PLATFORM_*, a minimal PATH and HOME, and its variables. */
export function environmentOf(
  d: Deployment,
  source: OpenedSource,
  path: string,
): Record<string, string> {
  const env: Record<string, string> = { PATH: path, HOME: '/workspace' };
  for (const variable of source.variables) env[variable.name] = variable.value;
  // Last, so no variable can change them (the names are reserved: projects refuses them).
  return {
    ...env,
    PLATFORM_DEPLOYMENT_ID: d.id,
    PLATFORM_SERVICE_ID: d.serviceId,
    PLATFORM_PROJECT_ID: d.projectId,
    PLATFORM_COMMIT_HASH: d.commitHash,
  };
}

/** What the log masks: the secret variables' values. */
export const secretValuesOf = (source: OpenedSource) =>
  source.variables.filter((variable) => variable.secret).map((variable) => variable.value);
