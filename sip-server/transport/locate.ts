// RFC 3263 server location lives in core/sip/locate.ts (media-app resolves customer SIP destinations
// the same way before the egress check).
export { locate, pickSrv, systemResolver, type Located, type SipResolver } from '../../core/sip/locate';
