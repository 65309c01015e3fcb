import { Lifecycle } from '@platform/shared';
import { testLogger } from '@platform/shared/testing';
import { openLocalSteps } from '../local.compose';
import { SourceSnapshots } from '../source/snapshot';
import { useHarness } from '../test/harness';
import { PhaseTimer } from './phase-timer';
import type { StepContext } from './deployment-steps';
import type { LocalSteps } from './steps';

// No worker: the test runs the real build step itself, with a context it controls.
const h = useHarness();

describe('a build whose output cannot be handled', () => {
  let steps: LocalSteps;
  const lifecycle = new Lifecycle(testLogger('containment'));
  beforeAll(async () => {
    ({ steps } = await openLocalSteps(
      h.config,
      { logger: testLogger('steps'), lifecycle },
      {
        snapshots: new SourceSnapshots(h.models.sources),
        builds: h.builds,
        repository: h.repository,
      },
    ));
  });
  afterAll(() => lifecycle.shutdown('test over'));

  it('ends only that build, failed with the reason, instead of the service', async () => {
    const { service, id } = await h.newDeployment(
      {},
      { buildCommand: 'echo first; sleep 600; echo never' },
    );
    const deployment = (await h.repository.find(service, id))!;
    const printed: string[] = [];
    const context: StepContext = {
      deployment,
      attempt: 1,
      output(text) {
        if (text.includes('first')) throw new RangeError('Invalid string length');
        printed.push(text);
      },
      line: () => undefined,
      signal: new AbortController().signal,
      runsAgain: () => false,
      timer: new PhaseTimer(),
    };

    const outcome = await steps.build(context);

    expect(outcome).toEqual({
      ok: false,
      reason:
        'The build’s output could not be handled (Invalid string length): the build was stopped.',
    });
    // Stopped there: nothing after the output that could not be handled.
    expect(printed.join('')).not.toContain('never');
  });
});
