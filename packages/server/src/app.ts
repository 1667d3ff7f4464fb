/**
 * Builds the Fastify app. The order below is the order a request meets things:
 *   tenant (Host) → CORS → rate limit → route (schema-validated) → handler → security headers,
 * with every error rendered by http/error-handler.ts in the shape of its family.
 */
import { registerMfaApi } from './auth-api/mfa/index.js';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions } from 'fastify';
import type { LoggerOptions } from 'pino';
import { registerAuthorize } from './auth-api/authorize/index.js';
import { registerSamlp } from './auth-api/samlp/index.js';
import { registerCoAuthenticate } from './auth-api/co/authenticate.js';
import { registerCoVerify } from './auth-api/co/verify.js';
import { registerDbConnections } from './auth-api/dbconnections/index.js';
import { registerDiscovery } from './auth-api/discovery.js';
import { registerJwks } from './auth-api/jwks.js';
import { registerPasswordless } from './auth-api/passwordless/index.js';
import { registerLogout } from './auth-api/logout.js';
import { registerLoginCallback } from './auth-api/login-callback.js';
import { registerSamlpSpMetadata } from './auth-api/samlp-sp-metadata.js';
import { registerSamlLogoutCallback } from './auth-api/saml-logout-callback.js';
import { registerUnblockPage } from './login/unblock-page.js';
import { registerClientScript } from './auth-api/client-script.js';
import { registerUserSsoData } from './auth-api/user-ssodata.js';
import { registerPushedAuthorizationRequests } from './auth-api/par/index.js';
import { registerRevocation } from './auth-api/revoke.js';
import { registerDelegation } from './auth-api/delegation.js';
import { registerTokenEndpoint } from './auth-api/token/index.js';
import { registerUserinfo } from './auth-api/userinfo.js';
import { registerLoginAssets } from './login/assets.js';
import { registerConsentPage } from './login/consent-page.js';
import { registerEmailVerificationPage } from './login/email-verification-page.js';
import { registerLoginPage } from './login/login-page.js';
import { registerFederatedButtons } from './login/federated-buttons.js';
import { registerMfaPage } from './login/mfa-page.js';
import { registerMfaEnrollmentTicketPage } from './login/mfa-enrollment-ticket-page.js';
import { registerPasskeyPage } from './login/passkey-page.js';
import { registerResetPasswordPage } from './login/reset-password-page.js';
import { registerSignupPage } from './login/signup-page.js';
import { registerDevMailbox } from './messaging/dev-mailbox.js';
import { registerApiDocs } from './api-docs.js';
import { lazyChildLoggerFactory } from './logging.js';
import { registerLandingPage } from './login/landing-page.js';
import { registerClientLibrary } from './client-library.js';
import { registerDemo } from './demo.js';
import { registerConsoleAssets } from './console/assets.js';
import { registerConsoleSetupPage } from './login/console-setup-page.js';
import { registerExportDownload } from './jobs/download.js';
import { registerManagementApi } from './management/index.js';
import './fastify-types.js';
import { registerHealth } from './health.js';
import { registerCommonResponses } from './http/common-responses.js';
import { registerMetrics } from './metrics/endpoint.js';
import { registerCors } from './http/cors.js';
import { BODY_LIMIT_BYTES, parseFormBody, registerErrorHandling, sendError } from './http/error-handler.js';
import { countRequestsInFlight } from './http/requests-in-flight.js';
import { registerInputGuards } from './http/input-guards.js';
import { ParserErrors } from './http/parser-errors.js';
import { registerRepeatedHeaderGuard } from './http/repeated-headers.js';
import { registerOpenApi } from './http/openapi.js';
import { buildSerializer } from './http/serializers.js';
import { buildValidator, markFormBody } from './http/validators.js';
import { registerRateLimit } from './http/rate-limit/plugin.js';
import { createRouteIndex } from './http/route-index.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { applyConnectionTimeouts } from './http/timeouts.js';
import type { App, Services } from './services.js';
import { registerTenancy } from './tenancy/tenant-resolver.js';

