/**
 * Tenants' code may reach public addresses only: these are the IPv4 ranges that are not (the
 * sandbox's egress rules deny them by default, the Kubernetes runner's NetworkPolicies except
 * them).
 */
export const NON_PUBLIC_IPV4_RANGES = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
