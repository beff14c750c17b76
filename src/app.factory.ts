import type { INestApplication, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger as PinoLogger } from 'pino';
import { DataSource } from 'typeorm';
import type { AppConfig } from './config/app-config.js';
import { AppModule, type AppModuleOptions } from './app.module.js';
import { createRootLogger, PinoNestLogger, requestLogging } from './observability/logging.js';
import { Metrics, type PoolStats } from './observability/metrics.js';
import { API_PREFIX } from './shared/http/api-prefix.js';
import { cancelWhenClientGoes } from './shared/http/client-gone.js';
import { closeConnectionsWhileDraining, DrainState } from './shared/http/draining.js';
import { ExpressHttpAdapter } from './shared/http/express-http-adapter.js';
import { rejectUndecodableQueries, verifyUtf8Form, verifyUtf8Json } from './shared/http/invalid-utf8.js';
import { documentPagination, PAGE_LINK_SETTING, type PageLinkSetting } from './shared/http/pagination.js';
import { holdParsedBodies } from './shared/http/body-memory.js';
import { JSON_BODY_TYPES, limitParsedBodies, refuseDeepJson } from './shared/http/body-limits.js';
import { answerClientErrors } from './shared/http/server-refusals.js';
import { earlyKeyLookup, guardErrorResponses, idempotencyKeyResponses } from './modules/identity/index.js';
import { roleErrorResponses } from './modules/workspace/index.js';
import {
  answerUnknownPaths,
  answerWebPageErrors,
  OAUTH_ENDPOINT_PATHS,
  oauthEndpointTooSlow,
  readOAuthEndpointBodies,
  WEB_PATHS,
  webPageTooLarge,
  webPageTooSlow,
} from './modules/web/index.js';
import { databaseBusyErrors, declaredErrors, documentErrors, inputErrors } from './shared/http/error-responses.js';
import { ProblemDetailsFilter } from './shared/http/problem-details.filter.js';
import { sendProblem } from './shared/http/problem.js';
import { multipartFields, readsFormFields } from './shared/http/multipart-fields.middleware.js';
import { queryAsBody } from './shared/http/query-as-body.middleware.js';
import { answerOptions } from './shared/http/route-methods.js';
import { UnknownParametersGuard } from './shared/http/unknown-parameters.guard.js';
import { refuseSlowBodies, type BodyPace } from './shared/http/slow-bodies.js';
import { rejectUnsafeStrings } from './shared/http/safe-strings.middleware.js';
import { documentUnreadBodies, refuseUnreadBodies } from './shared/http/unread-bodies.middleware.js';
import { createValidationPipe } from './shared/http/validation.pipe.js';
import { UploadMemoryBudget } from './shared/upload-memory.js';

export { API_PREFIX };

/** The API routes that take a file and read their multipart bodies themselves (paths under the prefix). */
const UPLOAD_ROUTES = [/^\/cards\/[^/]+\/attributes\/[^/]+(\/append)?\/?$/, /^\/importers\/spreadsheet\/discover\/?$/];
/** The OAuth token and revocation endpoints (as a path pattern), which answer RFC 6749 JSON errors only. */
const OAUTH_ENDPOINTS = new RegExp(`^(${OAUTH_ENDPOINT_PATHS.join('|')})/?$`, 'i');
/** JSON and form bodies (DESIGN.md §2). */
export const JSON_LIMIT_BYTES = 1024 * 1024;

export interface CreateAppOptions extends AppModuleOptions {
  /** Nest's own messages; the JSON logger by default, `false` for none. */
  logger?: LoggerService | false;
  /** The JSON logger of requests; one at LOG_LEVEL by default. */
  rootLogger?: PinoLogger;
  /** When given, every request is measured into it (METRICS_PORT serves it). */
  metrics?: Metrics;
}

/** Builds the whole HTTP app as production runs it; tests use the same function. */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<INestApplication> {
  const root = options.rootLogger ?? createRootLogger(config.logLevel);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, options), new ExpressHttpAdapter(headTimeouts(config)), {
    bodyParser: false,
    logger: options.logger ?? new PinoNestLogger(root),
  });
  configureApp(app, config, { root, metrics: options.metrics });
  return app;
}

