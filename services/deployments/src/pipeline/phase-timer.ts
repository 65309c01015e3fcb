/**
 * How long each phase of a step took, in order (ms, to a tenth): what the step's `step timings`
 * log line says, and what `npm run deploy-latency -w bench` adds up per phase.
 */
export class PhaseTimer {
  readonly phases: Record<string, number> = {};
  private last = performance.now();
  private lastPhase = '';

  /** The phase that ends now (it began where the last one ended, or with the step). */
  mark(phase: string): void {
    const now = performance.now();
    this.phases[phase] = Math.round((now - this.last) * 10) / 10;
    this.last = now;
    this.lastPhase = phase;
  }

  /** Parts of the phase just marked, as measured where they ran (the runtime's, say). */
  detail(parts: Record<string, number> | undefined): void {
    for (const [part, ms] of Object.entries(parts ?? {}))
      this.phases[`${this.lastPhase}: ${part}`] = ms;
  }
}