export interface AppOptions {
  logger: LoggerOptions | false;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildApp(services: Services, options: AppOptions): Promise<App> {
  const { tls } = services.config;
  // Requests Node's parser refuses, and CONNECT, never reach the router: answered in their family's shape too.
  const parserErrors = new ParserErrors();
  const app = Fastify({
    logger: options.logger,
    // A request's pino child is made when it first logs (logging.ts): most requests never do.
    ...(options.logger !== false && { childLoggerFactory: lazyChildLoggerFactory as unknown as NonNullable<FastifyServerOptions['childLoggerFactory']> }),
    bodyLimit: BODY_LIMIT_BYTES,
    // request.ip is the socket's address unless the connection comes from a listed proxy (X-Forwarded-For).
    trustProxy: services.config.trustedProxies.length > 0 ? services.config.trustedProxies : false,
    // User ids may be up to 255 characters plus a provider prefix, and arrive URL-encoded in paths.
    routerOptions: { maxParamLength: 1000 },
    // Malformed URLs and over-long path parameters are answered by the router itself; render them like any error.
    frameworkErrors: (error, request, reply) => sendError(error, request, reply),
    clientErrorHandler: parserErrors.clientErrorHandler,
    // Unknown properties are refused (400), never silently dropped: schemas say `additionalProperties: false`
    // where the contract does. JSON bodies are never coerced; text (query, path, form bodies) is read strictly
    // as the schema's type (http/validators.ts).
    schemaController: { compilersFactory: { buildSerializer, buildValidator } },
    ajv: { customOptions: { removeAdditional: false, useDefaults: true, allErrors: false } },
    // Keep a caller's request id when it is sane, so logs line up across a proxy; otherwise make one.
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // The same app serves HTTP or HTTPS; Fastify's types assume http.Server, which is all it calls.
    // With a serverFactory Fastify leaves the server's timeouts alone, so they are set here (http/timeouts.ts).
    serverFactory: (handler) =>
      applyConnectionTimeouts(
        (tls
          ? https.createServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, handler)
          : http.createServer(handler)) as http.Server,
        services.config.keepAliveTimeoutMs,
      ),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // First, so that every other hook and handler runs inside the request's span.
  services.tracing?.instrument(app);
  const routes = createRouteIndex(app);
  parserErrors.attach(app.server, routes, app.log);
  countRequestsInFlight(app.server);
  // Every route is documented as it is registered: its own responses plus those of its family (/openapi.json).
  registerCommonResponses(app);
  await registerOpenApi(app);

  // JSON (Fastify's parser) and form bodies only; anything else is a 415. An empty body labelled JSON is no body,
  // as the reference and Express's parser take it: many HTTP clients send `content-type: application/json` on every
  // request, DELETE and rotate-secret included. A route that needs a body still says so through its schema.
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    parseJson(request, body as string, done);
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, markFormBody(parseFormBody(body as string)));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  registerErrorHandling(app, routes);
  registerRepeatedHeaderGuard(app);
  registerTenancy(app, services.tenants);
  registerCors(app, routes);
  registerRateLimit(app, services.rateLimitStore);
  registerInputGuards(app);
  registerSecurityHeaders(app, { https: Boolean(tls) });

  registerMetrics(app, services);
  registerHealth(app, services);
  registerDiscovery(app);
  registerJwks(app, services);
  registerTokenEndpoint(app, services);
  registerUserinfo(app, services);
  registerRevocation(app, services);
  registerDelegation(app, services);
  registerMfaApi(app, services);
  registerPushedAuthorizationRequests(app, services);
  // Signing users in: /authorize, the hosted pages it leads to, and logout.
  await app.register(cookie);
  registerAuthorize(app, services);
  registerLoginCallback(app, services);
  registerClientScript(app, services);
  registerUserSsoData(app, services);
  registerSamlp(app, services);
  registerSamlpSpMetadata(app, services);
  registerSamlLogoutCallback(app, services);
  registerCoAuthenticate(app, services);
  registerCoVerify(app, services);
  registerLoginPage(app, services);
  registerFederatedButtons(app, services);
  registerMfaPage(app, services);
  registerMfaEnrollmentTicketPage(app, services);
  registerPasskeyPage(app, services);
  registerSignupPage(app, services);
  registerConsentPage(app, services);
  registerResetPasswordPage(app, services);
  registerEmailVerificationPage(app, services);
  registerDbConnections(app, services);
  registerDevMailbox(app, services);
  registerLoginAssets(app);
  registerLogout(app, services);
  registerUnblockPage(app, services);
  registerPasswordless(app, services);
  registerClientLibrary(app);
  registerDemo(app, services);
  registerConsoleAssets(app, services);
  registerConsoleSetupPage(app, services);
  await registerManagementApi(app, services);
  registerExportDownload(app, services);
  registerApiDocs(app);
  registerLandingPage(app, services);

  return app;
}
