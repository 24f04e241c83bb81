'use strict';
// `node --require @platform/hermetic/register`: installs the hermetic guard before anything
// else runs. enforceForRun() puts this in NODE_OPTIONS so every child process gets it.
require('./index').install();
