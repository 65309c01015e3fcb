import { DEPLOYMENT_STATUSES, AppError } from '@platform/shared';
import { assertTransitionAllowed, canTransition, isFinal, type DeploymentStatus } from './status';

const ALLOWED: [DeploymentStatus, DeploymentStatus][] = [
  ['BUILDING', 'DEPLOYING'],
  ['BUILDING', 'FAILED'],
  ['BUILDING', 'CANCELLED'],
  ['DEPLOYING', 'DEPLOYED'],
  ['DEPLOYING', 'FAILED'],
  ['DEPLOYING', 'CANCELLED'],
];

const allPairs = DEPLOYMENT_STATUSES.flatMap((from) =>
  DEPLOYMENT_STATUSES.map((to) => [from, to] as [DeploymentStatus, DeploymentStatus]),
);
const isAllowed = ([from, to]: [DeploymentStatus, DeploymentStatus]) =>
  ALLOWED.some(([f, t]) => f === from && t === to);

describe('deployment status machine', () => {
  it.each(ALLOWED)('allows %s → %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
    expect(() => assertTransitionAllowed(from, to)).not.toThrow();
  });

  it.each(allPairs.filter((pair) => !isAllowed(pair)))(
    'refuses %s → %s with 409 CONFLICT',
    (from, to) => {
      expect(canTransition(from, to)).toBe(false);
      let thrown: unknown;
      try {
        assertTransitionAllowed(from, to);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(AppError);
      expect((thrown as AppError).status).toBe(409);
      expect((thrown as AppError).code).toBe('CONFLICT');
    },
  );

  it('treats DEPLOYED, FAILED and CANCELLED as final and nothing else', () => {
    const finals = DEPLOYMENT_STATUSES.filter(isFinal);
    expect(finals).toEqual(['DEPLOYED', 'FAILED', 'CANCELLED']);
  });

  it('says the deployment is already final when refusing a change to a final one', () => {
    expect(() => assertTransitionAllowed('CANCELLED', 'CANCELLED')).toThrow(
      'The deployment is already CANCELLED and can no longer change.',
    );
    expect(() => assertTransitionAllowed('BUILDING', 'DEPLOYED')).toThrow(
      'A deployment cannot go from BUILDING to DEPLOYED.',
    );
  });
});
