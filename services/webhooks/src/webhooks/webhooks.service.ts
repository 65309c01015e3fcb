import {
  conflict,
  notFound,
  parseObjectId,
  validationError,
  type Page,
  type PageRequest,
} from '@platform/shared';
import { Types } from 'mongoose';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { generateWebhookSecret } from '../deliveries/signature';
import { EgressRefusedError, type EgressGuard } from '../egress/egress-guard';
import { SecretUnreadableError, type WebhookSecrets } from './webhook-secrets';
import type {
  SecretRotation,
  Webhook,
  WebhookChanges,
  WebhooksRepository,
} from './webhooks.repository';
import {
  DEFAULT_EVENTS,
  type CreateWebhookInput,
  type UpdateWebhookInput,
} from './webhooks.schemas';

export const MAX_WEBHOOKS_PER_PROJECT = 20;

/** Racing rotations (or a rotation racing the housekeeping's reseal) settle in a few rounds. */
const ROTATE_ROUNDS = 5;

export interface WebhooksServiceDeps {
  webhooks: WebhooksRepository;
  deliveries: DeliveriesRepository;
  guard: EgressGuard;
  secrets: WebhookSecrets;
  /** How long the previous secret keeps signing after a rotation (WEBHOOK_SECRET_OVERLAP). */
  secretOverlapMs: number;
  now?: () => Date;
}

/** A webhook and, when just created or rotated, its signing secret in clear (shown once). */
export interface WebhookWithSecret {
  webhook: Webhook;
  secret?: string;
}

export class WebhooksService {
  private readonly now: () => Date;

