// Loaded by mocha before every suite (see .mocharc.json): keeps test logs quiet unless asked for.
process.env.LOG_LEVEL ??= 'silent';
process.env.NODE_ENV ??= 'test';
