import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Post, Req, type ExecutionContext } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import type { Request } from 'express';
import { UnknownParametersGuard } from './unknown-parameters.guard.js';

class Uploads {
  @Post('plain')
  plain(@Req() _req: Request) {}

  @Post('documented')
  @ApiQuery({ name: 'dry_run', required: false })
  documented(@Req() _req: Request) {}
}

/** The context of a POST to `handler` with `query`, its body multipart or JSON. */
function posting(handler: keyof Uploads, query: Record<string, string>, multipart: boolean): ExecutionContext {
  const req = {
    method: 'POST',
    originalUrl: `/api/1.0/uploads/${handler}`,
    query,
    body: {},
    is: (type: string) => (multipart && type === 'multipart/form-data' ? type : false),
  };
  return {
    getType: () => 'http',
    getHandler: () => Uploads.prototype[handler],
    getClass: () => Uploads,
    switchToHttp: () => ({ getRequest: () => req }),
  } as unknown as ExecutionContext;
}

/** The fields the guard's 400 names, or [] when it lets the request through. */
function refused(context: ExecutionContext): string[] {
  try {
    new UnknownParametersGuard('api/1.0').canActivate(context);
    return [];
  } catch (error) {
    return ((error as { errors?: Array<{ field: string }> }).errors ?? []).map((p) => p.field);
  }
}

describe('UnknownParametersGuard: the query string of a multipart upload', () => {
  it('names each query parameter the operation does not document', () => {
    expect(refused(posting('plain', { bogus: '1', project_id: '2' }, true))).toEqual(['bogus', 'project_id']);
    expect(refused(posting('documented', { dry_run: 'true', bogus: '1' }, true))).toEqual(['bogus']);
    expect(refused(posting('documented', { dry_run: 'true' }, true))).toEqual([]);
  });

  it('leaves a JSON-bodied request to the rule of every write (the body is read, the query string not)', () => {
    expect(refused(posting('plain', { bogus: '1' }, false))).toEqual([]);
  });
});