export function configureApp(app: NestExpressApplication, config: AppConfig, observe: { root: PinoLogger; metrics?: Metrics }): void {
  // First: every request gets its id, its log line and (when on) its metrics,
  // whatever answers it; while draining, every answer closes its connection.
  app.use(requestLogging(observe.root));
  const memory = app.get(UploadMemoryBudget);
  if (observe.metrics) {
    app.use(observe.metrics.middleware());
    observe.metrics.watchPool(() => poolStats(app.get(DataSource)));
    observe.metrics.watchUploadMemory(memory);
  }
  // A body that stops arriving or trickles is a 408 before it holds memory for long;
  // in the form each path's clients read (as for a 413 below).
  app.use(refuseSlowBodies(bodyPace(config), (req) => (OAUTH_ENDPOINTS.test(req.path) ? oauthEndpointTooSlow : webPageTooSlow(req))));
  // An API request's key is looked up as it arrives, beside the body parsing below.
  app.use(`/${API_PREFIX}`, earlyKeyLookup(app));
  closeConnectionsWhileDraining(app.get(DrainState), (app.getHttpAdapter().getInstance() as express.Express).response);
  app.disable('x-powered-by');
  // Whose X-Forwarded-For names the client (req.ip: rate limits, login limits, body memory per address) and whose X-Forwarded-Proto counts.
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'simple');
  app.set(PAGE_LINK_SETTING, { publicBase: config.baseUrl, prefix: `/${API_PREFIX}` } satisfies PageLinkSetting);
  // Body parsers first, then an error handler that turns their failures
  // (malformed JSON, too large) into problem+json before any route runs.
  answerClientErrors(app.getHttpServer());
  // A body the parsers would not read is a 415, never ignored (the web pages and /oauth/* answer their own).
  app.use(`/${API_PREFIX}`, refuseUnreadBodies());
  // The OAuth token and revocation endpoints read their form bodies first and
  // answer every refusal in RFC 6749 JSON; the parsers below find them read.
  app.use(OAUTH_ENDPOINT_PATHS, readOAuthEndpointBodies(JSON_LIMIT_BYTES, memory));
  // A page's 413 is its HTML error page, like its other refusals (answerWebPageErrors below).
  app.use(limitParsedBodies(JSON_LIMIT_BYTES, webPageTooLarge));
  // Text that is not UTF-8 is a 400 naming where it is (a body, a form field, a query parameter).
  // The bodies are held against the upload memory budget while they are read (a 503 past it).
  const parsers = express
    .Router()
    .use(express.json({ limit: JSON_LIMIT_BYTES, type: JSON_BODY_TYPES, verify: verifyUtf8Json }))
    .use(express.urlencoded({ limit: JSON_LIMIT_BYTES, extended: false, verify: verifyUtf8Form }));
  app.use(holdParsedBodies(memory, parsers));
  // A multipart form's text fields, on the routes that take no file, are held the same way.
  const formFields = multipartFields({ limit: JSON_LIMIT_BYTES, uploadRoutes: UPLOAD_ROUTES });
  app.use(`/${API_PREFIX}`, holdParsedBodies(memory, formFields, readsFormFields(UPLOAD_ROUTES)));
  app.use(refuseDeepJson);
  app.use(queryAsBody);
  app.use(rejectUndecodableQueries({ except: [OAUTH_ENDPOINTS] }));
  // Field values are checked by the fields module's parsers, which name the
  // field itself (from the path or the body key) as DESIGN.md §5 asks; the
  // OAuth token and revocation endpoints answer RFC 6749 JSON errors only.
  app.use(rejectUnsafeStrings({ except: [/^\/api\/1\.0\/cards\/[^/]+\/attributes(\/|$)/, OAUTH_ENDPOINTS] }));
  // OPTIONS on an API path is its `Allow` (a 405 for another method comes from ProblemDetailsFilter).
  app.use(answerOptions(API_PREFIX));
  // Last before the routes: a request whose client leaves stops its work (statements, a spreadsheet's parse).
  app.use(cancelWhenClientGoes());
  // A path neither under the API's prefix nor a web route's is a 404 (an HTML page for a browser), never Express's own.
  app.use(answerUnknownPaths(API_PREFIX));
  // A page's refusals are the web module's HTML error page, for a browser; the rest problem+json.
  app.use(answerWebPageErrors());
  const filter = new ProblemDetailsFilter();
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (!err) return next();
    sendProblem(res, filter.toProblem(err, req));
  });
  // The web pages and /oauth/* live at the root of AUTH_URL, the API under its prefix.
  app.setGlobalPrefix(API_PREFIX, { exclude: WEB_PATHS });
  app.useGlobalPipes(createValidationPipe());
  // After the authentication guard (an APP_GUARD, registered first): a 401 comes before a 400.
  app.useGlobalGuards(new UnknownParametersGuard(API_PREFIX));
  const document = apiDocument(app, config);
  const server = app.getHttpAdapter().getInstance() as express.Express;
  server.get(`/${API_PREFIX}/spec.json`, (_req, res) => void res.json(document));
}

/**
 * The OpenAPI document served at spec.json: what Swagger reads from the
 * controllers, plus what every operation shares and no decorator states
 * (paging headers, the 415 of an unread body, each operation's error answers).
 * Each operation's id is a contract generated clients name their calls by:
 * the one its `@ApiOperation` states, else Swagger's `Controller_method`
 * (test/e2e/platform/openapi-operations.e2e-spec.ts lists them all).
 */
