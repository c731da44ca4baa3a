/**
 * The daemon's events on one bus: what one part of the daemon tells the others happened. An event carries its
 * contract name (`trigger.counted`, docs/cli.md), its level, a line for people, the module and account it
 * concerns, and its figures. The switch and the exposure report publish; the notifier, the status page and the
 * protection watcher subscribe. Nothing learns what happened by reading the log: the switch's log line and its
 * event come from the same table (src/switch/log.ts), the log is never read back.
 */

export type EventLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal";

export type DomainEvent = Readonly<Record<string, unknown>> & {
  readonly event: string;
  readonly level: EventLevel;
  readonly msg?: string | undefined;
  /** the part of the daemon it comes from (`switch`, `exposure`, `notify`) */
  readonly module?: string | undefined;
  /** lower-case 0x address of the account it concerns */
  readonly account?: string | undefined;
};

export type EventSubscriber = (event: DomainEvent) => void;

export type EventBus = {
  /** Hands the event to every subscriber, in the order they subscribed; a subscriber that throws is skipped. */
  publish(event: DomainEvent): void;
  /** Adds a subscriber; returns what removes it. */
  subscribe(subscriber: EventSubscriber): () => void;
};

export function createEventBus(): EventBus {
  const subscribers: EventSubscriber[] = [];
  return {
    publish(event) {
      for (const s of [...subscribers]) {
        try {
          s(event);
        } catch {
          // one subscriber's failure never stops the others nor the part that published
        }
      }
    },
    subscribe(subscriber) {
      subscribers.push(subscriber);
      return () => {
        const i = subscribers.indexOf(subscriber);
        if (i >= 0) subscribers.splice(i, 1);
      };
    },
  };
}
