import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<package> (scoped too), node:internal, or the repository file. */
function ownerOf(url: string): string {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node (core)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const repo = /\/(services|libs|tools)\/([^/]+)\//.exec(url);
  return repo ? `${repo[1]}/${repo[2]}` : url;
}

/**
 * Self time of a `node --cpu-prof` profile, by function and by package: where a process spends
 * its CPU. Idle time is left out of the percentages (it is not work).
 */
export function summarizeProfile(file: string, top = 40) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let busyUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const where = frame.url
      ? `${frame.url.replace(/^.*\/(node_modules|services|libs)\//, '$1/')}:${frame.lineNumber + 1}`
      : '';
    const name = `${frame.functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const owner = frame.functionName.startsWith('(') ? frame.functionName : ownerOf(frame.url);
    byPackage.set(owner, (byPackage.get(owner) ?? 0) + us);
  }
  // Inclusive time: every function on a sample's stack (once per stack) gets the sample.
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') return;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (!f.url || f.functionName === '(root)') continue;
      seen.add(
        `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|services|libs)\//, '$1/')}:${f.lineNumber + 1}`,
      );
    }
    for (const key of seen)
      inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  // Self time charged to the nearest frame of a package or of our code on its stack: node's
  // socket writes under ioredis count as ioredis, under http-proxy as http-proxy, and so on.
  const nearest = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') return;
    let owner = frame.functionName.startsWith('(') ? frame.functionName : 'node (core) / native';
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)!.callFrame.url;
      if (url && !url.startsWith('node:')) {
        owner = ownerOf(url);
        break;
      }
    }
    nearest.set(owner, (nearest.get(owner) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const rank = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({
        name,
        ms: Math.round(us / 1000),
        percentOfBusy: Number(((100 * us) / busyUs).toFixed(1)),
      }));
  return {
    busyMs: Math.round(busyUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    byPackage: rank(byPackage),
    byNearestPackage: rank(nearest),
    byFunction: rank(byFunction),
    inclusiveByFunction: rank(inclusive).slice(0, 40),
  };
}
