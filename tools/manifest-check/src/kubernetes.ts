import fs from 'node:fs';
import type { K8sObject } from './checker';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered objects are plain JSON */

/** The five services, their ports and where their environment schema lives. */
export const SERVICES = {
  gateway: { port: 8080, config: 'services/gateway/src/config.ts' },
  auth: { port: 4001, config: 'services/auth/src/config.ts' },
  projects: { port: 4002, config: 'services/projects/src/config.ts' },
  deployments: { port: 4003, config: 'services/deployments/src/config.ts' },
  webhooks: { port: 4004, config: 'services/webhooks/src/config.ts' },
} as const;
export type ServiceName = keyof typeof SERVICES;
export const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

/**
 * The deployments pods' second port, `router`: the apps' router (its RUNTIME_ROUTER_PORT), where
 * the gateway's RUNTIME_ROUTER_URL points (apps-routing.test.ts checks they agree).
 */
export const APPS_ROUTER_PORT = 4020;

export const DEV_IDP = { port: 4010, config: 'tools/dev-idp/src/config.ts' } as const;

export const NAMESPACE = 'platform';

export function objectsOfKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function findObject(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} named ${name} in the rendered manifests`);
  return found;
}

/** The first container of a Deployment's pod template (each of ours has exactly one). */
export function mainContainer(deployment: K8sObject): any {
  return deployment.spec.template.spec.containers[0];
}

/** Values of a rendered Secret, decoded (data is base64, stringData is plain). */
export function secretValues(secret: K8sObject): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries<string>(secret.data ?? {})) {
    values[key] = Buffer.from(value, 'base64').toString('utf8');
  }
  Object.assign(values, secret.stringData ?? {});
  return values;
}

/** KEY=VALUE lines, as kustomize's `envs:` and `kubectl create secret --from-env-file` read them. */
export function readEnvFile(file: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const eq = trimmed.indexOf('=');
    if (eq < 1) throw new Error(`${file}: not KEY=VALUE: ${line}`);
    values[trimmed.slice(0, eq)] = trimmed.slice(eq + 1);
  }
  return values;
}

export interface ResolvedEnv {
  env: Record<string, string>;
  /** References that point nowhere: a missing ConfigMap, Secret or key. */
  unresolved: string[];
}

/**
 * The environment a container starts with, as the kubelet builds it: envFrom first, then env
 * (later entries win). Secrets not in the rendering (production's, created outside git) are
 * looked up in `externalSecrets`, by Secret name.
 */
export function containerEnv(
  container: any,
  objects: K8sObject[],
  externalSecrets: Record<string, Record<string, string>> = {},
): ResolvedEnv {
  const env: Record<string, string> = {};
  const unresolved: string[] = [];
  const configMap = (name: string) =>
    objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name)?.data as
      Record<string, string> | undefined;
  const secret = (name: string) => {
    const rendered = objects.find((o) => o.kind === 'Secret' && o.metadata.name === name);
    return rendered ? secretValues(rendered) : externalSecrets[name];
  };

  for (const source of container.envFrom ?? []) {
    const prefix: string = source.prefix ?? '';
    const ref = source.configMapRef ?? source.secretRef;
    const values = source.configMapRef ? configMap(ref.name) : secret(ref.name);
    if (!values) {
      if (!ref.optional) unresolved.push(`envFrom ${ref.name}`);
      continue;
    }
    for (const [key, value] of Object.entries(values)) env[prefix + key] = value;
  }
  for (const entry of container.env ?? []) {
    if (entry.value !== undefined) {
      env[entry.name] = entry.value;
      continue;
    }
    const from = entry.valueFrom ?? {};
    const ref = from.configMapKeyRef ?? from.secretKeyRef;
    if (!ref) {
      env[entry.name] = `<${Object.keys(from).join(',')}>`; // fieldRef and the like
      continue;
    }
    const values = from.configMapKeyRef ? configMap(ref.name) : secret(ref.name);
    const value = values?.[ref.key];
    if (value === undefined) {
      if (!ref.optional) unresolved.push(`${entry.name} from ${ref.name}.${ref.key}`);
      continue;
    }
    env[entry.name] = value;
  }
  return { env, unresolved };
}

/** Does `selector` (matchLabels and matchExpressions) select `labels`? An empty selector does. */
export function selectorMatches(selector: any, labels: Record<string, string> = {}): boolean {
  if (!selector) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    switch (operator) {
      case 'In':
        if (!has || !values.includes(labels[key])) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[key])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        throw new Error(`unknown selector operator ${operator}`);
    }
  }
  return true;
}
