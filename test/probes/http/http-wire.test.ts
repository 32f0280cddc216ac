/**
 * The http probe's HTTP/1.1 response reader: framing rules, fed whole and byte by byte (a
 * socket may split an answer anywhere), and malformed answers.
 */
import { describe, expect, it } from 'vitest';
import { getRequest, HttpProtocolError, type ResponseDone, ResponseReader } from '../../../probes/http/http-wire.js';

/** Feed `text` in pieces of `step` bytes; the result and how many bytes it took. */
function read(text: string, step = Number.POSITIVE_INFINITY): { done?: ResponseDone; fedBytes: number } {
  const buf = Buffer.from(text, 'latin1');
  const r = new ResponseReader();
  for (let at = 0; at < buf.length; at += Math.min(step, buf.length)) {
    const done = r.feed(buf.subarray(at, at + Math.min(step, buf.length)));
    if (done) return { done, fedBytes: at + Math.min(step, buf.length) };
  }
  return { fedBytes: buf.length };
}

const body = (n: number): string => 'x'.repeat(n);

describe('ResponseReader', () => {
  const cases: [string, string, ResponseDone][] = [
    [
      'content-length',
      `HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n${body(5)}`,
      { status: 200, bodyBytes: 5, reusable: true },
    ],
    ['empty body', 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', { status: 200, bodyBytes: 0, reusable: true }],
    [
      'connection: close on 1.1',
      `HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\n${body(3)}`,
      { status: 200, bodyBytes: 3, reusable: false },
    ],
    [
      'keep-alive on 1.0',
      `HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\n${body(2)}`,
      { status: 200, bodyBytes: 2, reusable: true },
    ],
    [
      '1.0 without keep-alive',
      `HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n${body(2)}`,
      { status: 200, bodyBytes: 2, reusable: false },
    ],
    [
      'chunked with extension and trailer',
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\n${body(4)}\r\nA\r\n${body(10)}\r\n0\r\nX-Trailer: y\r\n\r\n`,
      { status: 200, bodyBytes: 14, reusable: true },
    ],
    ['204 has no body', 'HTTP/1.1 204 No Content\r\n\r\n', { status: 204, bodyBytes: 0, reusable: true }],
    [
      '304 ignores content-length',
      'HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n',
      { status: 304, bodyBytes: 0, reusable: true },
    ],
    [
      'interim 100 then the answer',
      `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx`,
      { status: 201, bodyBytes: 1, reusable: true },
    ],
    [
      'repeated equal content-length',
      `HTTP/1.1 404 Not Found\r\nContent-Length: 2, 2\r\n\r\nno`,
      { status: 404, bodyBytes: 2, reusable: true },
    ],
  ];
  for (const [name, text, want] of cases) {
    it(`${name}: whole and byte by byte`, () => {
      const whole = read(text);
      expect(whole.done).toEqual(want);
      const split = read(text, 1);
      expect(split.done).toEqual(want);
      // It finishes on the last byte, not before.
      expect(split.fedBytes).toBe(Buffer.byteLength(text, 'latin1'));
    });
  }

  it('reads until close when there is no length', () => {
    const r = new ResponseReader();
    expect(r.feed(Buffer.from('HTTP/1.1 200 OK\r\nServer: x\r\n\r\nabc'))).toBeUndefined();
    expect(r.feed(Buffer.from('de'))).toBeUndefined();
    expect(r.end()).toEqual({ status: 200, bodyBytes: 5, reusable: false });
  });

  it('a close before the body ends, or before a head, is an error', () => {
    const a = new ResponseReader();
    expect(a.started).toBe(false);
    expect(() => a.end()).toThrow(/before a complete head/);
    const b = new ResponseReader();
    b.feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    expect(b.started).toBe(true);
    expect(() => b.end()).toThrow(/before the end of the body/);
    const c = new ResponseReader();
    c.feed(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab'));
    expect(() => c.end()).toThrow(HttpProtocolError);
  });

  const bad: [string, string, RegExp][] = [
    ['not HTTP', 'SSH-2.0-OpenSSH_9.2\r\n\r\n', /not an HTTP\/1.x status line/],
    ['HTTP/2 preface answer', 'HTTP/2 200\r\n\r\n', /not an HTTP\/1.x status line/],
    ['header without colon', 'HTTP/1.1 200 OK\r\nbroken\r\n\r\n', /malformed header line/],
    ['conflicting lengths', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n', /bad content-length/],
    ['negative length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', /bad content-length/],
    ['gzip transfer-encoding', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n', /unsupported transfer-encoding/],
    ['bad chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /bad chunk size line/],
    [
      'chunk without CRLF',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY\r\n',
      /missing CRLF after chunk data/,
    ],
    ['bytes after the answer', 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy', /bytes after the end/],
  ];
  for (const [name, text, msg] of bad) {
    it(`rejects ${name}`, () => {
      expect(() => read(text)).toThrow(msg);
      expect(() => read(text)).toThrow(HttpProtocolError);
    });
  }

  it('refuses a head that never ends', () => {
    const r = new ResponseReader();
    r.feed(Buffer.from('HTTP/1.1 200 OK\r\n'));
    expect(() => r.feed(Buffer.from(`X-Big: ${'a'.repeat(70 * 1024)}\r\n`))).toThrow(/head longer than/);
  });

  it('finds the end of the head when CRLFCRLF is split across chunks', () => {
    const r = new ResponseReader();
    expect(r.feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r'))).toBeUndefined();
    expect(r.feed(Buffer.from('\n'))).toBeUndefined();
    expect(r.feed(Buffer.from('z'))).toEqual({ status: 200, bodyBytes: 1, reusable: true });
  });
});

describe('getRequest', () => {
  it('builds a GET with Host and the connection choice', () => {
    expect(getRequest('/bytes/10', 'svc.local:8080', false).toString()).toBe(
      'GET /bytes/10 HTTP/1.1\r\nHost: svc.local:8080\r\nUser-Agent: pathbench\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n',
    );
    expect(getRequest('/', '[fd00::1]:80', true).toString()).toContain('\r\nConnection: close\r\n');
  });

  it('refuses header injection in the path or the Host', () => {
    expect(() => getRequest('/a\r\nX: y', 'h', false)).toThrow(/bad request path/);
    expect(() => getRequest('/a', 'h\r\nX: y', false)).toThrow(/bad Host header/);
    expect(() => getRequest('a', 'h', false)).toThrow(/bad request path/);
  });
});
