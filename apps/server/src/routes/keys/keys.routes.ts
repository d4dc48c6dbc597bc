// The calling API key: a route from the spec (generated). Its `x-agentline-permission` is `none`,
// so http/auth.ts `authorize` lets every authenticated key through, a parked one included.

export { keysCurrentRoute as keysCurrent } from '../../generated/routes.js';
