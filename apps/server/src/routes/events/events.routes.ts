// The events contract: the route comes from the spec (generated); its permission is enforced for
// every operation by http/auth.ts `authorize`.

export {
  eventsListRoute as eventsList,
  eventsStreamRoute as eventsStream,
} from '../../generated/routes.js';
