/**
 * An ordered list of components, after lodestar's BeaconNode: each is started on what the ones before it provided
 * (its `start` returns what it adds to the context, so a component can only use what was built before it), they
 * are closed in reverse, once, and a failure while starting closes again whatever had started, in reverse. One
 * abort (the runtime's root signal) goes out before any close, so that no repetition fires while the components
 * below it are going away.
 */

/** A part of the daemon: `start` builds it on the context so far and returns what it adds; `close` undoes it. */
export type Component<In, Out extends object> = {
  readonly name: string;
  /**
   * Builds and starts the component. What it returns is added to the context of the components after it. A start
   * that throws has undone its own partial work: only components whose start returned are closed.
   */
  start(ctx: In): Out | Promise<Out>;
  /** Undoes `start`; called at most once, after every component started after it was closed. */
  close(): unknown;
};

// biome-ignore lint/suspicious/noExplicitAny: a list of components of different shapes; `Built` checks each link
type AnyComponent = Component<any, object>;

/** What `Built` gives when a component is listed before what it needs: using the result is a type error. */
export type ListedTooEarly<Name> = { readonly listedTooEarly: Name };

/**
 * The context after a list of components has started on `Ctx`, or `ListedTooEarly` naming the first component
 * that needs something no component before it provides (every use of the result is then a type error).
 */
export type Built<L extends readonly AnyComponent[], Ctx> = L extends readonly [
  infer Head extends AnyComponent,
  ...infer Rest extends readonly AnyComponent[],
]
  ? Head extends Component<infer In, infer Out>
    ? Ctx extends In
      ? Built<Rest, Ctx & Out>
      : ListedTooEarly<Head["name"]>
    : never
  : Ctx;

/** A component that could not start, with the cause (everything started before it has been closed). */
export class ComponentStartFailure extends Error {
  override name = "ComponentStartFailure";
  readonly component: string;
  constructor(component: string, cause: unknown) {
    super(`could not start the ${component}`, { cause });
    this.component = component;
  }
}

export type ComponentsOptions = {
  /** the one abort, sent before the first close (a failed start and a stop alike) */
  abort(reason: string): void;
  /** a close that throws: reported, and the closing goes on */
  onCloseError?: ((component: string, error: unknown) => void) | undefined;
};

/** Starts a list of components in order and closes the started ones in reverse. */
export class Components {
  readonly #options: ComponentsOptions;
  readonly #started: AnyComponent[] = [];
  #closed: Promise<void> | null = null;

  constructor(options: ComponentsOptions) {
    this.#options = options;
  }

  /** The names of the components started so far, in start order. */
  get started(): string[] {
    return this.#started.map((c) => c.name);
  }

  /**
   * Starts `list` in order on `base`. When a start throws (or rejects), the root is aborted, the components
   * already started are closed in reverse (their close errors go unreported: the start failure is what counts),
   * and a ComponentStartFailure naming the component is thrown.
   */
  async start<const L extends readonly AnyComponent[], Base extends object>(
    list: L,
    base: Base,
  ): Promise<Built<L, Base>> {
    let ctx: object = base;
    for (const component of list) {
      if (this.#closed) throw new ComponentStartFailure(component.name, new Error("closed while starting"));
      try {
        const out = await component.start(ctx);
        ctx = { ...ctx, ...out };
      } catch (error) {
        this.#closed = this.#unwind("start failed", () => {});
        await this.#closed;
        throw new ComponentStartFailure(component.name, error);
      }
      this.#started.push(component);
    }
    return ctx as Built<L, Base>;
  }

  /** Aborts the root, then closes every started component in reverse, once; later calls get the same promise. */
  close(reason = "close"): Promise<void> {
    this.#closed ??= this.#unwind(reason, this.#options.onCloseError ?? (() => {}));
    return this.#closed;
  }

  async #unwind(reason: string, onError: (component: string, error: unknown) => void): Promise<void> {
    this.#options.abort(reason);
    while (this.#started.length > 0) {
      const component = this.#started.pop()!;
      try {
        await component.close();
      } catch (error) {
        onError(component.name, error);
      }
    }
  }
}
