/**
 * @kubernetes/client-node, the one way this repository talks to a Kubernetes API. Its 1.x line
 * is an ES module only and this repository compiles to CommonJS: Node 20.19+ require()s an ES
 * module, but TypeScript (module node16) refuses the import, so the types come through an
 * `import type` in import mode and the value through require.
 */
import type * as Kubernetes from '@kubernetes/client-node' with { 'resolution-mode': 'import' };

export const k8s: typeof Kubernetes = require('@kubernetes/client-node');
export type { Kubernetes };
