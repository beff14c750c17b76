// ts-jest in ESM mode; type checking is done once by `tsc --noEmit` (npm test), not per file.
const transform = {
  '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }],
};
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform,
  testEnvironment: 'node',
};
export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
    },
  ],
  testTimeout: 60000,
  // Two workers, each replaced once its heap passes 1 GB after a file. On a
  // 2-core machine jest takes one worker, and then runs every file in its
  // own process, one after another: there the heap grew file by file (run
  // with --logHeapUsage, a worker passed 1.2 GB) and the late files ran
  // 10 to 20 times slower than alone:
  // api-key-limit ran 4 s alone and 90 s as the 92nd file, the whole
  // suite 1 772 s; with these two settings, 288 s.
  maxWorkers: 2,
  workerIdleMemoryLimit: '1GB',
};
