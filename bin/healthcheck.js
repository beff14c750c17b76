#!/usr/bin/env node
// The Docker image's HEALTHCHECK: asks the server's /health where it
// listens. PORT as the server reads it (3000 when unset); HOST too, as the
// server binds it: a wildcard (0.0.0.0, ::, unset) is reached on loopback,
// one address only on that address (127.0.0.1 would find nothing there).
// Exit 0 healthy, 1 otherwise (Docker's contract), within 5 s.
const port = process.env.PORT || 3000;
const bound = (process.env.HOST || '').trim();
const host = !bound || bound === '0.0.0.0' || bound === '::' ? '127.0.0.1' : bound.includes(':') ? `[${bound}]` : bound;

fetch(`http://${host}:${port}/api/1.0/health`, { signal: AbortSignal.timeout(5000) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
