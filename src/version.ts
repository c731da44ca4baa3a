/** Kept in step with package.json by test/index.test.ts. */
export const VERSION = "0.1.0";
