// The prompts contract: the route comes from the spec (generated); its permission is enforced for
// every operation by http/auth.ts `authorize`.

export { promptsListRoute as promptsList } from '../../generated/routes.js';
