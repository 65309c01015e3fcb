import { DEPLOYMENT_STATUSES, AppError } from '@platform/shared';
import {
  assertTransitionAllowed,
  canTransition,
  isFinal,
  resolveStatus,
  type DeploymentStatus,
} from './status';

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

describe('resolveStatus', () => {
  const created = new Date('2026-01-01T00:00:00Z');
  const at = (seconds: number) => new Date(created.getTime() + seconds * 1000);

  it('is BUILDING since creation when nothing changed', () => {
    expect(resolveStatus(created, [{ from: null, to: 'BUILDING', at: created }])).toEqual({
      status: 'BUILDING',
      statusChangedAt: created,
      deployedAt: null,
    });
    expect(resolveStatus(created, []).status).toBe('BUILDING');
  });

  it('follows the changes to DEPLOYED, in whatever order they were read', () => {
    const changes = [
      { from: 'DEPLOYING' as const, to: 'DEPLOYED' as const, at: at(20) },
      { from: null, to: 'BUILDING' as const, at: created },
      { from: 'BUILDING' as const, to: 'DEPLOYING' as const, at: at(10) },
    ];

    expect(resolveStatus(created, changes)).toEqual({
      status: 'DEPLOYED',
      statusChangedAt: at(20),
      deployedAt: at(20),
    });
  });

  it('stops at a cancel and has no deployedAt', () => {
    expect(resolveStatus(created, [{ from: 'BUILDING', to: 'CANCELLED', at: at(3) }])).toEqual({
      status: 'CANCELLED',
      statusChangedAt: at(3),
      deployedAt: null,
    });
  });

  it('ignores a change that the lifecycle does not allow', () => {
    expect(resolveStatus(created, [{ from: 'BUILDING', to: 'DEPLOYED', at: at(3) }]).status).toBe(
      'BUILDING',
    );
  });
});
