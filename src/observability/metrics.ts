import http from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { UploadMemoryBudget } from '../shared/upload-memory.js';

/** What a `pg.Pool` reports about itself. */
export interface PoolStats {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * Prometheus metrics (served only when METRICS_PORT is set, on that port, away
 * from the public API): request counts and latency by route and status,
 * database pool use, and the process's defaults, event-loop lag included.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'cardwork_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'cardwork_http_request_duration_seconds',
    help: 'Time from request to the end of the answer, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'cardwork_', eventLoopMonitoringPrecision: 10 });
  }

  /** Times every request; the route label is the matched pattern (`/api/1.0/cards/:id`), never the raw URL. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const started = process.hrtime.bigint();
      res.once('close', () => {
        const labels = { method: req.method, route: routeOf(req), status: String(res.statusCode) };
        this.requests.inc(labels);
        this.latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
      });
      next();
    };
  }

  /** Pool gauges, read when Prometheus scrapes. */
  watchPool(stats: () => PoolStats | undefined): void {
    const gauge = (name: string, help: string, pick: (s: PoolStats) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          const s = stats();
          if (s) this.set(pick(s));
        },
      });
    gauge('cardwork_db_pool_connections', 'Open database connections', (s) => s.totalCount);
    gauge('cardwork_db_pool_idle_connections', 'Database connections open and unused', (s) => s.idleCount);
    gauge('cardwork_db_pool_waiting_requests', 'Queries waiting for a free connection', (s) => s.waitingCount);
  }

  /** The upload memory budget (UPLOAD_MEMORY_MAX_BYTES): what requests hold of it, and how often one was refused (503). */
  watchUploadMemory(budget: UploadMemoryBudget): void {
    new Gauge({
      name: 'cardwork_upload_memory_bytes',
      help: 'Bytes of multipart uploads and file-URL downloads held in memory now',
      registers: [this.registry],
      collect() {
        this.set(budget.inUse);
      },
    });
    new Gauge({
      name: 'cardwork_upload_memory_limit_bytes',
      help: 'UPLOAD_MEMORY_MAX_BYTES: what uploads and downloads may hold in memory at once',
      registers: [this.registry],
    }).set(budget.maxBytes);
    new Counter({
      name: 'cardwork_upload_memory_refusals_total',
      help: 'Uploads and file-URL downloads refused with 503 because the memory budget was full',
      registers: [this.registry],
      collect() {
        // The budget counts; the counter shows its figure.
        this.reset();
        this.inc(budget.refusals);
      },
    });
  }

  /** A bare HTTP server answering `GET /metrics` in Prometheus' text format. */
  listen(port: number, host: string): Promise<http.Server> {
    const server = http.createServer((req, res) => {
      if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve(server);
      });
    });
  }
}

function routeOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : 'unmatched';
}
