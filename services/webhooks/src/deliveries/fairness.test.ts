import { waitFor } from '@platform/shared/testing';
import {
  buildStatusChange,
  settledDelivery,
  storeDelivery,
  subscribe,
  useTestBed,
  type TestProject,
  type TestService,
} from '../test/test-service';

// Real MongoDB and receivers on 127.0.0.1. A recorder (no worker) holds the webhooks and the
// backlog; a sender started afterwards on the same database finds it all due at once.
const bed = useTestBed();

/** The order in which deliveries arrived, across receivers: each one's account tag. */
type Arrivals = string[];

/** A receiver that notes `tag` in `arrivals` as each request arrives, and answers 204. */
const taggedReceiver = (arrivals: Arrivals, tag: string) =>
  bed.receiver(() => {
    arrivals.push(tag);
    return { status: 204 };
  });

/** `count` deliveries of `webhookId` due since `dueSince`, one millisecond apart. */
async function storeBacklog(
  service: TestService,
  p: TestProject,
  webhookId: string,
  count: number,
  dueSince: number,
) {
  for (let i = 0; i < count; i++) {
    const event = buildStatusChange(p);
    await storeDelivery(service, { ...p, webhookId }, event, {
      nextAttemptAt: new Date(dueSince + i),
    });
  }
}

/**
 * A recorder (no worker) on a fresh database, and two accounts' projects, each with a receiver
 * that notes its tag in `arrivals`.
 */
async function twoAccounts(tags: [string, string]) {
  const dbName = bed.newDatabase('webhooks_fairness');
  const recorder = await bed.start({ dbName, worker: false });
  const arrivals: Arrivals = [];
  const projects = [bed.project(recorder), bed.project(recorder)] as const;
  const targets = [
    await taggedReceiver(arrivals, tags[0]),
    await taggedReceiver(arrivals, tags[1]),
  ] as const;
  return { dbName, recorder, arrivals, projects, targets };
}

describe('delivery slots shared between accounts', () => {
  it('delivers another account’s one due delivery before one account’s backlog drains', async () => {
    const { dbName, recorder, arrivals, projects, targets } = await twoAccounts(['busy', 'quiet']);
    const [busy, quiet] = projects;
    const [busyTarget, quietTarget] = targets;
    // The busy account's backlog: 3 webhooks with 10 deliveries each, all due before the quiet
    // account's one (which, taken longest due first, would come last of 31).
    const longAgo = Date.now() - 60_000;
    for (let w = 0; w < 3; w++) {
      const webhook = await subscribe(busy, `${busyTarget.url}/hook-${w}`);
      await storeBacklog(recorder, busy, webhook.id, 10, longAgo + w * 100);
    }
    const quietWebhook = await subscribe(quiet, `${quietTarget.url}/hook`);
    await storeBacklog(recorder, quiet, quietWebhook.id, 1, Date.now() - 1_000);

    await bed.start({ dbName, concurrency: 2 });
    await waitFor(() => arrivals.length === 31, { what: 'all 31 deliveries' });

    // Accounts take turns: the quiet account's delivery is the first or second claimed (two
    // slots: the first two sends are under way together).
    expect(arrivals.indexOf('quiet')).toBeLessThan(2);
    expect(arrivals.filter((tag) => tag === 'busy')).toHaveLength(30);
    expect(quietTarget.requests).toHaveLength(1);
  });

  it('takes its turn with a delivery recorded before deliveries had an account', async () => {
    const { dbName, recorder, arrivals, projects, targets } = await twoAccounts(['busy', 'old']);
    const [busy, old] = projects;
    const [busyTarget, oldTarget] = targets;
    const busyWebhook = await subscribe(busy, `${busyTarget.url}/hook`);
    await storeBacklog(recorder, busy, busyWebhook.id, 10, Date.now() - 60_000);
    const oldWebhook = await subscribe(old, `${oldTarget.url}/hook`);
    const event = buildStatusChange(old);
    const legacy = await storeDelivery(
      recorder,
      { projectId: old.projectId, webhookId: oldWebhook.id },
      event,
      { accountId: undefined },
    );
    expect(legacy.toObject().accountId).toBeNull();

    const sender = await bed.start({ dbName, concurrency: 1 });
    await settledDelivery(sender, { _id: legacy.id }, 'succeeded');
    await waitFor(() => arrivals.length === 11, { what: 'all 11 deliveries' });

    expect(arrivals.indexOf('old')).toBeLessThan(2);
  });
});
