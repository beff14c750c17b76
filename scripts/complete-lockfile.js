#!/usr/bin/env node
// The registry this project installs from carries only some platform builds of
// unrs-resolver (a jest dependency), so `npm install` leaves the others out of
// package-lock.json and `npm ci` then refuses the lockfile as out of sync.
// This adds the missing optional entries with their os/cpu, so npm ci skips
// them on every platform but their own. Run it after `npm install` changes the lock.
import fs from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const packages = lock.packages;
const resolver = packages['node_modules/unrs-resolver'];
if (!resolver) process.exit(0);

const platform = {
  'android-arm-eabi': ['android', 'arm'], 'android-arm64': ['android', 'arm64'],
  'darwin-arm64': ['darwin', 'arm64'], 'darwin-x64': ['darwin', 'x64'], 'freebsd-x64': ['freebsd', 'x64'],
  'linux-arm-gnueabihf': ['linux', 'arm', 'glibc'], 'linux-arm-musleabihf': ['linux', 'arm', 'musl'],
  'linux-arm64-gnu': ['linux', 'arm64', 'glibc'], 'linux-arm64-musl': ['linux', 'arm64', 'musl'],
  'linux-loong64-gnu': ['linux', 'loong64', 'glibc'], 'linux-loong64-musl': ['linux', 'loong64', 'musl'],
  'linux-ppc64-gnu': ['linux', 'ppc64', 'glibc'], 'linux-riscv64-gnu': ['linux', 'riscv64', 'glibc'],
  'linux-riscv64-musl': ['linux', 'riscv64', 'musl'], 'linux-s390x-gnu': ['linux', 's390x', 'glibc'],
  'linux-x64-gnu': ['linux', 'x64', 'glibc'], 'linux-x64-musl': ['linux', 'x64', 'musl'],
  'openharmony-arm64': ['openharmony', 'arm64'], 'win32-arm64-msvc': ['win32', 'arm64'],
  'win32-ia32-msvc': ['win32', 'ia32'], 'win32-x64-msvc': ['win32', 'x64'],
};

let added = 0;
for (const name of Object.keys(resolver.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  const p = platform[name.replace('@unrs/resolver-binding-', '')];
  if (packages[key] || !p) continue;
  const [os, cpu, libc] = p;
  packages[key] = { version: resolver.version, cpu: [cpu], dev: true, ...(libc ? { libc: [libc] } : {}), license: 'MIT', optional: true, os: [os] };
  added++;
}
const { '': root, ...rest } = packages;
lock.packages = { '': root, ...Object.fromEntries(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stderr.write(`complete-lockfile: added ${added} platform entries\n`);
