import { describe, expect, it } from '@jest/globals';
import { parseImportRequest } from './import-request.js';

const fieldOf = (body: Record<string, unknown>) => {
  try {
    parseImportRequest(body);
  } catch (error) {
    return (error as { errors: Array<{ field: string }> }).errors[0].field;
  }
  throw new Error('accepted');
};

describe('parseImportRequest', () => {
  it('reads every body field of the spec', () => {
    expect(
      parseImportRequest({
        discover_file_id: 4,
        project_id: '9',
        mapping: '{"0":{"type":"title"}}',
        update_field: 'title',
        update_only: 'true',
        options: { ignore_header: true },
        dry_run: true,
      }),
    ).toEqual({
      discoverFileId: 4,
      target: { kind: 'existing', projectId: 9 },
      mapping: { '0': { type: 'title' } },
      updateField: 'title',
      updateOnly: true,
      ignoreHeader: true,
      dryRun: true,
    });
    expect(parseImportRequest({ discover_file_id: 4, title: ' New ', organization_id: 2, mapping: {} }).target).toEqual({
      kind: 'new',
      organizationId: 2,
      title: 'New',
    });
  });

  it('names the property that is wrong', () => {
    expect(fieldOf({ project_id: 1 })).toBe('discover_file_id');
    expect(fieldOf({ discover_file_id: 0, project_id: 1 })).toBe('discover_file_id');
    expect(fieldOf({ discover_file_id: 1 })).toBe('project_id');
    expect(fieldOf({ discover_file_id: 1, project_id: 1, title: 'x' })).toBe('project_id');
    expect(fieldOf({ discover_file_id: 1, title: 'x' })).toBe('organization_id');
    expect(fieldOf({ discover_file_id: 1, title: '', organization_id: 1 })).toBe('title');
    expect(fieldOf({ discover_file_id: 1, project_id: 1, dry_run: 'yes' })).toBe('dry_run');
    expect(fieldOf({ discover_file_id: 1, project_id: 1, options: { header: true } })).toBe('options.header');
    expect(fieldOf({ discover_file_id: 1, project_id: 1, update_only: true })).toBe('update_only');
  });
});
