/**
 * @kubernetes/client-node writes an object of a kind it knows through its model classes, whose
 * properties for JSON fields named like JavaScript keywords carry an underscore: an ingress
 * rule's `from` is `_from`, a LimitRange item's `default` is `_default`. A plain manifest's `from`
 * or `default` is dropped without a word, and the cluster stores a NetworkPolicy whose ingress
 * rule admits every source, a LimitRange whose defaults are its maximums. These are the fields of
 * the kinds the platform writes that the models rename: [the spec's list, the field of each item].
 */
const RENAMED: Record<string, [list: string, field: string]> = {
  NetworkPolicy: ['ingress', 'from'],
  LimitRange: ['limits', 'default'],
};

/** `object` as the client's models name its fields (a copy; other kinds as they are). */
export function inClientShape<T extends { kind?: string }>(object: T): T {
  const renamed = RENAMED[object.kind ?? ''];
  const spec = (object as { spec?: Record<string, unknown> }).spec;
  if (!renamed || !spec) return object;
  const [list, field] = renamed;
  const items = spec[list];
  if (!Array.isArray(items)) return object;
  return {
    ...object,
    spec: {
      ...spec,
      [list]: items.map((item: Record<string, unknown>) => {
        if (!(field in item)) return item;
        const { [field]: value, ...rest } = item;
        return { ...rest, [`_${field}`]: value };
      }),
    },
  };
}
