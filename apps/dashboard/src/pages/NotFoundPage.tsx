import { Link } from 'wouter';

export function NotFoundPage() {
  return (
    <section className="panel" aria-labelledby="not-found-title">
      <h1 id="not-found-title">Not found</h1>
      <p>There is no page at this address.</p>
      <Link href="/">Back to your projects</Link>
    </section>
  );
}
