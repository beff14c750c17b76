import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig', () => {
  it('uses the documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.embedded).toBe(true);
    expect(c.maxUploadBytes).toBe(20 * 1024 * 1024);
    expect(c.baseUrl).toBe('http://localhost:3000/api/1.0');
  });

  it('names the bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ ALLOW_SIGNUP: 'maybe' })).toThrow(ConfigError);
    expect(() => loadConfig({ MAX_UPLOAD_BYTES: '0' })).toThrow(/MAX_UPLOAD_BYTES/);
  });

  it('reads a real server URL', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://u@localhost/db', PORT: '8080' });
    expect(c.embedded).toBe(false);
    expect(c.port).toBe(8080);
  });
});
