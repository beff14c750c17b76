#!/usr/bin/env node
// `npm test`: type-check, check module boundaries, then run every jest suite.
// The e2e suites use the PostgreSQL server named by DATABASE_URL when it is
// set, and embedded PGlite otherwise.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function step(label, cmd, args, env = {}) {
  process.stderr.write(`\n== ${label}\n`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const extra = process.argv.slice(2);
step('type check', 'npx', ['tsc', '--noEmit', '-p', 'tsconfig.json']);
step('build (the CLI and server suites run the built programs)', 'npm', ['run', 'build', '--silent']);
step('module boundaries', 'npx', ['depcruise', 'src', '--config', '.dependency-cruiser.cjs']);
const results = path.join(os.tmpdir(), `cardwork-jest-${process.pid}.json`);
const jest = spawnSync('npx', ['jest', '--ci', '--json', `--outputFile=${results}`, ...extra], {
  stdio: 'inherit',
  env: {
    ...process.env,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim(),
  },
});
// One plain closing line that any CI can read, whatever jest printed before.
try {
  const r = JSON.parse(fs.readFileSync(results, 'utf8'));
  process.stdout.write(`\ntests: ${r.numPassedTests} passed, ${r.numFailedTests} failed\n`);
  fs.rmSync(results, { force: true });
} catch {
  process.stdout.write('\ntests: no results were written\n');
}
process.exit(jest.status ?? 1);
