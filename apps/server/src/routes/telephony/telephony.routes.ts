// The telephony contract: the routes come from the spec (generated); their permission is enforced
// for every operation by http/auth.ts `authorize`.

export {
  channelsTelephonyNumbersA2pStatusRoute as channelsTelephonyNumbersA2pStatus,
  channelsTelephonyNumbersVerifyA2pComplianceRoute as channelsTelephonyNumbersVerifyA2pCompliance,
} from '../../generated/routes.js';
