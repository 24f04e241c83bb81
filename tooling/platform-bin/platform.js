#!/usr/bin/env node
// `pnpm platform …`: the admin CLI's own entry (it brings the server's build up to date first).
require('../../apps/server/bin/platform.js');
