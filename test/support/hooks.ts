// Loaded by mocha before every suite (see .mocharc.json): keeps test logs quiet unless asked for.
process.env.LOG_LEVEL ??= 'silent';
process.env.NODE_ENV ??= 'test';
// The processes tests spawn (sip-server, media-app) would otherwise all open their metrics listener on
// the same fixed default port; a test that wants one names a free port (test/observability/).
process.env.SIP_METRICS_LISTEN ??= 'off';
process.env.MEDIA_APP_METRICS_LISTEN ??= 'off';
