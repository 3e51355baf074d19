import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorRegistry, type ErrorCode } from '../../contract/common/errors.ts';
import type { ErrorEnvelope } from '../../contract/common/envelope.ts';
import type { Logger } from '../infra/logger.ts';

/** Node's HTTP parser codes, and what the client is told for each. */
function classify(code: string | undefined): { code: ErrorCode; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'HEADERS_TOO_LARGE', message: errorRegistry.HEADERS_TOO_LARGE.message };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'REQUEST_TIMEOUT', message: errorRegistry.REQUEST_TIMEOUT.message };
    default:
      return { code: 'VALIDATION_ERROR', message: 'The request is not valid HTTP' };
  }
}

/**
 * Requests Node refuses before Express sees them (headers over `maxHeaderSize`,
 * malformed HTTP, a client too slow to send its request) get the error envelope
 * too, instead of Node's bare status line. There is no request object here, so
 * the answer is written to the socket directly and the connection closed.
 */
export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { code, message } = classify(err.code);
    const status = errorRegistry[code].status;
    const requestId = `req_${randomUUID().replace(/-/g, '')}`;
    const body: ErrorEnvelope = { success: false, error: message, errors: [{ code, message, field: null }], request_id: requestId };
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(text)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        // The same headers every Express answer carries (http/security-headers.ts).
        'X-Content-Type-Options: nosniff\r\n' +
        'Cache-Control: no-store\r\n' +
        'Connection: close\r\n\r\n' +
        text,
    );
    logger.info({ request_id: requestId, parser_code: err.code ?? null, status }, 'request refused by the HTTP parser');
  });
}
