/** Where a service's code comes from and how it runs (contracts.md, Services). */
export interface ServiceSettings {
  repository: string | null;
  branch: string;
  rootDirectory: string;
  buildCommand: string | null;
  startCommand: string | null;
  healthCheckPath: string;
  /** How many copies of the live deployment serve `url` (REPLICAS_MIN–REPLICAS_MAX). */
  replicas: number;
  /**
   * A Dockerfile in the repository (a path from its root) that builds the app's image instead of
   * `buildCommand` on the platform's base image; null: none. Kubernetes runner only.
   */
  dockerfilePath: string | null;
}

/** The settings of a service that was given none (contracts.md, Services): nothing to build. */
export const DEFAULT_SERVICE_SETTINGS: Readonly<ServiceSettings> = Object.freeze({
  repository: null,
  branch: 'main',
  rootDirectory: '',
  buildCommand: null,
  startCommand: null,
  healthCheckPath: '/',
  replicas: 1,
  dockerfilePath: null,
});
