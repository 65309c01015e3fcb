/**
 * Whose a document is, in every collection of this service (deployments, their logs and log
 * chunks, their sources): what reads filter on and deletions remove by.
 */
export interface OwnerFields {
  accountId: string;
  projectId: string;
  serviceId: string;
}

/** The same fields in a mongoose schema's definition: `...ownerFields`. */
export const ownerFields = {
  accountId: { type: String, required: true },
  projectId: { type: String, required: true },
  serviceId: { type: String, required: true },
};
