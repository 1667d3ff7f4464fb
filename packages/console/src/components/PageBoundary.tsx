/**
 * Around the current page: a "Loading…" while its chunk downloads (pages are lazy-loaded), and, if the chunk
 * cannot load (the server was updated to a new build, the network dropped), the reason and a reload link
 * instead of a blank page.
 */
import { Component, Suspense, type ReactNode } from 'react';

class Boundary extends Component<{ children: ReactNode; route: string }, { error?: string; route: string }> {
  override state: { error?: string; route: string } = { route: this.props.route };
  static getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
  static getDerivedStateFromProps(props: { route: string }, state: { error?: string; route: string }) {
    // Another page: try again.
    return props.route === state.route ? null : { route: props.route, error: undefined };
  }
  override render() {
    if (this.state.error === undefined) return this.props.children;
    return (
      <div className="notice problem" role="alert">
        <p>This page could not be shown: {this.state.error}</p>
        <p>
          <a href={window.location.href} onClick={() => window.location.reload()}>
            Reload the console
          </a>
        </p>
      </div>
    );
  }
}

export function PageBoundary({ route, children }: { route: string; children: ReactNode }) {
  return (
    <Boundary route={route}>
      <Suspense fallback={<p className="loading">Loading…</p>}>{children}</Suspense>
    </Boundary>
  );
}
