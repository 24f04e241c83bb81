'use strict';
/** The live harness as a library: the CLI's parts, for tests and other runners. */
module.exports = {
  ...require('./fixtures'),
  ...require('./junit'),
  main: require('./cli').main,
};
