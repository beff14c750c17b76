import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the remote server of "file by URL" values (the app needs
 * FILE_URL_ALLOW_PRIVATE=true to reach it), on 127.0.0.1:
 * - `/held/…` declares `heldBytes`, sends half and waits for `releaseHeld`
 *   (a slow server: the download holds its declared length meanwhile);
 * - `/chunked/…` sends `fileBytes` in chunks of `chunkBytes` without a length;
 * - `/missing` is a 404; any other path is a file of `fileBytes`.
 */
export interface FileUrlSource {
  readonly base: string;
  /** A URL of `route` (held, chunked, file…) no other call names. */
  url(route: string): string;
  /** Sends the rest of every held body. */
  releaseHeld(): void;
  close(): Promise<void>;
}

export async function startFileUrlSource(sizes: { heldBytes: number; fileBytes: number; chunkBytes?: number }): Promise<FileUrlSource> {
  const { heldBytes, fileBytes, chunkBytes = fileBytes } = sizes;
  const held: ServerResponse[] = [];
  const serve = (url: string, res: ServerResponse): void => {
    if (url.startsWith('/missing')) {
      res.writeHead(404).end();
    } else if (url.startsWith('/held/')) {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': heldBytes });
      res.write(Buffer.alloc(heldBytes / 2, 1));
      held.push(res);
    } else if (url.startsWith('/chunked/')) {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      let sent = 0;
      const next = (): void => {
        if (res.destroyed || sent >= fileBytes) return void res.end();
        sent += chunkBytes;
        res.write(Buffer.alloc(chunkBytes, 2));
        setTimeout(next, 20);
      };
      next();
    } else {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': fileBytes });
      res.end(Buffer.alloc(fileBytes, 3));
    }
  };
  const server = createServer((req, res) => serve(req.url ?? '/', res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const releaseHeld = () => held.splice(0).forEach((res) => res.end(Buffer.alloc(heldBytes / 2, 1)));
  return {
    base,
    url: (route) => `${base}/${route}/${Math.random().toString(36).slice(2)}.bin`,
    releaseHeld,
    close: async () => {
      releaseHeld();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
