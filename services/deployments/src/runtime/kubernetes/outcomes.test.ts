import { buildOutcome, rolloutOutcome } from './outcomes';

describe('rolloutOutcome', () => {
  const deployment = (status: object, generation = 2) => ({
    metadata: { generation },
    spec: { replicas: 1 },
    status: { observedGeneration: 2, ...status },
  });

  it.each([
    [
      'the controller has not seen the change',
      deployment({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }, 3),
      'DEPLOYING',
    ],
    [
      'the new pod is not ready yet, the old one serves',
      deployment({ replicas: 2, updatedReplicas: 1, availableReplicas: 1 }),
      'DEPLOYING',
    ],
    [
      'the new pod is ready, the old one still terminating',
      deployment({ replicas: 2, updatedReplicas: 1, availableReplicas: 2 }),
      'DEPLOYING',
    ],
    [
      'only the new pod is left, available',
      deployment({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }),
      'DEPLOYED',
    ],
    [
      'the progress deadline passed',
      deployment({
        replicas: 2,
        updatedReplicas: 1,
        availableReplicas: 1,
        conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
      }),
      'FAILED',
    ],
  ])('is %s → %s', (_what, object, outcome) => {
    expect(rolloutOutcome(object)).toBe(outcome);
  });
});

describe('buildOutcome', () => {
  it.each([
    [{}, { state: 'running' }],
    [{ conditions: [{ type: 'Complete', status: 'True' }] }, { state: 'succeeded' }],
    [
      { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }] },
      { state: 'failed', reason: 'DeadlineExceeded' },
    ],
  ])('reads %j', (status, outcome) => {
    expect(buildOutcome({ status })).toEqual(outcome);
  });
});
