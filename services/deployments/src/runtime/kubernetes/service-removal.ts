import { k8s, type Kubernetes } from '@platform/kube';

/**
 * A deleted service's objects in the cluster: its Deployment (and so its pods), Service, Ingress
 * and variables' Secrets, found by the label every release object carries
 * (`platform.dev/service-id`, objects.ts), in whichever project namespace they are. A project's
 * namespace itself stays: its quota and policies are cheap, and a new service of the project
 * would make them again.
 */
export async function removeServiceObjects(
  kc: Kubernetes.KubeConfig,
  serviceId: string,
): Promise<void> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const networking = kc.makeApiClient(k8s.NetworkingV1Api);
  const labelSelector = `platform.dev/service-id=${serviceId},app.kubernetes.io/component=app`;
  const found = await apps.listDeploymentForAllNamespaces({ labelSelector });
  const namespaces = new Set(found.items.map((d) => d.metadata!.namespace!));
  for (const namespace of namespaces) {
    const where = { namespace, labelSelector };
    await apps.deleteCollectionNamespacedDeployment({ ...where, propagationPolicy: 'Background' });
    for (const service of (await core.listNamespacedService(where)).items) {
      await core.deleteNamespacedService({ name: service.metadata!.name!, namespace });
    }
    await networking.deleteCollectionNamespacedIngress(where);
    await core.deleteCollectionNamespacedSecret(where);
  }
}
