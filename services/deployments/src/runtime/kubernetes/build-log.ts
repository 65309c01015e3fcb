import { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { k8s, type Kubernetes } from '@platform/kube';
import { sinceTimeOf } from './pod-log';
import { StampedOutput } from './stamped-output';

/**
 * A build container's log, followed to its end through the API server (builds.ts), chunk by chunk
 * as it arrives: lines are the log's to make (LogBuffer), so a flood costs a few objects a chunk
 * and a line never ended is cut at LOG_LINE_MAX_BYTES with its whole length, as locally.
 *
 * A follow also ends when the kubelet rotates the container's log file (kubernetes#115701), and
 * may miss the end of the output when the container ends while the follow is behind: each
 * follow that ends is followed by another from the last line's time (`timestamps=true`,
 * StampedOutput leaving out what was had), until one that began after the container had ended
 * has read to the end. What the rotated file held past where the follow was is not served by
 * the API server, and is lost; so is a line stamped in the same microsecond as the last one read.
 */
export async function followBuildLog(
  kc: Kubernetes.KubeConfig,
  namespace: string,
  podName: string,
  onOutput: (text: string) => void,
): Promise<string | undefined> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const ended = async () => {
    const pod = await core.readNamespacedPod({ name: podName, namespace }).catch(() => null);
    return !pod || pod.status?.containerStatuses?.[0]?.state?.terminated !== undefined;
  };
  let afterMicros = 0;
  for (;;) {
    const last = await ended();
    const stamped = new StampedOutput(afterMicros);
    const error = await followOnce(kc, namespace, podName, afterMicros, (text) => {
      const output = stamped.write(text);
      if (output) onOutput(output);
    });
    const rest = stamped.end();
    if (rest) onOutput(rest);
    if (error !== undefined) return error;
    if (last) return undefined;
    afterMicros = stamped.lastMicros;
  }
}

/** One follow of the log from after `afterMicros` to its end; why it failed, if it did. */
function followOnce(
  kc: Kubernetes.KubeConfig,
  namespace: string,
  podName: string,
  afterMicros: number,
  onText: (text: string) => void,
): Promise<string | undefined> {
  return new Promise<string | undefined>((resolve) => {
    const decoder = new StringDecoder('utf8');
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        const text = decoder.write(chunk);
        if (text) onText(text);
        done();
      },
      final(done) {
        const rest = decoder.end();
        if (rest) onText(rest);
        done();
      },
    });
    out.on('finish', () => resolve(undefined));
    const sinceTime = sinceTimeOf(afterMicros);
    new k8s.Log(kc)
      .log(namespace, podName, 'build', out, {
        follow: true,
        timestamps: true,
        ...(sinceTime && { sinceTime }),
      })
      .catch((err: unknown) => {
        out.destroy();
        resolve(`==> the build's log could not be read: ${String(err)}`);
      });
  });
}
