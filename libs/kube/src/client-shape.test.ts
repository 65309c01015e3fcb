import { inClientShape } from './client-shape';

describe('inClientShape', () => {
  it('gives an ingress rule’s `from` and a LimitRange item’s `default` the names the client’s models write', () => {
    const from = [{ namespaceSelector: { matchLabels: { name: 'router' } } }];
    const policy = {
      kind: 'NetworkPolicy',
      spec: { podSelector: {}, ingress: [{ from, ports: [{ port: 8080 }] }, { ports: [] }] },
    };
    expect(inClientShape(policy)).toEqual({
      kind: 'NetworkPolicy',
      spec: { podSelector: {}, ingress: [{ _from: from, ports: [{ port: 8080 }] }, { ports: [] }] },
    });
    const limits = {
      kind: 'LimitRange',
      spec: { limits: [{ type: 'Container', default: { cpu: '1' } }] },
    };
    expect(inClientShape(limits).spec.limits).toEqual([
      { type: 'Container', _default: { cpu: '1' } },
    ]);
    // A copy: the manifest as written stays as it is.
    expect(policy.spec.ingress[0]).toHaveProperty('from');
  });

  it('leaves other kinds, and those without the field, as they are', () => {
    const service = { kind: 'Service', spec: { ports: [{ port: 80 }] } };
    expect(inClientShape(service)).toBe(service);
    const egressOnly = { kind: 'NetworkPolicy', spec: { egress: [{ to: [] }] } };
    expect(inClientShape(egressOnly)).toEqual(egressOnly);
  });
});
