import { usageError } from "./errors.js";

/** Placeholder action for a command whose issue has not landed yet: exit 2 with a clear message. */
export function notBuilt(name: string): () => never {
  return () => {
    throw usageError(`hl-deadman ${name}: this command is not built yet.`);
  };
}
