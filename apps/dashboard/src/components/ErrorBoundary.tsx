import { Component, type ReactNode } from 'react';

/**
 * A page that fails to render shows what to do instead of a blank page (React unmounts the tree
 * on an uncaught render error).
 */
export class ErrorBoundary extends Component<{ children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError() {
    return { failed: true };
  }

  override render() {
    if (!this.state.failed) return this.props.children;
    return (
      <main id="main" className="panel">
        <h1>Something went wrong on this page</h1>
        <p>Reload it to try again; your projects are not affected.</p>
        <button type="button" onClick={() => window.location.reload()}>
          Reload
        </button>{' '}
        <a href="/">Back to your projects</a>
      </main>
    );
  }
}