function apiDocument(app: NestExpressApplication, config: AppConfig): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('cardwork')
      .setDescription('Card and workspace management API')
      .setVersion('1.0')
      .setLicense('MIT', 'https://opensource.org/license/mit')
      .addBasicAuth(
        { type: 'http', scheme: 'basic', description: 'API key as username with an empty password, or the key alone without a colon' },
        'basic',
      )
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }, 'api_key')
      .addOAuth2(
        {
          type: 'oauth2',
          description: 'Authorization Code with PKCE (S256); the token goes in `Authorization: Bearer`. See docs/OAUTH.md.',
          flows: {
            authorizationCode: {
              authorizationUrl: `${config.authUrl}/oauth/authorize`,
              tokenUrl: `${config.authUrl}/oauth/token`,
              refreshUrl: `${config.authUrl}/oauth/token`,
              scopes: {
                read_user: 'GET /me only',
                read_workspace: 'every GET',
                write_workspace: 'everything',
              },
            },
          },
        },
        'oauth2',
      )
      .build(),
  );
  document.tags = API_TAGS;
  documentPagination(document);
  documentUnreadBodies(document);
  documentErrors(document, app, [
    declaredErrors,
    inputErrors({ bodyBytes: JSON_LIMIT_BYTES, uploadBytes: config.maxUploadBytes, pace: bodyPace(config), headersTimeoutMs: config.requestHeadersTimeoutMs }),
    guardErrorResponses(config),
    idempotencyKeyResponses,
    roleErrorResponses,
    databaseBusyErrors,
  ]);
  documentPublicOperations(document);
  serveFromBaseUrl(document, config.baseUrl);
  return document;
}

/** The tags the controllers give their operations (`@ApiTags`), each with what it groups. */
const API_TAGS: NonNullable<OpenAPIObject['tags']> = [
  { name: 'health', description: 'Liveness and readiness of the server, without credentials' },
  { name: 'identity', description: 'The authenticated user and their API keys' },
  { name: 'workspace', description: 'Teams (organizations), their members and roles, and projects' },
  { name: 'cards', description: 'Cards: the tree, their values, state, archive, stream, listings and search' },
  { name: 'attributes', description: "A project's fields (attributes) and the field types" },
  { name: 'models', description: 'Models of cards, and the fields each model adds' },
  { name: 'files', description: 'Downloads of the files stored in files fields' },
  { name: 'grouping', description: 'Group types, groups, and the cards in them' },
  { name: 'importers', description: 'Spreadsheet import: upload and discover, then import into a project' },
];

/**
 * An operation the guard lets through without credentials (`@Public()`:
 * /health, /ready) states `security: []`, where guardErrorResponses gave
 * every other one the credentials it takes.
 */
function documentPublicOperations(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of [item.get, item.put, item.post, item.delete, item.patch]) {
      if (operation && !operation.security) operation.security = [];
    }
  }
}

/**
 * The document's `servers` and paths, so that a server plus a path is the URL
 * BASE_URL gives that route (as Link and Location do). A BASE_URL ending in
 * the API's prefix keeps the prefix in the paths, as clients of the original
 * read them; any other one (a proxy mapping `/v1` onto it) is the server
 * itself, and the paths start after the prefix.
 */
function serveFromBaseUrl(document: OpenAPIObject, baseUrl: string): void {
  const prefix = `/${API_PREFIX}`;
  if (baseUrl.endsWith(prefix)) {
    document.servers = [{ url: baseUrl.slice(0, -prefix.length) }];
    return;
  }
  document.servers = [{ url: baseUrl }];
  document.paths = Object.fromEntries(Object.entries(document.paths).map(([path, item]) => [path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : path, item]));
}

/** Pool counts of the PostgreSQL driver; undefined on the embedded database (one connection, no pool). */
function poolStats(dataSource: DataSource): PoolStats | undefined {
  const pool = (dataSource.driver as { master?: Partial<PoolStats> }).master;
  if (typeof pool?.totalCount !== 'number') return undefined;
  return { totalCount: pool.totalCount, idleCount: pool.idleCount ?? 0, waitingCount: pool.waitingCount ?? 0 };
}

/** How a request body must keep arriving (REQUEST_BODY_TIMEOUT_MS, REQUEST_BODY_MIN_BYTES_PER_SECOND). */
function bodyPace(config: AppConfig): BodyPace {
  return { timeoutMs: config.requestBodyTimeoutMs, minBytesPerSecond: config.requestBodyMinBytesPerSecond };
}

/**
 * The head's timeout, and how often Node looks for heads past it (every 30 s
 * by default, which would let a 20 s timeout run to 50 s): a quarter of it,
 * between 250 ms and 30 s.
 */
function headTimeouts(config: AppConfig): { headersTimeout: number; connectionsCheckingInterval: number } {
  const headersTimeout = config.requestHeadersTimeoutMs;
  return { headersTimeout, connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(headersTimeout / 4))) };
}
