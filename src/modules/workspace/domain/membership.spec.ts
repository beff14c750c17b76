import { describe, expect, it } from '@jest/globals';
import { roleAllows } from './membership.entity.js';

describe('roleAllows', () => {
  it('lets viewers read only', () => {
    expect(roleAllows('viewer', 'read')).toBe(true);
    expect(roleAllows('viewer', 'write')).toBe(false);
    expect(roleAllows('viewer', 'admin')).toBe(false);
  });
  it('lets members write but not administer', () => {
    expect(roleAllows('member', 'write')).toBe(true);
    expect(roleAllows('member', 'admin')).toBe(false);
  });
  it('lets admins do everything', () => {
    expect(['read', 'write', 'admin'].every((m) => roleAllows('admin', m as 'read'))).toBe(true);
  });
});
