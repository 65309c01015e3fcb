import type { mongo } from 'mongoose';

/**
 * Starts every contender in the same tick and waits for all of them, failures included: a race's
 * result is what each contender was told.
 */
export function race<T>(contenders: Array<() => Promise<T>>): Promise<PromiseSettledResult<T>[]> {
  return Promise.all(
    contenders.map((run) =>
      run().then(
        (value): PromiseSettledResult<T> => ({ status: 'fulfilled', value }),
        (reason: unknown): PromiseSettledResult<T> => ({ status: 'rejected', reason }),
      ),
    ),
  );
}

/**
 * Violations found over many rounds, for one assertion at the end that names the first few
 * (`expect(violations.report()).toEqual(violations.none)`).
 */
export class Violations {
  private readonly found: string[] = [];
  readonly none = { count: 0, first: [] as string[] };

  add(round: number, what: string): void {
    this.found.push(`round ${round}: ${what}`);
  }

  get count(): number {
    return this.found.length;
  }

  report(): { count: number; first: string[] } {
    return { count: this.found.length, first: this.found.slice(0, 8) };
  }
}

/** Races `a` and `b`, firing `a` first in even rounds and `b` first in odd ones; results as [a, b]. */
export async function raceAlternately<A, B>(
  round: number,
  a: () => Promise<A>,
  b: () => Promise<B>,
): Promise<[PromiseSettledResult<A>, PromiseSettledResult<B>]> {
  if (round % 2 === 0) {
    const [ra, rb] = await race<A | B>([a, b]);
    return [ra as PromiseSettledResult<A>, rb as PromiseSettledResult<B>];
  }
  const [rb, ra] = await race<A | B>([b, a]);
  return [ra as PromiseSettledResult<A>, rb as PromiseSettledResult<B>];
}

/**
 * One contender's write in a race: the filter and update every contender sends alike, through
 * its own connection's `collection`.
 */
export type ContenderWrite<T extends mongo.Document, R> = (
  collection: mongo.Collection<T>,
  filter: mongo.Filter<T>,
  update: mongo.UpdateFilter<T>,
) => Promise<R>;
