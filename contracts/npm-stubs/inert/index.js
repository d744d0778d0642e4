"use strict";
// See package.json: every property is a function that does nothing.
module.exports = new Proxy(function inert() {}, {
  get: (target, name) => (name === "__esModule" ? undefined : function inert() {}),
});
