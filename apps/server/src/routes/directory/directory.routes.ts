// The agents and channel targets lists (read-only): routes from the spec (generated); their
// permission is enforced for every operation by http/auth.ts `authorize`.

export {
  agentsListRoute as agentsList,
  channelTargetsListRoute as channelTargetsList,
} from '../../generated/routes.js';
