import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useLocation } from 'wouter';
import { api, call, idempotencyKey } from '../api/client';

type Path = { projectId: string; serviceId: string; deploymentId: string };
const BASE = '/api/projects/{projectId}/services/{serviceId}/deployments/{deploymentId}' as const;

/**
 * Cancel, redeploy and roll back a deployment. Redeploy and rollback open the new deployment's
 * page; each POST carries an Idempotency-Key, so a double click makes one deployment.
 */
export function useDeploymentActions(path: Path) {
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const refresh = () =>
    queryClient.invalidateQueries({ queryKey: ['deployments', path.serviceId] });
  const open = (deployment: { id: string }) => {
    void refresh();
    navigate(`/projects/${path.projectId}/services/${path.serviceId}/deployments/${deployment.id}`);
  };
  const headers = () => ({ 'Idempotency-Key': idempotencyKey() });
  const cancel = useMutation({
    mutationFn: () => call(api.POST(`${BASE}/cancel`, { params: { path } })),
    onSuccess: () => {
      void refresh();
      void queryClient.invalidateQueries({ queryKey: ['deployment', path.deploymentId] });
    },
  });
  const redeploy = useMutation({
    mutationFn: () => call(api.POST(`${BASE}/redeploy`, { params: { path }, headers: headers() })),
    onSuccess: open,
  });
  const rollback = useMutation({
    mutationFn: () => call(api.POST(`${BASE}/rollback`, { params: { path }, headers: headers() })),
    onSuccess: open,
  });
  return { cancel, redeploy, rollback, error: cancel.error ?? redeploy.error ?? rollback.error };
}
