/**
 * A page in a chunk of its own: loaded the first time it is shown (suspending to the PageBoundary's "Loading…"),
 * or before, by preload() (App preloads every page once the console is up, so moving between pages does not
 * wait for the network). Unlike React.lazy, a page already loaded renders at once, without a fallback frame.
 */
import { use, type ComponentType, type JSX } from 'react';

export interface LazyPage<P> {
  (props: P): JSX.Element;
  preload(): Promise<unknown>;
}

export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>): LazyPage<P> {
  let component: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  const preload = () =>
    (loading ??= load().then((loaded) => {
      component = loaded;
      return loaded;
    }));
  const Page = (props: P) => {
    // A chunk that failed to load rejects here, for the PageBoundary to explain.
    const Component = component ?? use(preload());
    return <Component {...props} />;
  };
  return Object.assign(Page, { preload });
}
