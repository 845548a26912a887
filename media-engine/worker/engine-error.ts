/** An Engine operation's refusal: the message and a code the API thread's promise rejects with. */
export class EngineError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}
