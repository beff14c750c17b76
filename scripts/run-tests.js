#!/usr/bin/env node
// `npm test`: type-check, check module boundaries, then run every jest suite.
// The e2e suites use the PostgreSQL server named by DATABASE_URL when it is
// set, and embedded PGlite otherwise.
import { spawnSync } from 'node:child_process';

function step(label, cmd, args, env = {}) {
  process.stderr.write(`\n== ${label}\n`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const extra = process.argv.slice(2);
step('type check', 'npx', ['tsc', '--noEmit', '-p', 'tsconfig.json']);
step('build (the CLI and server suites run the built programs)', 'npm', ['run', 'build', '--silent']);
step('module boundaries', 'npx', ['depcruise', 'src', '--config', '.dependency-cruiser.cjs']);
step(
  `tests on ${process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite'}`,
  'npx',
  ['jest', '--ci', ...extra],
  { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim() },
);
