/**
 * The error envelope of the versioned API (spec: Errors): `{"error": {status, reason, message,
 * request_id, details?}}`. Reasons are append-only; each has one HTTP code and a default status.
 */

export const STATUS_HTTP = {
  INVALID_ARGUMENT: 400,
  UNAUTHENTICATED: 401,
  PAYMENT_REQUIRED: 402,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  FAILED_PRECONDITION: 409,
  RESOURCE_EXHAUSTED: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;
export type ErrorStatus = keyof typeof STATUS_HTTP;

/** Every reason code of the spec's table, with its HTTP status and canonical status. */
export const REASONS = {
  AUTHENTICATION_REQUIRED: [401, 'UNAUTHENTICATED'],
  INVALID_CREDENTIALS: [401, 'UNAUTHENTICATED'],
  ACCOUNT_DELETED: [403, 'PERMISSION_DENIED'],
  ACCOUNT_EXPIRED: [403, 'PERMISSION_DENIED'],
  ACCOUNT_FROZEN: [403, 'PERMISSION_DENIED'],
  PERMISSION_DENIED: [403, 'PERMISSION_DENIED'],
  DIRECT_ACCESS_NOT_SUPPORTED: [403, 'PERMISSION_DENIED'],
  IDENTITY_VERIFICATION_REQUIRED: [403, 'PERMISSION_DENIED'],
  RATE_LIMIT_EXCEEDED: [429, 'RESOURCE_EXHAUSTED'],
  RESOURCE_NOT_FOUND: [404, 'NOT_FOUND'],
  ROUTE_NOT_FOUND: [404, 'NOT_FOUND'],
  INVALID_ARGUMENT: [400, 'INVALID_ARGUMENT'],
  INVALID_JSON_BODY: [400, 'INVALID_ARGUMENT'],
  INVALID_ID: [400, 'INVALID_ARGUMENT'],
  INVALID_REQUEST_PARAMETER: [400, 'INVALID_ARGUMENT'],
  MISSING_REQUEST_PARAMETER: [400, 'INVALID_ARGUMENT'],
  STATE_INVALID: [409, 'FAILED_PRECONDITION'],
  INSUFFICIENT_BALANCE: [402, 'PAYMENT_REQUIRED'],
  REQUEST_TIMEOUT: [503, 'UNAVAILABLE'],
  REQUEST_CANCELED: [503, 'UNAVAILABLE'],
  SERVICE_UNAVAILABLE: [503, 'UNAVAILABLE'],
  INTERNAL: [500, 'INTERNAL'],
  CALL_NOT_FOUND: [404, 'NOT_FOUND'],
  CALL_ALREADY_HANGUP: [409, 'FAILED_PRECONDITION'],
  CALL_STATE_INVALID: [409, 'FAILED_PRECONDITION'],
  GROUPCALL_NOT_FOUND: [404, 'NOT_FOUND'],
  RECORDING_NOT_FOUND: [404, 'NOT_FOUND'],
  RECORDING_ALREADY_ACTIVE: [409, 'FAILED_PRECONDITION'],
  RECORDING_NOT_ACTIVE: [409, 'FAILED_PRECONDITION'],
  FLOW_NOT_FOUND: [404, 'NOT_FOUND'],
  ACTIVEFLOW_NOT_FOUND: [404, 'NOT_FOUND'],
  FLOW_STATE_INVALID: [409, 'FAILED_PRECONDITION'],
  ACTIVEFLOW_ALREADY_STOPPED: [409, 'FAILED_PRECONDITION'],
  BILLING_NOT_FOUND: [404, 'NOT_FOUND'],
  BILLING_ACCOUNT_NOT_FOUND: [404, 'NOT_FOUND'],
  NUMBER_NOT_FOUND: [404, 'NOT_FOUND'],
  PROVIDER_NOT_FOUND: [404, 'NOT_FOUND'],
  TRUNK_NOT_FOUND: [404, 'NOT_FOUND'],
  PROVIDERCALL_NOT_FOUND: [404, 'NOT_FOUND'],
  ACCOUNT_NOT_FOUND: [404, 'NOT_FOUND'],
  FILE_NOT_FOUND: [404, 'NOT_FOUND'],
  SIGNING_NOT_CONFIGURED: [503, 'UNAVAILABLE'],
  CONVERSATION_ACCOUNT_NOT_FOUND: [404, 'NOT_FOUND'],
  CONVERSATION_NOT_FOUND: [404, 'NOT_FOUND'],
  MESSAGE_NOT_FOUND: [404, 'NOT_FOUND'],
  EMAIL_NOT_FOUND: [404, 'NOT_FOUND'],
  AIMESSAGE_NOT_FOUND: [404, 'NOT_FOUND'],
  AI_NOT_FOUND: [404, 'NOT_FOUND'],
  // Additions (append-only): duplicate create, oversized body.
  ALREADY_EXISTS: [409, 'ALREADY_EXISTS'],
  PAYLOAD_TOO_LARGE: [413, 'INVALID_ARGUMENT'],
  // a Range of a file download starting past its end (RFC 9110 §15.5.17)
  RANGE_NOT_SATISFIABLE: [416, 'INVALID_ARGUMENT'],
} as const satisfies Record<string, readonly [number, ErrorStatus]>;
export type Reason = keyof typeof REASONS;

export type ErrorDetail = Record<string, unknown>;

export interface ErrorEnvelope {
  error: {
    status: ErrorStatus;
    reason: string;
    message: string;
    request_id: string;
    details?: ErrorDetail[];
  };
}

export class ApiError extends Error {
  readonly reason: Reason;
  readonly status: ErrorStatus;
  readonly http: number;
  readonly details?: ErrorDetail[];
  /** Extra response headers (Retry-After...). */
  readonly headers?: Record<string, string>;

  constructor(reason: Reason, message: string, opts: { details?: ErrorDetail[]; headers?: Record<string, string>; status?: ErrorStatus } = {}) {
    super(message);
    this.name = 'ApiError';
    const [http, status] = REASONS[reason];
    this.reason = reason;
    this.http = http;
    this.status = opts.status ?? status;
    this.details = opts.details && opts.details.length > 0 ? opts.details : undefined;
    this.headers = opts.headers;
  }

  toEnvelope(requestId: string): ErrorEnvelope {
    const body: ErrorEnvelope = {
      error: { status: this.status, reason: this.reason, message: this.message, request_id: requestId },
    };
    if (this.details) body.error.details = this.details;
    return body;
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

// Helpers, named after what went wrong.
export const notFound = (reason: Reason = 'RESOURCE_NOT_FOUND', message = 'resource not found') => new ApiError(reason, message);
export const invalidArgument = (message: string, details?: ErrorDetail[]) => new ApiError('INVALID_ARGUMENT', message, { details });
export const invalidId = (field = 'id') => new ApiError('INVALID_ID', `${field} is not a UUID`, { details: [{ field }] });
export const invalidParameter = (field: string, message: string) => new ApiError('INVALID_REQUEST_PARAMETER', message, { details: [{ field }] });
export const missingParameter = (field: string) => new ApiError('MISSING_REQUEST_PARAMETER', `${field} is required`, { details: [{ field }] });
export const authenticationRequired = () => new ApiError('AUTHENTICATION_REQUIRED', 'no token or accesskey given');
export const invalidCredentials = (message = 'token or accesskey invalid or expired') => new ApiError('INVALID_CREDENTIALS', message);
export const permissionDenied = (message = 'permission denied') => new ApiError('PERMISSION_DENIED', message);
export const directAccessNotSupported = () => new ApiError('DIRECT_ACCESS_NOT_SUPPORTED', 'this endpoint needs a login token');
export const stateInvalid = (message: string) => new ApiError('STATE_INVALID', message);
export const alreadyExists = (message: string) => new ApiError('ALREADY_EXISTS', message);
export const internal = (message = 'internal error') => new ApiError('INTERNAL', message);
export const serviceUnavailable = (message = 'service unavailable') => new ApiError('SERVICE_UNAVAILABLE', message);
export const rateLimited = (limitedBy: 'ip' | 'customer', retryAfterSec: number) =>
  new ApiError('RATE_LIMIT_EXCEEDED', 'rate limit exceeded', {
    details: [{ limited_by: limitedBy }],
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) },
  });
