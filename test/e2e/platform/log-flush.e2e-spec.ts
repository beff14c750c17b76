import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from '@jest/globals';

// The built logger (npm test builds dist/ first), in a process of its own
// that exits while its request lines still wait in the buffer.
const root = path.resolve(import.meta.dirname, '../../..');
const LOGGING = pathToFileURL(path.join(root, 'dist/src/observability/logging.js')).href;

const EXITING = (how: string) => `
import { createRootLogger } from ${JSON.stringify(LOGGING)};
const logger = createRootLogger('info');
for (let i = 0; i < 3; i++) logger.info({ n: i }, 'request completed');
${how}
`;

function linesWritten(how: string): Array<{ msg: string; n: number }> {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', EXITING(how)], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string; n: number });
}

describe('buffered request log lines', () => {
  it.each([
    ['calls process.exit at once', 'process.exit(0);'],
    ['runs out of work', ''],
  ])('are all written when the process %s', (_label, how) => {
    expect(linesWritten(how).map((l) => l.n)).toEqual([0, 1, 2]);
  });
});

describe('lines written at once (server messages, errors)', () => {
  it('go out one by one without piling listeners on the destination while a write is under way', () => {
    // Nest maps a hundred routes at start-up, each message written at once;
    // stdout is a pipe here, as under Docker or systemd, so writes are pending.
    const script = `
import { createRootLogger, PinoNestLogger } from ${JSON.stringify(LOGGING)};
const nest = new PinoNestLogger(createRootLogger('info'));
for (let i = 0; i < 100; i++) nest.log('Mapped route ' + i, 'RouterExplorer');
nest.error(new Error('boom'), 'Test');
`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stderr).not.toMatch(/MaxListenersExceededWarning/);
    const lines = run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string });
    expect(lines.map((l) => l.msg)).toEqual([...Array.from({ length: 100 }, (_, i) => `Mapped route ${i}`), 'boom']);
  });
});
