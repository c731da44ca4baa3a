/** Where `run --sim` serves its status page: the README's address (docs/observability.md, "Status page"). */
export const DEMO_HEALTH_HOST = "127.0.0.1";
export const DEMO_HEALTH_PORT = 9464;
