/**
 * The configuration schema and its defaults, derived from the one table of options (./options.ts), and the
 * networks' endpoints (./networks.ts). Kept as the module the rest of the code has long imported them from.
 */

export { EXPLORER_URLS, NETWORK_URLS } from "./networks.js";
export { type Config, type ConfigInput, ConfigSchema, DEFAULTS } from "./options.js";
