import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { IS_PUBLIC } from '../../../shared/http/actor.decorator.js';
import { ROUTE_SCOPE, type ScopeRule } from '../../../shared/http/scopes.decorator.js';

export interface RouteDeclaration {
  controller: string;
  handler: string;
  rule: ScopeRule | 'public' | undefined;
}

export class MissingScopeDeclarationError extends Error {
  constructor(routes: RouteDeclaration[]) {
    super(
      `Every API route must declare the OAuth scope it needs (@WorkspaceRoutes(), @RequiresScope(), @ApiKeyOnly()) ` +
        `or be @Public(); these declare none: ${routes.map((r) => `${r.controller}.${r.handler}`).join(', ')}`,
    );
  }
}

/**
 * Refuses to start the server when a route handler declares no scope, so a
 * route added later cannot silently be open to every OAuth token (issue 12).
 */
@Injectable()
export class RouteScopesCheck implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    const missing = this.declarations().filter((r) => r.rule === undefined);
    if (missing.length) throw new MissingScopeDeclarationError(missing);
  }

  /** Every route handler of every controller, with the rule it declares. */
  declarations(): RouteDeclaration[] {
    const found: RouteDeclaration[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const type = wrapper.metatype as (new (...args: never[]) => object) | undefined;
      if (!type) continue;
      for (const name of this.scanner.getAllMethodNames(type.prototype)) {
        const handler = (type.prototype as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        if (Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
        found.push({ controller: type.name, handler: name, rule: this.ruleOf(handler, type) });
      }
    }
    return found;
  }

  private ruleOf(handler: object, type: object): RouteDeclaration['rule'] {
    const targets = [handler as never, type as never];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return 'public';
    return this.reflector.getAllAndOverride<ScopeRule | undefined>(ROUTE_SCOPE, targets);
  }
}
