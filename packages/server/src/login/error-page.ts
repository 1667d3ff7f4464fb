/** The hosted error page: for requests that cannot be answered to a client (unknown client, bad redirect URI). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProtocolError } from '../http/errors.js';
import { sendHostedPage } from './hosted-page.js';
import { renderErrorPage } from './pages/message.js';

export function sendErrorPage(reply: FastifyReply, request: FastifyRequest, error: ProtocolError): FastifyReply {
  request.log.info({ error: error.code }, 'error page shown');
  return sendHostedPage(
    reply,
    request.tenant,
    (context) => renderErrorPage(context, { title: 'Something went wrong', error: error.code, description: error.description, requestId: request.id }),
    { status: error.statusCode >= 500 ? error.statusCode : 400 },
  );
}
