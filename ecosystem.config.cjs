// pm2 process file for hl-deadman (docs/operations.md, "Running under pm2"). In a clone: `npm ci` (which builds
// dist/, its prepare step), then `pm2 start ecosystem.config.cjs`. From the installed package, dist/ is built
// already: `pm2 start "$(npm root -g)/hl-deadman/ecosystem.config.cjs"`.
//
// The key is NOT in this file: it is the daemon's own API (agent) wallet key, never the engine's. Prefer a key file
// with mode 0600, named by HL_KEY_FILE (or "keyFile" in the config file, or `--key-file`) in the shell that runs
// `pm2 start`. HL_PRIVATE_KEY exported in that shell works too, but `pm2 save` then writes it, with the rest of the
// process environment, to ~/.pm2/dump.pm2. The config file holds everything else (no secret).
//
// pm2 stops a process with SIGINT, then SIGKILL after kill_timeout (pm2's default is 1.6 s, too short for a signed
// "remove the schedule" request plus a log flush). hl-deadman exits within shutdownTimeout (default 5 s), so
// kill_timeout leaves a wide margin above it.
module.exports = {
  apps: [
    {
      name: "hl-deadman",
      script: "dist/bin/hl-deadman.js",
      args: "run --config /etc/hl-deadman/config.json",
      cwd: __dirname,
      interpreter: "node",
      // The flags of the systemd units (docs/operations.md, "Node flags"): V8's interpreter only, no executable memory
      // allocated at run time (less resident memory), no WebAssembly (so no global fetch), a small heap collected on the main thread.
      node_args: ["--jitless", "--no-expose-wasm", "--optimize-for-size", "--single-threaded-gc"],
      // One process, never cluster mode: two copies would sign with one key (clashing nonces) and double-push.
      exec_mode: "fork",
      instances: 1,
      kill_timeout: 15000,
      // SIGINT is pm2's default stop signal; hl-deadman treats it exactly like SIGTERM (graceful stop).
      shutdown_with_message: false,
      autorestart: true,
      // A crash is restarted at once: while the daemon is down nothing pushes the schedule forward. A run shorter
      // than min_uptime counts as unstable; after max_restarts unstable restarts pm2 gives up (the process shows
      // "errored") and the exchange cancels the orders at the deadline.
      // No restart_delay / exp_backoff_restart_delay: pm2 labels an app that has either "waiting restart" after ANY
      // exit, even one it will never restart, so an operator would read an app that gave up as "about to come back"
      // (docs/daemon.md, "Start order and exit").
      min_uptime: 10000,
      max_restarts: 10,
      // Exit 78 is a configuration error. pm2's labels are fixed: with stop_exit_codes: [78] it would show "stopped",
      // exactly like a clean `pm2 stop`. Without it, pm2 retries at once (each start fails validation before anything
      // is armed), and after max_restarts unstable runs the app ends "errored" (red in `pm2 ls`), with exit_code 78
      // in `pm2 jlist` and the one-line cause in `pm2 logs` (docs/operations.md, "Running under pm2").
      watch: false,
      max_memory_restart: "256M",
      // Logs: keep pino's JSON lines as they are: no pm2 timestamp prefix (time: false, no log_date_format),
      // one file for stdout and one for stderr whatever the instance id (merge_logs).
      time: false,
      merge_logs: true,
      env: {
        NODE_ENV: "production",
        // The connection guard (docs/operations.md, "Cancel on disconnect"), for an engine that pm2 runs beside it:
        // uncomment, and point the engine at the same address. Loopback TCP is reachable by every local user; a Unix
        // socket path (mode 0660, e.g. /run/user/<uid>/hl-deadman.sock) is not, when engine and daemon share a user
        // or group. Until the engine first connects the accounts are `waiting` (pushing, /readyz 503).
        // HL_GUARD_SOCKET: "127.0.0.1:9470",
      },
    },
  ],
};