  constructor(private readonly deps: WebhooksServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Creates a webhook with a new secret, sealed before it is stored. The project's quota is
   * taken first, in one conditional update, so racing creates cannot pass it.
   */
  async createWebhook(
    accountId: string,
    projectId: string,
    input: CreateWebhookInput,
  ): Promise<Required<WebhookWithSecret>> {
    await this.assertUrlAllowed(input.url);
    const { webhooks, secrets } = this.deps;
    if (!(await webhooks.takeSlot(projectId, MAX_WEBHOOKS_PER_PROJECT))) {
      throw conflict(`A project can have at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks.`);
    }
    const id = new Types.ObjectId();
    const secret = generateWebhookSecret();
    try {
      const webhook = await webhooks.insert({
        _id: id,
        projectId,
        accountId,
        url: input.url,
        events: input.events ?? DEFAULT_EVENTS,
        secret: secrets.seal(id.toHexString(), secret),
      });
      return { webhook, secret };
    } catch (err) {
      await webhooks.releaseSlot(projectId);
      throw err;
    }
  }

  async getWebhook(projectId: string, webhookId: string): Promise<Webhook> {
    const webhook = await this.deps.webhooks.findInProject(projectId, parseWebhookId(webhookId));
    if (!webhook) throw notFound('Webhook');
    return webhook;
  }

  listWebhooks(projectId: string, request: PageRequest): Promise<Page<Webhook>> {
    return this.deps.webhooks.listInProject(projectId, request);
  }

  /**
   * Applies a PATCH; turning a webhook off also stops its pending deliveries. With
   * `rotateSecret`, the new secret is returned, and the one it replaces keeps signing beside it
   * for WEBHOOK_SECRET_OVERLAP.
   */
  async updateWebhook(
    projectId: string,
    webhookId: string,
    input: UpdateWebhookInput,
  ): Promise<WebhookWithSecret> {
    const id = parseWebhookId(webhookId);
    if (input.url !== undefined) await this.assertUrlAllowed(input.url);
    const changes: WebhookChanges = {};
    if (input.url !== undefined) changes.url = input.url;
    if (input.events !== undefined) changes.events = input.events;
    if (input.enabled === true) {
      Object.assign(changes, { enabled: true, disabledReason: null, failingSince: null });
    }
    if (input.enabled === false)
      Object.assign(changes, { enabled: false, disabledReason: 'owner' });
    let webhook = await this.deps.webhooks.updateInProject(projectId, id, changes);
    if (!webhook) throw notFound('Webhook');
    if (input.enabled === false) await this.deps.deliveries.cancelPending(id);
    if (!input.rotateSecret) return { webhook };
    const secret = generateWebhookSecret();
    webhook = await this.rotateSecret(webhook, secret);
    return { webhook, secret };
  }

  /**
   * Makes `secret` the webhook's secret and the current one its previous, in one conditional
   * update on the secret read: of racing rotations each keeps the secret it was answered with
   * as the previous of the next, never a secret nobody was shown. A current secret that does not
   * open (its key is gone) is replaced with no overlap: rotating is how its owner recovers.
   */
  private async rotateSecret(read: Webhook, secret: string): Promise<Webhook> {
    const { webhooks } = this.deps;
    let current: Webhook | null = read;
    for (let round = 0; round < ROTATE_ROUNDS && current; round++) {
      const rotated = await webhooks.rotateSecret(
        current.projectId,
        parseWebhookId(current.id),
        current.secret,
        this.rotationOf(current, secret),
      );
      if (rotated) return rotated;
      current = await webhooks.findInProject(current.projectId, parseWebhookId(current.id));
    }
    if (!current) throw notFound('Webhook');
    throw conflict('The secret is being rotated by another request: retry.');
  }

  private rotationOf(current: Webhook, secret: string): SecretRotation {
    const { secrets } = this.deps;
    const sealed = secrets.seal(current.id, secret);
    let previous: string;
    try {
      previous = secrets.open(current);
    } catch (err) {
      if (!(err instanceof SecretUnreadableError)) throw err;
      return { secret: sealed, previousSecret: null, previousSecretExpiresAt: null };
    }
    return {
      secret: sealed,
      previousSecret: secrets.sealPrevious(current.id, previous),
      previousSecretExpiresAt: new Date(this.now().getTime() + this.deps.secretOverlapMs),
    };
  }

  async deleteWebhook(projectId: string, webhookId: string): Promise<void> {
    const id = parseWebhookId(webhookId);
    if (!(await this.deps.webhooks.deleteFromProject(projectId, id))) throw notFound('Webhook');
    await this.deps.webhooks.releaseSlot(projectId);
    await this.deps.deliveries.deleteForWebhook(id);
  }

  /**
   * Housekeeping: seals every secret still in clear (records of earlier versions) or under a
   * previous key anew under ENCRYPTION_KEY, and drops previous secrets past their overlap. Each
   * write is conditional on what was read, so replicas doing it at once do not undo each other,
   * and running it again changes nothing. A secret that opens with no configured key is left
   * as it is and reported: the run fails, naming how many.
   */
  async resealSecrets(): Promise<{ resealed: number }> {
    const { webhooks, secrets } = this.deps;
    const now = this.now();
    let resealed = 0;
    const unreadable: string[] = [];
    let after: Types.ObjectId | null = null;
    for (;;) {
      const batch = await webhooks.findStaleSecrets(secrets.currentKeyId, now, after);
      if (batch.length === 0) break;
      for (const webhook of batch) {
        let sealed;
        try {
          sealed = secrets.reseal(webhook, now);
        } catch (err) {
          if (!(err instanceof SecretUnreadableError)) throw err;
          unreadable.push(...err.webhookIds);
          continue;
        }
        if (sealed && (await webhooks.replaceSecrets(webhook, sealed))) resealed++;
      }
      after = parseWebhookId(batch[batch.length - 1]!.id);
    }
    if (unreadable.length > 0) {
      throw new SecretUnreadableError(
        unreadable,
        'sealed under a key that is not configured, or altered; left as they are',
      );
    }
    return { resealed };
  }

  /** A deleted project's webhooks and deliveries, the deleting account's only; the counts. */
  async deleteProject(
    accountId: string,
    projectId: string,
  ): Promise<{ webhooks: number; deliveries: number }> {
    const webhookIds = await this.deps.webhooks.idsInProject(accountId, projectId);
    return {
      webhooks: await this.deps.webhooks.deleteInProject(accountId, projectId),
      deliveries: await this.deps.deliveries.deleteInProject(accountId, projectId, webhookIds),
    };
  }

  private async assertUrlAllowed(url: string): Promise<void> {
    try {
      await this.deps.guard.assertUrlAllowed(new URL(url));
    } catch (err) {
      if (err instanceof EgressRefusedError)
        throw validationError([{ path: 'url', message: err.message }]);
      throw err;
    }
  }
}

export const parseWebhookId = (webhookId: string): Types.ObjectId =>
  parseObjectId(webhookId, 'Webhook');
