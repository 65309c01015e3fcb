import { variableSecretContext, type Logger, type SecretBox } from '@platform/shared';
import type { DeploymentLogsDoc } from '../deployments/deployments.model';
import type { Models } from '../models';
import type { RuntimeClient } from '../runtime/local/client';
import type { SourceSnapshots } from '../source/snapshot';
import { LogBuffer } from './log-buffer';
import { SecretMask } from './secret-mask';

/** Runtime states whose log may still grow: the app runs, or restarts after a crash. */
const FOLLOWED = new Set(['live', 'restarting', 'crashed']);

/**
 * What a deployed app prints after its deployment is DEPLOYED (and what the runtime says of it:
 * a crash, the restart after a backoff, giving up) goes on into the deployment's log. Each poll
 * reads every serving release's log from where the deployment's log ends (`release.offset` of its
 * logs document, set by the deploy step) and appends it, masked, with one conditional update on
 * that offset, so two pollers never append the same output twice.
 */
export class LiveLogs {
  /** Per release: the mask holding back what might be the start of a secret. */
  private readonly masks = new Map<string, SecretMask>();

  constructor(
    private readonly options: {
      models: Models;
      runtime: RuntimeClient;
      snapshots: SourceSnapshots;
      secretBox: SecretBox;
      logLimitBytes: number;
      logger: Logger;
    },
  ) {}

  async poll(): Promise<void> {
    const releases = (await this.options.runtime.list()).filter((r) => FOLLOWED.has(r.state));
    const current = new Set(releases.map((r) => r.releaseId));
    for (const id of this.masks.keys()) if (!current.has(id)) this.masks.delete(id);
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
    const { models, runtime, logLimitBytes } = this.options;
    const doc = await models.logs
      .findOne({ 'release.id': releaseId }, { logs: 1, release: 1, serviceId: 1 })
      .lean<DeploymentLogsDoc>();
    if (!doc?.release) return;
    const { text, nextOffset } = await runtime.readLog(releaseId, doc.release.offset);
    if (nextOffset === doc.release.offset) return;
    const mask = await this.maskOf(releaseId, doc);
    const log = new LogBuffer(logLimitBytes, doc.logs);
    log.append(mask.write(text));
    await models.logs.updateOne(
      { _id: doc._id, 'release.id': releaseId, 'release.offset': doc.release.offset },
      { $set: { logs: log.toString(), 'release.offset': nextOffset } },
    );
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
