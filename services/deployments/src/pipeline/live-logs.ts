import { variableSecretContext, type Logger, type SecretBox } from '@platform/shared';
import type { DeploymentLogsDoc } from '../deployments/deployments.model';
import type { Models } from '../models';
import type { AppLogs } from '../runtime/app-logs';
import type { SourceSnapshots } from '../source/snapshot';
import type { LogStore } from '../deployments/log-store';
import { SecretMask } from './secret-mask';

/** Runtime states whose log may still grow: the app runs, or restarts after a crash. */
const FOLLOWED = new Set(['live', 'restarting', 'crashed']);

/**
 * What a deployed app prints after its deployment is DEPLOYED (and what the runtime says of it:
 * a crash, the restart after a backoff, giving up) goes on into the deployment's log. Each poll
 * (compose.ts: every RUNTIME_LOG_POLL_INTERVAL, 250 ms, on the local runtime) reads every serving
 * release's log from where the deployment's log ends (`release.offset` of its log's head, set by
 * the deploy step) and appends its whole lines, masked, conditional on that offset, so two
 * pollers never append the same output twice. A release whose output has not grown since this
 * poller's last append costs one read of the runtime, not of the database too.
 */
export class LiveLogs {
  /** Per release: the mask holding back what might be the start of a secret. */
  private readonly masks = new Map<string, SecretMask>();
  /** Per release: where this poller's last append left its deployment's log. */
  private readonly offsets = new Map<string, number>();

  constructor(
    private readonly options: {
      models: Models;
      /** The runtime's apps and their output (the local runtime's RuntimeClient, Kubernetes'). */
      runtime: AppLogs;
      snapshots: SourceSnapshots;
      secretBox: SecretBox;
      logs: LogStore;
      logger: Logger;
    },
  ) {}

  async poll(): Promise<void> {
    const releases = (await this.options.runtime.list()).filter((r) => FOLLOWED.has(r.state));
    const current = new Set(releases.map((r) => r.releaseId));
    for (const id of this.masks.keys()) if (!current.has(id)) this.masks.delete(id);
    for (const id of this.offsets.keys()) if (!current.has(id)) this.offsets.delete(id);
    for (const release of releases) {
      await this.follow(release.releaseId).catch((err: unknown) =>
        this.options.logger.warn(
          { err: (err as Error).message, releaseId: release.releaseId },
          'could not copy an app’s output into its deployment’s log',
        ),
      );
    }
  }

  private async follow(releaseId: string): Promise<void> {
    const { models, runtime, logs } = this.options;
    const known = this.offsets.get(releaseId);
    // Nothing new since the last append here: no need to ask the database where the log is.
    const peek = known === undefined ? undefined : await runtime.readLog(releaseId, known);
    if (peek && !peek.text.includes('\n')) return;
    const doc = await models.logs
      .findOne({ 'release.id': releaseId }, { release: 1, serviceId: 1 })
      .lean<DeploymentLogsDoc>();
    if (!doc?.release) return;
    const { text, nextOffset } =
      peek && doc.release.offset === known
        ? peek
        : await runtime.readLog(releaseId, doc.release.offset);
    // Whole lines only: a line still being printed is read again next time.
    const complete = text.slice(0, text.lastIndexOf('\n') + 1);
    if (!complete) return;
    const mask = await this.maskOf(releaseId, doc);
    // Not offset + what was read: a read from output no longer kept starts with a line of its own.
    // A line not yet ended comes only from a runtime counting bytes (AppLogs.readLog).
    const offset = nextOffset - Buffer.byteLength(text.slice(complete.length));
    const appended = await logs.append(doc._id, mask.write(complete), {
      where: { 'release.id': releaseId, 'release.offset': doc.release.offset },
      set: { 'release.offset': offset },
    });
    // Another poller appended first: read where the log is from the database next time.
    if (appended) this.offsets.set(releaseId, offset);
    else this.offsets.delete(releaseId);
  }

  private async maskOf(releaseId: string, doc: DeploymentLogsDoc): Promise<SecretMask> {
    let mask = this.masks.get(releaseId);
    if (!mask) {
      const source = await this.options.snapshots.find(doc._id);
      const secrets = (source?.variables ?? []).flatMap((v) =>
        v.secret
          ? [this.options.secretBox.open(v.sealed, variableSecretContext(doc.serviceId, v.name))]
          : [],
      );
      mask = new SecretMask(secrets);
      this.masks.set(releaseId, mask);
    }
    return mask;
  }
}
