/**
 * Requests Node's HTTP parser refuses before express runs (headers or request line over the 16 KB
 * limit, malformed HTTP) still get an answer in the spec's error envelope, then the socket closes.
 * Without this Node writes a bare 431/400 with an empty body. A socket the client already reset is
 * only destroyed. `answerClientErrors` also guards every socket of the server (core/net/socket-guard).
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { guardServer } from '../core/net/socket-guard';
import { newRequestId } from './middleware/request-id';

export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage || err.code === 'ECONNRESET' || err.code === 'EPIPE') {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const id = newRequestId();
  const body = JSON.stringify({
    error: {
      status: 'INVALID_ARGUMENT',
      reason: 'INVALID_ARGUMENT',
      message: tooLarge ? 'the request line or headers are larger than 16 KB' : 'the request is not valid HTTP',
      request_id: id,
    },
  });
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Guards every socket of the API server and answers its parse errors with the envelope. Call before listen(). */
export function answerClientErrors(server: http.Server): void {
  guardServer(server, { clientError: answerClientError });
}
