import type { z } from "zod";
import { ValidationError } from "./base.js";

/** Formats zod issues as `path: message` lines. */
export function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
    return `${path}: ${issue.message}`;
  });
}

/** Every parse of outside input goes through here, so callers only ever see our ValidationError. */
export function parse<T extends z.ZodType>(schema: T, input: unknown, what: string): z.output<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationError(what, formatIssues(result.error), { cause: result.error });
}
