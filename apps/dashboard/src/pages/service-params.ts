/** The path parameters of a service's page and its sections. */
export type ServiceParams = { projectId: string; serviceId: string };
