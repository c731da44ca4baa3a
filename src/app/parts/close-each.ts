/** Parts of one component that close on their own (src/app/parts/pollers.ts). */
import type { Logger } from "../../core/logger.js";

export type Part = { name: string; close(): unknown };

/** Closes `parts` in reverse, emptying the list; one that fails to close is logged and does not keep the others. */
export async function closeEach(parts: Part[], log: Logger | undefined): Promise<void> {
  while (parts.length > 0) {
    const part = parts.pop()!;
    try {
      await part.close();
    } catch (error) {
      log?.error(
        { event: "daemon.close.failed", component: part.name, err: error },
        `closing the ${part.name} failed`,
      );
    }
  }
}
