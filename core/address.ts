/**
 * The Address of the spec (platform-api.md "Address"): a call's source and destination, a message's
 * source and targets, a groupcall's destinations, a flow's connect targets. Only `type` and `target`
 * are required. The one declaration core, control-api and media-app use; web/ (bundled on its own,
 * importing nothing outside it) keeps a copy that test/architecture/shapes.test.ts holds to this one.
 */
export interface Address {
  /** agent, ai, ai_team, conference, email, extension, line, sip, tel, webchat, web_session, whatsapp */
  type: string;
  target: string;
  /** caller ID name for tel; the routing key for extension */
  target_name?: string;
  name?: string;
  detail?: string;
}
