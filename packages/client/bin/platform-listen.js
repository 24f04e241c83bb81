#!/usr/bin/env node
// `platform-listen`: the command built from cli/ (a file of its own, so that installing the
// workspace links the bin before anything is built).
require('../dist/listen.js');
