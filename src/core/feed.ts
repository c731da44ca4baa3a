/**
 * A feed: how a part that starts later follows one that started before it, without either naming the other (the
 * daemon's components, src/app/context.ts; the replicas' election, src/replicas/election.ts). Each value is handed
 * to every listener, in the order they subscribed, as it is published; nothing is kept.
 */

/** A value later parts can follow: every change published after they subscribe. */
export type Feed<T> = { subscribe(listener: (value: T) => void): void };

export function feed<T>(): Feed<T> & { publish(value: T): void } {
  const listeners: ((value: T) => void)[] = [];
  return {
    subscribe: (listener) => void listeners.push(listener),
    publish: (value) => {
      for (const l of listeners) l(value);
    },
  };
}
