import { describeWaiting, waitingFor, type AccountUsage } from './account-limits';

const limits = { maxBuilds: 2, maxApps: 3 };
const usage = (builds: number, apps: string[]): AccountUsage => ({ builds, apps: new Set(apps) });

describe('waitingFor: why a deployment still to build waits', () => {
  it('does not wait below both limits', () => {
    expect(waitingFor('s1', usage(1, ['a', 'b']), limits)).toBeNull();
  });

  it('waits for a build place when the account has ACCOUNT_MAX_BUILDS builds running', () => {
    expect(waitingFor('a', usage(2, ['a']), limits)).toEqual({
      reason: 'ACCOUNT_BUILD_LIMIT',
      limit: 2,
      inUse: 2,
    });
  });

  it('counts what is in use past a limit lowered since', () => {
    expect(waitingFor('a', usage(5, []), limits)).toMatchObject({ inUse: 5, limit: 2 });
  });

  it('keeps a new service waiting at ACCOUNT_MAX_APPS apps', () => {
    expect(waitingFor('new', usage(0, ['a', 'b', 'c']), limits)).toEqual({
      reason: 'ACCOUNT_APP_LIMIT',
      limit: 3,
      inUse: 3,
    });
  });

  it('never keeps a service already counted waiting for an app place: its deployment replaces its app', () => {
    expect(waitingFor('b', usage(0, ['a', 'b', 'c', 'd']), limits)).toBeNull();
  });

  it('says a build place first when both limits hold', () => {
    expect(waitingFor('new', usage(2, ['a', 'b', 'c']), limits)?.reason).toBe(
      'ACCOUNT_BUILD_LIMIT',
    );
  });
});

describe('describeWaiting', () => {
  it('names the setting and what frees a place', () => {
    expect(describeWaiting({ reason: 'ACCOUNT_BUILD_LIMIT', limit: 2, inUse: 2 })).toBe(
      'the account has 2 builds running (ACCOUNT_MAX_BUILDS is 2); this deployment starts when one of them ends',
    );
    expect(describeWaiting({ reason: 'ACCOUNT_APP_LIMIT', limit: 10, inUse: 10 })).toBe(
      'the account has 10 apps live (ACCOUNT_MAX_APPS is 10); this deployment starts when one of them goes (a service deleted, or a deployment of a service not live yet failed or cancelled)',
    );
  });
});
