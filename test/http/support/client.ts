import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';

/** A response as the scenarios read it. */
export interface Reply {
  status: number;
  headers: Headers;
  body: string;
}

/** One real HTTP request with fetch (undici), connection from 127.0.0.1. */
export async function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  const response = await fetch(url, init);
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** POST a JSON body. */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return send(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/**
 * One real HTTP request from a chosen loopback source address. fetch cannot bind a local
 * address without an undici Agent (not a dependency here), so this uses node:http.
 */
export function sendFrom(localAddress: string, url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        const out = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) out.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        resolve({ status: res.statusCode ?? 0, headers: out, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Raw bytes over TCP, for what fetch refuses to send (the same header line repeated).
 * Resolves with the status code of the reply (0 when the server closed without one).
 */
export function sendRaw(port: number, head: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)));
    socket.write(Buffer.from(head, 'latin1')); // the request says Connection: close; the server ends the socket
  });
}

/**
 * Sends a request and closes the connection without reading the answer once `ready()` says the
 * handler is running (polled every 5 ms). Resolves when the socket is closed.
 */
export function hangUp(url: string, headers: Record<string, string>, ready: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers, agent: false });
    req.on('error', () => {}); // the abort itself
    req.on('close', () => resolve());
    req.end();
    const started = Date.now();
    const poll = setInterval(() => {
      if (ready()) {
        clearInterval(poll);
        req.destroy();
      } else if (Date.now() - started > 5000) {
        clearInterval(poll);
        req.destroy();
        reject(new Error('the handler never ran'));
      }
    }, 5);
  });
}
